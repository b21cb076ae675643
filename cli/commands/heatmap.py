"""``pmask heatmap``: draw impact maps (PNG, SVG, PDF or self-contained HTML).

The command over :mod:`pmask.eval.figures.impact_maps`, which draws each matrix with
:mod:`pmask.eval.figures.heatmap` (the same concept, one layer down).
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pmask.cli.args import add_input, add_model, add_output
from pmask.cli.commands.command import COMMANDS, Command, suffixes
from pmask.cli.commands.shared import decoding_interrupted, impact_source
from pmask.cli.outcome import Outcome
from pmask.common.labels import plural
from pmask.common.options import HEATMAP_FORMATS
from pmask.common.output_checks import Output


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", type=Path, help="impact store directory, or corpus file")
    add_input(p)
    add_model(p)
    p.add_argument("--sentence", "-s", action="append", required=True, metavar="ID|INDEX",
                   help="sentence id, 0-based index or range A-B (repeatable; 'all' for every sentence)")
    p.add_argument("--layer", type=int, default=-1, help="layer to draw (-1 = last)")
    p.add_argument("--gold", type=Path, default=None, help="CoNLL-U whose gold arcs are drawn over the map")
    p.add_argument("--pred", type=Path, default=None, metavar="PRED", help="predicted CoNLL-U (pmask parse) whose "
                   "heads are drawn as dots; default gold arcs: the source's own heads")
    p.add_argument("--as", dest="fmt", default="png", choices=list(HEATMAP_FORMATS),
                   help="file type when OUTPUT is a folder")
    add_output(p, "FILE.{png,svg,pdf,html}, or a folder")


def run(args: argparse.Namespace) -> Outcome:
    from pmask.eval.figures.impact_maps import draw_impact_maps

    paths = draw_impact_maps(impact_source(args), args.sentence, args.output, layer=args.layer, gold=args.gold,
                             fmt=args.fmt, pred=args.pred)
    return Outcome(summary=f"wrote {plural(len(paths), 'heatmap')}: {paths[0]}" + (" …" if len(paths) > 1 else ""))


def heatmap_output(path: Any) -> Output:
    """``heatmap -o``: a folder when it is one or has no suffix, else one file of a heatmap type."""
    path = Path(path)
    if path.is_dir() or not path.suffix:
        return Output(path, folder=True)
    return Output(path, suffixes=suffixes(HEATMAP_FORMATS))


def outputs(args: argparse.Namespace) -> list[Output]:
    return [heatmap_output(args.output)]


def interrupted(args: argparse.Namespace) -> str:
    return decoding_interrupted(args, "")


COMMAND = COMMANDS.register(Command(
    "heatmap", add_arguments=add_arguments, run=run, outputs=outputs, interrupted=interrupted,
    help="draw impact maps (PNG, SVG, PDF or self-contained HTML)",
    description="Draw the impact matrix of one or more sentences, word labels on both axes, optionally with the "
                "gold arcs. SOURCE is a store or a corpus (then --model computes the matrices).",
    epilog="examples:\n  pmask heatmap pud-store/ --sentence n01001011 --gold en_pud-ud-test.conllu -o s1.png\n"
           "  pmask heatmap en_pud-ud-test.conllu --model bert-base-uncased --sentence 0-9 -o maps/ --as html"))
