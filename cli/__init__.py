"""The ``pmask`` command: thin wrappers over library functions that return data.

Holds the argument parsers (:mod:`.args`: the shared option groups) and one ``cmd_<command>``
per command, each a few lines over one library call. Exit codes: 0 ok, 1 failure (a one-line
``pmask: error: …`` on stderr), 2 usage error. May import every wing; nothing imports it.
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import Sequence

from pmask.common.version import __version__
from pmask.common.errors import HelperRankDone, PmaskError, SettingError
from pmask.common.files import refuse_overwriting_inputs
from pmask.eval.bench.run import BenchSettings, run_bench
from pmask.eval.compare import evaluate_files
from pmask.eval.heatmap import HEATMAP_FORMATS
from pmask.eval.html import ReportOptions, build_report
from pmask.trees.induce import ParseSettings, parse_corpus
from pmask.eval.impact_maps import draw_impact_maps
from pmask.perturb.store import EXPORT_FORMATS, export_store
from pmask.cli.args import (HelpFormatter, MAX_WORDS_HELP, PROBE_FLAGS, add_decoder, add_decoders, add_input, add_model,
                            add_root, command, layers_arg, positive_int)
from pmask.common.options import PUNCT_MODES, ROOT_MODES
from pmask.corpora.spec import CorpusSpec
from pmask.perturb.impact_source import ImpactSource, build_store
from pmask.perturb.model_spec import ModelSpec
from pmask.eval.sweep import sweep_probes
from pmask.trees.registry import decoder_names, decoder_needs_model

#: How library setting names are spelled on the command line (for :class:`SettingError` messages).
FLAGS = {"root": "--root", "faithful": "--faithful", "model": "--model", "corpus": "--corpus",
         "sentence": "--sentence", "layer": "--layer", "layers": "--layers", "decoder": "--decoder",
         "metric": "--metric", "subword": "--subword", "limit": "--limit", "max_words": "--max-words",
         "resume": "--resume", "overwrite": "--overwrite", "multiroot": "--multiroot", "store": "--store",
         "punct": "--punct", "output": "--output", **PROBE_FLAGS}


# ---------------------------------------------------------------------------- argument parsing

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pmask", formatter_class=HelpFormatter,
        description="Induce syntax from masked language models with Perturbed Masking (Wu et al., ACL 2020).",
        epilog="example:\n  pmask parse en_pud-ud-test.conllu --model bert-base-uncased --root gold -o pud.conllu\n"
               "  pmask eval pud.conllu --gold en_pud-ud-test.conllu --baselines")
    parser.add_argument("--version", action="version", version=f"pmask {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in (_add_impact_parser, _add_parse_parser, _add_eval_parser, _add_heatmap_parser, _add_sweep_parser,
                _add_export_parser, _add_report_parser, _add_bench_parser):
        add(sub)
    return parser


def _add_impact_parser(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub, "impact",
        help="compute impact matrices into a store",
        description="Compute the perturbed-masking impact matrices of a corpus into a store directory "
                    "(safetensors shards + manifest.json). Interrupted runs continue with --resume.",
        epilog="example:\n  pmask impact en_pud-ud-test.conllu --model bert-base-uncased --layers all -o pud-store/")
    p.add_argument("input", type=Path, help="corpus: CoNLL-U, PTB .mrg file or directory, .dp, or text")
    add_input(p)
    add_model(p, required=True)
    p.add_argument("--layers", type=layers_arg, default=[-1],
                   help="layers to keep: 0 = embeddings … L = last, negative from the end, or 'all'")
    again = p.add_mutually_exclusive_group()
    again.add_argument("--resume", action="store_true", help="continue an interrupted store (no work if complete)")
    again.add_argument("--overwrite", action="store_true", help="replace an existing store")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="STORE", help="store directory")
    p.set_defaults(func=cmd_impact)


def _add_parse_parser(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub, "parse",
        help="induce trees (the main job)",
        description="Induce a dependency or constituency tree for every sentence. SOURCE is a corpus (impacts are "
                    "computed with --model, and cached when --store is given) or an impact store. Dependency "
                    "trees are written as CoNLL-U (the input with HEAD replaced), constituency trees as one "
                    "bracketed tree per line. A <OUTPUT>.meta.json beside the output records how it was made.",
        epilog="examples:\n"
               "  pmask parse en_pud-ud-test.conllu --model bert-base-uncased --decoder eisner --root gold -o pud.conllu\n"
               "  pmask parse PUD.conllu --model bert-base-uncased --root gold --faithful -o paper.conllu\n"
               "  pmask parse ptb/combined --max-words 10 --model bert-base-uncased --decoder mart -o wsj10.txt\n"
               "  pmask parse PUD.conllu --decoder right-chain --root gold -o right-chain.conllu")
    p.add_argument("source", type=Path, help="corpus file/directory, or an impact store directory")
    add_input(p)
    add_model(p)
    add_decoder(p, "eisner", "one of: " + ", ".join(decoder_names()))
    p.add_argument("--layer", type=int, default=-1, help="layer whose impacts are decoded (-1 = last)")
    add_root(p)
    p.add_argument("--faithful", action="store_true",
                   help="the authors' pipeline: [CLS] layout, their softmax, multi-child-ROOT Eisner / product CLE")
    p.add_argument("--multiroot", action="store_true", help="allow several words under ROOT (free root only)")
    p.add_argument("--store", type=Path, default=None, metavar="DIR", help="cache impacts in this store (resumable)")
    p.add_argument("--corpus", type=Path, default=None,
                   help="with a store SOURCE: the corpus it was made from (default: the path in its manifest)")
    p.add_argument("--deprel", default="_", choices=("_", "dep"), help="DEPREL written for every word")
    p.add_argument("--seed", type=int, default=0, help="seed of the random baselines")
    p.add_argument("-o", "--output", type=Path, required=True, help="output .conllu or bracket file")
    p.set_defaults(func=cmd_parse)


def _add_eval_parser(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub, "eval",
        help="score predicted trees against gold and the baselines",
        description="Score a predicted CoNLL-U file (UAS, UUAS) or bracket file (sentence-level and corpus-level "
                    "F1) against gold, optionally next to every baseline decoded on the same sentences.",
        epilog="examples:\n  pmask eval pud.conllu --gold en_pud-ud-test.conllu --baselines --json scores.json\n"
               "  pmask eval wsj10.txt --gold ptb/combined --max-words 10 --baselines")
    p.add_argument("pred", type=Path, help="predicted .conllu, or bracketed trees one per line")
    p.add_argument("--gold", type=Path, required=True, help="gold CoNLL-U, or PTB .mrg file/directory")
    p.add_argument("--max-words", type=positive_int, default=None, metavar="N",
                   help=MAX_WORDS_HELP + "; default: the prediction's own, from its .meta.json")
    p.add_argument("--punct", default="include", choices=list(PUNCT_MODES),
                   help="score punctuation words (the paper includes them)")
    p.add_argument("--baselines", action="store_true", help="add every baseline's scores on the same sentences")
    p.add_argument("--root", default=None, choices=sorted(ROOT_MODES),
                   help="root setting of the dependency baselines (default: the prediction's, else gold)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random baselines")
    p.add_argument("--json", type=Path, default=None, metavar="F", help="also write the scores as JSON")
    p.add_argument("--csv", type=Path, default=None, metavar="F", help="also write the table as CSV")
    p.add_argument("--details", action="store_true", help="print breakdowns by relation, arc length and sentence length")
    p.set_defaults(func=cmd_eval)


def _add_heatmap_parser(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub, "heatmap",
        help="draw impact maps (PNG, SVG, PDF or self-contained HTML)",
        description="Draw the impact matrix of one or more sentences, word labels on both axes, optionally with the "
                    "gold arcs. SOURCE is a store or a corpus (then --model computes the matrices).",
        epilog="examples:\n  pmask heatmap pud-store/ --sentence n01001011 --gold en_pud-ud-test.conllu -o s1.png\n"
               "  pmask heatmap en_pud-ud-test.conllu --model bert-base-uncased --sentence 0-9 -o maps/ --as html")
    p.add_argument("source", type=Path, help="impact store directory, or corpus file")
    add_input(p)
    add_model(p)
    p.add_argument("--sentence", "-s", action="append", required=True, metavar="ID|INDEX",
                   help="sentence id, 0-based index or range A-B (repeatable; 'all' for every sentence)")
    p.add_argument("--layer", type=int, default=-1, help="layer to draw (-1 = last)")
    p.add_argument("--gold", type=Path, default=None, help="CoNLL-U whose gold arcs are drawn over the map")
    p.add_argument("--as", dest="fmt", default="png", choices=list(HEATMAP_FORMATS),
                   help="file type when OUTPUT is a folder")
    p.add_argument("-o", "--output", type=Path, required=True, help="FILE.{png,svg,pdf,html}, or a folder")
    p.set_defaults(func=cmd_heatmap)


def _add_sweep_parser(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub, "sweep",
        help="score every layer (one model pass) and plot score against layer",
        description="Decode the impacts of every requested layer and score each against the gold trees in the "
                    "input; prints one row per layer and optionally plots UAS/F1 against layer.",
        epilog="example:\n  pmask sweep en_pud-ud-test.conllu --model bert-base-uncased --root gold --plot layers.png")
    p.add_argument("source", type=Path, help="gold corpus (CoNLL-U or PTB), or a store made from one")
    add_input(p)
    add_model(p, several_probes=True)
    p.add_argument("--layers", type=layers_arg, default="all", help="layers to score, or 'all'")
    add_decoder(p, None, "default: eisner for CoNLL-U, mart for PTB")
    add_root(p)
    p.add_argument("--faithful", action="store_true", help="the authors' pipeline (see parse --help)")
    p.add_argument("--punct", default="include", choices=list(PUNCT_MODES))
    p.add_argument("--baselines", action="store_true", help="draw the baselines as horizontal lines")
    p.add_argument("--store", type=Path, default=None, metavar="DIR", help="cache impacts in this store")
    p.add_argument("--corpus", type=Path, default=None, help="with a store SOURCE: its corpus")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--plot", type=Path, default=None, metavar="PNG", help="line plot of score against layer")
    p.add_argument("--json", type=Path, default=None, metavar="F")
    p.add_argument("--csv", type=Path, default=None, metavar="F")
    p.set_defaults(func=cmd_sweep)


def _add_export_parser(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub, "export",
        help="write a store's matrices as .npy, CSV or JSON",
        description="Export the word-level impact matrices of a store (matrix[i, j] = impact of word j on word i) "
                    "so they can be used without Python: npy and csv write a folder with one file per sentence "
                    "and layer plus index.json, json writes one file.",
        epilog="example:\n  pmask export pud-store/ --format csv --layers -1 -o pud-csv/")
    p.add_argument("store", type=Path, help="impact store directory")
    p.add_argument("--format", default="npy", choices=list(EXPORT_FORMATS),
                   help="; ".join(f"{k}: {v}" for k, v in EXPORT_FORMATS.items()))
    p.add_argument("--layers", type=layers_arg, default=None, help="layers to export (default: every stored layer)")
    p.add_argument("-o", "--output", type=Path, required=True, help="folder (npy, csv) or file (json)")
    p.set_defaults(func=cmd_export)


def _add_report_parser(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub, "report",
        help="one self-contained HTML report: scores, failures, trees, impact maps",
        description="Write one HTML file (no external resources) with the prediction's scores next to every "
                    "baseline, where it fails, a browser of every sentence's predicted and gold trees, the "
                    "impact maps from a store, and the layer/language view of a bench directory.",
        epilog="example:\n  pmask report pud.conllu --gold en_pud-ud-test.conllu --store pud-store/ -o report.html")
    p.add_argument("pred", type=Path, help="predicted .conllu, or bracketed trees one per line")
    p.add_argument("--gold", type=Path, required=True, help="gold CoNLL-U, or PTB .mrg file/directory")
    p.add_argument("--store", type=Path, default=None, metavar="DIR", help="impact store: draw every stored layer")
    p.add_argument("--bench", type=Path, default=None, metavar="DIR", help="pmask bench output directory")
    p.add_argument("--punct", default="include", choices=list(PUNCT_MODES), help="score punctuation words")
    p.add_argument("--title", default=None, help="page title")
    p.add_argument("-o", "--output", type=Path, required=True, help="the .html file to write")
    p.set_defaults(func=cmd_report)


def _add_bench_parser(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub, "bench",
        help="a probing study: many treebanks x layers x decoders, with baselines",
        description="Score every treebank x layer x decoder against gold, next to the baselines on the same "
                    "sentences. One model pass per treebank into a resumable store under OUTDIR/stores; rerunning "
                    "reuses every finished store without loading the model. Writes results.json, results.csv, "
                    "results.md, layers.png and heatmap-<decoder>.png into OUTDIR.",
        epilog="example:\n  pmask bench ../shared/data/ud/UD_*-PUD/*.conllu --model bert-base-multilingual-cased "
               "--layers all --decoders eisner,cle --root gold --tokenize text -o mbert-pud/")
    p.add_argument("inputs", type=Path, nargs="+", metavar="TREEBANK", help="CoNLL-U files/folders, PTB .mrg file/folder")
    add_model(p, required=True, several_probes=True)
    p.add_argument("--layers", type=layers_arg, default="all", help="layers to score, or 'all' (1..L)")
    add_decoders(p)
    add_root(p)
    p.add_argument("--limit", type=positive_int, default=None, metavar="N", help="first N sentences of each treebank")
    p.add_argument("--punct", default="include", choices=list(PUNCT_MODES))
    p.add_argument("--seed", type=int, default=0, help="seed of the random baselines")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="OUTDIR", help="output directory")
    p.set_defaults(func=cmd_bench)


# ---------------------------------------------------------------------------- shared helpers

def _setup_logging(args: argparse.Namespace) -> None:
    level = logging.WARNING if args.quiet else (logging.DEBUG if args.verbose >= 2 else logging.INFO)
    logging.basicConfig(level=level, format="pmask: %(message)s", stream=sys.stderr, force=True)
    for noisy in ("transformers", "huggingface_hub", "urllib3", "matplotlib", "filelock"):
        logging.getLogger(noisy).setLevel(max(level, logging.WARNING))


def _corpus(args: argparse.Namespace, path: Path) -> CorpusSpec:
    return CorpusSpec(path, args.format, limit=args.limit, max_words=args.max_words)


def _model(args: argparse.Namespace) -> ModelSpec:
    return ModelSpec(args.model, random_init=args.random_init, metric=args.metric, subword=args.subword,
                     device=args.device, dtype=args.dtype, batch_tokens=args.batch_tokens, tokenize=args.tokenize,
                     probe=args.probe if isinstance(args.probe, str) else None, head=args.head)


def _impact_source(args: argparse.Namespace) -> ImpactSource:
    return ImpactSource.open(_corpus(args, args.source), model=_model(args), store=getattr(args, "store", None),
                             corpus=getattr(args, "corpus", None), progress=not args.quiet)


INPUT_ARGS = ("input", "source", "pred", "gold", "corpus", "store", "bench")
OUTPUT_ARGS = ("output", "json", "csv", "plot")


def _check_paths(args: argparse.Namespace) -> None:
    """No output may resolve to one of the command's inputs (or lie inside an input store), nor
    sit below a path that is a file."""
    outputs = [getattr(args, name, None) for name in OUTPUT_ARGS]
    refuse_overwriting_inputs(outputs, [getattr(args, name, None) for name in INPUT_ARGS])
    for out in filter(None, outputs):
        blocking = next((p for p in Path(out).parents if p.exists() and not p.is_dir()), None)
        if blocking is not None:
            raise PmaskError(f"{out}: cannot write there, {blocking} is a file, not a folder")


def _command_line() -> list[str] | None:
    return ["pmask", *sys.argv[1:]] if sys.argv else None


# ---------------------------------------------------------------------------- commands

def cmd_impact(args: argparse.Namespace) -> int:
    run = build_store(_corpus(args, args.input), _model(args), args.output, layers=args.layers,
                      resume=args.resume, overwrite=args.overwrite, progress=not args.quiet)
    if run.is_main:   # under torchrun, rank 0 alone reports
        print(run.describe())
    return 0


def cmd_parse(args: argparse.Namespace) -> int:
    settings = ParseSettings(decoder=args.decoder, layer=args.layer, root=args.root, faithful=args.faithful,
                             multiroot=args.multiroot, seed=args.seed, bias=args.bias)
    needs_model = decoder_needs_model(args.decoder)   # baselines read only the corpus (a store's own corpus)
    source = ImpactSource.open(_corpus(args, args.source), model=_model(args) if needs_model else None,
                               store=args.store if needs_model else None, corpus=args.corpus,
                               progress=not args.quiet)
    result = parse_corpus(source, args.output, settings, deprel=args.deprel, command=_command_line())
    print(result.describe())
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    result = evaluate_files(args.pred, args.gold, punct=args.punct, baselines=args.baselines, root=args.root,
                            seed=args.seed, max_words=args.max_words)
    print(result.table.to_markdown())
    if args.details and result.task == "dependency":
        print(result.details_text())
    if args.json:
        result.write_json(args.json)
    if args.csv:
        result.table.write_csv(args.csv)
    return 0


def cmd_heatmap(args: argparse.Namespace) -> int:
    paths = draw_impact_maps(_impact_source(args), args.sentence, args.output, layer=args.layer, gold=args.gold,
                             fmt=args.fmt)
    print(f"wrote {len(paths)} heatmap(s): {paths[0]}" + (" …" if len(paths) > 1 else ""))
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    result = sweep_probes(_corpus(args, args.source), _model(args), args.probe, store=args.store, corpus=args.corpus,
                          progress=not args.quiet, layers=args.layers, decoder=args.decoder, root=args.root,
                          faithful=args.faithful, punct=args.punct, seed=args.seed, baselines=args.baselines,
                          label=args.source, bias=args.bias)
    print(result.sweep.to_markdown())
    if args.plot:
        result.plot(args.plot)
        print(f"wrote {args.plot}")
    if args.json:
        result.sweep.write_json(args.json)
    if args.csv:
        result.sweep.write_csv(args.csv)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    layers = None if args.layers in (None, "all") else args.layers
    paths = export_store(args.store, args.output, args.format, layers=layers)
    print(f"wrote {len(paths)} file(s) to {args.output}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    path = build_report(args.pred, args.gold, args.output,
                        ReportOptions(store=args.store, bench=args.bench, punct=args.punct, title=args.title))
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB)")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    settings = BenchSettings(
        model=args.model, layers=args.layers, root=args.root, limit=args.limit, metric=args.metric,
        decoders=[d.strip() for d in args.decoders.split(",") if d.strip()] if args.decoders else None,
        subword=args.subword or "avg", tokenize=args.tokenize or "words", punct=args.punct, seed=args.seed,
        device=args.device, dtype=None if args.dtype == "auto" else args.dtype, batch_tokens=args.batch_tokens,
        random_init=args.random_init, probes=args.probe or ["pair"], head=args.head, bias=args.bias)
    result = run_bench(args.inputs, args.output, settings, model_loader=_model(args).load, progress=not args.quiet)
    if result.is_main:   # under torchrun, rank 0 alone scores, writes and reports
        print(result.describe(args.output))
    return 0


# ---------------------------------------------------------------------------- entry point

def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 ok, 1 failure, 2 usage error)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help/--version exit 0, usage errors 2
        return int(exc.code or 0)
    _setup_logging(args)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        _check_paths(args)
        return int(args.func(args) or 0)
    except HelperRankDone:   # torchrun: this rank computed its share of the store; rank 0 writes the outputs
        return 0
    except SettingError as exc:
        print(f"pmask: error: {exc.render(FLAGS)}", file=sys.stderr)
    except PmaskError as exc:
        print(f"pmask: error: {exc}", file=sys.stderr)
    except KeyboardInterrupt:
        print("pmask: interrupted (stores keep every finished shard: rerun with --resume)", file=sys.stderr)
        return 130
    except (OSError, ValueError) as exc:
        if args.verbose >= 2:
            raise
        print(f"pmask: error: {exc}", file=sys.stderr)
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, not a traceback
        if args.verbose >= 2:
            raise
        print(f"pmask: error: unexpected {type(exc).__name__}: {exc} (run with -vv for the traceback)",
              file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
