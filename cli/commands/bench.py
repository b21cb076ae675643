"""``pmask bench``: a probing study, many treebanks x probes x layers x decoders, with baselines."""
from __future__ import annotations

import argparse
from pathlib import Path

from pmask.cli.args import (
    MAX_WORDS_HELP,
    add_bias,
    add_dry_run,
    add_model,
    add_output,
    add_punct,
    add_root,
    add_score,
    add_seed,
    add_symmetrize,
    layers_arg,
    metrics_arg,
    positive_int,
)
from pmask.cli.commands.command import COMMANDS, Command
from pmask.cli.commands.shared import announce, kept, request_of, stored_sentences
from pmask.cli.outcome import Outcome
from pmask.common.output_checks import Output
from pmask.trees.tasks import TASKS


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("inputs", type=Path, nargs="+", metavar="TREEBANK",
                   help="CoNLL-U files/folders, PTB .mrg file/folder")
    add_model(p, several_probes=True)
    p.add_argument("--metrics", type=metrics_arg, default=None, metavar="LIST",
                   help="comma-separated impact metrics, each scored on its own store for every probe given (each "
                        "probe must take every one; instead of --metric, which is the one-metric case)")
    p.add_argument("--layers", type=layers_arg, default="all", help="layers to score, or 'all' (1..L)")
    p.add_argument("--decoders", default=None, metavar="LIST",
                   help="comma-separated decoders (default: {} for CoNLL-U, {} for PTB)".format(*(
                       ",".join(t.default_decoders) for t in TASKS.values())))
    add_bias(p)
    add_symmetrize(p)
    add_root(p)
    p.add_argument("--limit", type=positive_int, default=None, metavar="N", help="first N sentences of each treebank")
    p.add_argument("--max-words", type=positive_int, default=None, metavar="N", help=MAX_WORDS_HELP)
    add_punct(p)
    add_seed(p)
    add_score(p, "every row and baseline of the treebanks whose trees it scores (results.json, results.csv)")
    p.add_argument("--hoover-uuas", action="append_const", dest="scores", const="hoover_uuas",
                   help="add UUAS as Hoover et al. 2021 score CPMI trees to every row and baseline of the dependency "
                        "treebanks (results.json, results.csv; the columns hoover_uuas, hoover_uuas_mean), as eval "
                        "--hoover-uuas does")
    p.add_argument("--faithful", action="store_true",
                   help="each probe or metric with an authors' pipeline runs it, as parse --faithful does (its "
                        "settings, decoders and decoding; a store of its own); the others run clean; each row "
                        "records faithful")
    p.add_argument("--rescore", action="store_true",
                   help="OUTDIR holds a study with other scoring settings (--root, --punct, --seed, --bias, --head) "
                        "or more treebanks, probes, metrics, layers or decoders: replace its results, reusing its "
                        "stores (another model or sentence selection always needs another OUTDIR)")
    add_dry_run(p)
    add_output(p, "output directory", metavar="OUTDIR")


def run(args: argparse.Namespace) -> Outcome:
    from pmask.eval.studies.bench.run import BenchSettings, plan_bench

    request = request_of(args)   # each probe's defaults are resolved per probe, the root once the treebanks are read
    given = request.decoding
    settings = BenchSettings(
        model=request.model, layers=args.layers, root=given.root, limit=args.limit, punct=args.punct,
        seed=given.seed, decoders=[d.strip() for d in args.decoders.split(",") if d.strip()] if args.decoders else None,
        probes=args.probe, metrics=args.metrics, bias=given.bias, max_words=args.max_words,
        symmetrize=given.symmetrize, absolute=given.absolute, scores=tuple(dict.fromkeys(args.scores or ())),
        faithful=args.faithful)
    plan = plan_bench(args.inputs, args.output, settings, rescore=args.rescore)   # read once, checked: one line
    if (dry := announce(args, plan.computations())) is not None:
        return dry
    result = plan.run(progress=not args.quiet)
    if not result.is_main:   # under torchrun, rank 0 alone scores, writes and reports
        return Outcome()
    return Outcome(table=result.to_markdown(), summary=result.describe(args.output))


def outputs(args: argparse.Namespace) -> list[Output]:
    return [Output(args.output, folder=True)]


def interrupted(args: argparse.Namespace) -> str:
    stores = sorted(p for p in (Path(args.output) / "stores").glob("*") if p.is_dir())
    count = sum(stored_sentences(p) or 0 for p in stores)
    return kept(Path(args.output) / "stores", count, "rerun the same command to continue (finished stores are reused)")


COMMAND = COMMANDS.register(Command(
    "bench", add_arguments=add_arguments, run=run, outputs=outputs, interrupted=interrupted,
    help="a probing study: many treebanks x layers x decoders, with baselines",
    description="Score every treebank x probe x layer x decoder against gold, next to the baselines on the "
                "same sentences. One model pass per treebank and probe into a resumable store under OUTDIR/stores; "
                "rerunning reuses every finished store without loading the model (more treebanks, probes, "
                "metrics, layers or decoders extend the study; other settings are refused, scoring ones unless "
                "--rescore). Writes results.json, results.csv, results.md, layers.png and "
                "heatmap-<decoder>.png into OUTDIR and prints the best setting per treebank.",
    epilog="example:\n  pmask bench ../shared/data/ud/UD_*-PUD/*.conllu --model bert-base-multilingual-cased "
           "--layers all --decoders eisner,cle --root gold --tokenize text -o mbert-pud/"))
