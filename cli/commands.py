"""One ``cmd_<command>`` per ``pmask`` command: each turns the parsed arguments into library
settings, makes one library call and returns what it has to say as an
:class:`~pmask.cli.logs.Outcome` (at most 30 lines each). No command prints: ``main`` routes the
outcome (data on stdout, messages on stderr; :func:`pmask.cli.logs.deliver`).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pmask.cli.args import reads_impacts
from pmask.cli.logs import Outcome
from pmask.common.errors import SettingError
from pmask.common.files import is_stdout
from pmask.common.labels import plural
from pmask.common.options import metric_pipeline
from pmask.corpora.spec import CorpusSpec
from pmask.eval.bench.run import BenchSettings, run_bench
from pmask.eval.compare import evaluate_files
from pmask.eval.hoover_uuas import hoover_uuas_files
from pmask.eval.html import ReportOptions, build_report
from pmask.eval.impact_maps import draw_impact_maps
from pmask.eval.sweep import sweep_probes
from pmask.perturb.engine.settings import ImpactSettings
from pmask.perturb.models.spec import ModelSpec
from pmask.perturb.source import ImpactSource, build_store, is_store
from pmask.perturb.store import export_store
from pmask.perturb.store.info import describe_store_info, store_info
from pmask.trees.induce import ParseSettings, parse_corpus
from pmask.trees.registry import decoding_defaults
from pmask.trees.tasks import default_decoder

# ---------------------------------------------------------------------------- shared helpers

def _corpus(args: argparse.Namespace, path: Path) -> CorpusSpec:
    return CorpusSpec(path, args.format, limit=args.limit, max_words=args.max_words)


def _model(args: argparse.Namespace) -> ModelSpec:
    probe = args.probe if isinstance(args.probe, str) else None   # a list (--probes): chosen per probe
    spec = ModelSpec(args.model, random_init=args.random_init, impact=ImpactSettings(args.metric, args.subword,
                     args.tokenize, probe, args.context), device=args.device, dtype=args.dtype,
                     batch_tokens=args.batch_tokens, threads=args.threads, head=args.head)
    source = getattr(args, "source", None)
    corpus = source if source is not None else getattr(args, "input", None)
    if args.context and corpus is not None and str(corpus) == "-":
        raise SettingError("{context} takes neighbouring sentences from the corpus file, which standard input is not; "
                           "give the corpus as a file")
    faithful = getattr(args, "faithful", False) and not (source and is_store(source))   # a store has its metric
    return spec.for_faithful() if faithful else spec


def _impact_source(args: argparse.Namespace) -> ImpactSource:
    return ImpactSource.open(_corpus(args, args.source), model=_model(args), store=getattr(args, "store", None),
                             corpus=getattr(args, "corpus", None), progress=not args.quiet,
                             allow_incomplete=True)   # heatmap: maps of single sentences (warned when unfinished)


def _command_line() -> list[str] | None:
    return ["pmask", *sys.argv[1:]] if sys.argv else None


# ---------------------------------------------------------------------------- commands

def cmd_impact(args: argparse.Namespace) -> Outcome:
    run = build_store(_corpus(args, args.input), _model(args), args.output, layers=args.layers,
                      resume=args.resume, overwrite=args.overwrite, progress=not args.quiet,
                      shard_seconds=args.shard_seconds)
    return Outcome(summary=run.describe() if run.is_main else None)   # under torchrun, rank 0 alone reports


def cmd_parse(args: argparse.Namespace) -> Outcome:
    needs_model = reads_impacts(args)   # baselines read only the corpus (a store's own corpus)
    source = ImpactSource.open(_corpus(args, args.source), model=_model(args) if needs_model else None,
                               store=args.store if needs_model else None, corpus=args.corpus,
                               progress=not args.quiet, allow_incomplete=args.allow_incomplete)
    probe = str(source.impact_settings().get("probe")) if needs_model else None
    metric = source.impact_settings().get("metric") if args.faithful and needs_model else None
    default = None if metric_pipeline(metric) else default_decoder(source.sentences, probe)   # the metric's pipeline's
    decoder, symmetrize = decoding_defaults(metric, args.decoder, args.symmetrize, default)
    settings = ParseSettings(decoder=str(decoder), layer=args.layer, root=args.root, faithful=args.faithful,
                             multiroot=args.multiroot, seed=args.seed, bias=args.bias, absolute=args.absolute,
                             symmetrize=symmetrize)
    result = parse_corpus(source, args.output, settings, deprel=args.deprel, command=_command_line())
    return Outcome(summary=result.describe())


def cmd_eval(args: argparse.Namespace) -> Outcome:
    result = evaluate_files(args.pred, args.gold, punct=args.punct, baselines=args.baselines, root=args.root,
                            seed=args.seed, max_words=args.max_words, subtypes=args.subtypes)
    assert result.table is not None   # evaluate_files always builds the table
    table = result.table.to_markdown()
    if args.details and result.task == "dependency":
        table += "\n" + result.details_text()
    if args.hoover_uuas:
        table += "\n" + hoover_uuas_files(args.pred, args.gold, max_words=args.max_words).describe()
    if args.json:
        result.write_json(args.json)
    if args.csv:
        result.table.write_csv(args.csv)
    return Outcome(table=table)


def cmd_heatmap(args: argparse.Namespace) -> Outcome:
    paths = draw_impact_maps(_impact_source(args), args.sentence, args.output, layer=args.layer, gold=args.gold,
                             fmt=args.fmt, pred=args.pred)
    return Outcome(summary=f"wrote {plural(len(paths), 'heatmap')}: {paths[0]}" + (" …" if len(paths) > 1 else ""))


def cmd_sweep(args: argparse.Namespace) -> Outcome:
    decoder, symmetrize = decoding_defaults(args.metric if args.faithful else None, args.decoder, args.symmetrize)
    result = sweep_probes(_corpus(args, args.source), _model(args), args.probe, store=args.store, corpus=args.corpus,
                          progress=not args.quiet, layers=args.layers, decoder=decoder, root=args.root,
                          faithful=args.faithful, punct=args.punct, seed=args.seed, baselines=args.baselines,
                          label=args.source, bias=args.bias, allow_incomplete=args.allow_incomplete,
                          symmetrize=symmetrize, absolute=args.absolute)
    if args.plot:
        result.plot(args.plot)
    if args.json:
        result.sweep.write_json(args.json)
    if args.csv:
        result.sweep.write_csv(args.csv)
    return Outcome(table=result.sweep.to_markdown(), summary=f"wrote {args.plot}" if args.plot else None)


def cmd_export(args: argparse.Namespace) -> Outcome:
    layers = None if args.layers in (None, "all") else args.layers
    paths = export_store(args.store, args.output, args.format, layers=layers)
    return Outcome(summary=f"wrote {plural(len(paths), 'file')} to {args.output}")


def cmd_report(args: argparse.Namespace) -> Outcome:
    path = build_report(args.pred, args.gold, args.output,
                        ReportOptions(store=args.store, bench=args.bench, punct=args.punct, title=args.title,
                                      max_words=args.max_words))
    size = "" if is_stdout(path) else f" ({path.stat().st_size / 1e6:.1f} MB)"   # `-o -` leaves no file to measure
    return Outcome(summary=f"wrote {path}{size}")


def cmd_bench(args: argparse.Namespace) -> Outcome:
    settings = BenchSettings(
        model=_model(args), layers=args.layers, root=args.root, limit=args.limit, punct=args.punct, seed=args.seed,
        decoders=[d.strip() for d in args.decoders.split(",") if d.strip()] if args.decoders else None,
        probes=args.probe, metrics=args.metrics, bias=args.bias, max_words=args.max_words,
        symmetrize=args.symmetrize or "none", absolute=args.absolute)
    result = run_bench(args.inputs, args.output, settings, progress=not args.quiet, rescore=args.rescore)
    if not result.is_main:   # under torchrun, rank 0 alone scores, writes and reports
        return Outcome()
    return Outcome(table=result.to_markdown(), summary=result.describe(args.output))


def cmd_info(args: argparse.Namespace) -> Outcome:
    info = store_info(args.store)
    return Outcome(table=json.dumps(info, indent=1, ensure_ascii=False) if args.json else describe_store_info(info))
