"""``pmask report``: one self-contained HTML report (scores, failures, trees, impact maps)."""
from __future__ import annotations

import argparse
from pathlib import Path

from pmask.cli.args import MAX_WORDS_HELP, add_output, add_prediction, add_punct, positive_int
from pmask.cli.commands.command import COMMANDS, Command
from pmask.cli.outcome import Outcome
from pmask.common.files import is_stdout


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_prediction(p)
    p.add_argument("--max-words", type=positive_int, default=None, metavar="N",
                   help=MAX_WORDS_HELP + "; default: the prediction's own, from its .meta.json (as eval)")
    p.add_argument("--store", type=Path, default=None, metavar="DIR", help="impact store: draw every stored layer")
    p.add_argument("--bench", type=Path, default=None, metavar="DIR", help="pmask bench output directory")
    add_punct(p)
    p.add_argument("--title", default=None, help="page title")
    add_output(p, "the .html file to write")


def run(args: argparse.Namespace) -> Outcome:
    from pmask.eval.html import ReportOptions, build_report

    path = build_report(args.pred, args.gold, args.output,
                        ReportOptions(store=args.store, bench=args.bench, punct=args.punct, title=args.title,
                                      max_words=args.max_words))
    size = "" if is_stdout(path) else f" ({path.stat().st_size / 1e6:.1f} MB)"   # `-o -` leaves no file to measure
    return Outcome(summary=f"wrote {path}{size}")


COMMAND = COMMANDS.register(Command(
    "report", add_arguments=add_arguments, run=run,
    help="one self-contained HTML report: scores, failures, trees, impact maps",
    description="Write one HTML file (no external resources) with the prediction's scores next to every "
                "baseline, where it fails, a browser of every sentence's predicted and gold trees, the "
                "impact maps from a store, and the layer/language view of a bench directory.",
    epilog="example:\n  pmask report pud.conllu --gold en_pud-ud-test.conllu --store pud-store/ -o report.html"))
