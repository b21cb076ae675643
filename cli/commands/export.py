"""``pmask export``: write a store's matrices as .npy, CSV or JSON.

The command over :mod:`pmask.perturb.store.export` (the same concept, one layer up).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from pmask.cli.args import add_output, layers_arg
from pmask.cli.commands.command import COMMANDS, Command
from pmask.cli.outcome import Outcome
from pmask.common.labels import plural
from pmask.common.output_checks import Output
from pmask.perturb.store import EXPORT_FORMATS


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("store", type=Path, help="impact store directory")
    p.add_argument("--format", default="npy", choices=list(EXPORT_FORMATS),
                   help="; ".join(f"{k}: {v}" for k, v in EXPORT_FORMATS.items()))
    p.add_argument("--layers", type=layers_arg, default=None, help="layers to export (default: every stored layer)")
    add_output(p, "folder (npy, csv) or file (json)")


def run(args: argparse.Namespace) -> Outcome:
    from pmask.perturb.store import export_store

    layers = None if args.layers in (None, "all") else args.layers
    paths = export_store(args.store, args.output, args.format, layers=layers)
    return Outcome(summary=f"wrote {plural(len(paths), 'file')} to {args.output}")


def outputs(args: argparse.Namespace) -> list[Output]:
    return [Output(args.output, folder=args.format != "json")]


COMMAND = COMMANDS.register(Command(
    "export", add_arguments=add_arguments, run=run, outputs=outputs,
    help="write a store's matrices as .npy, CSV or JSON",
    description="Export the word-level impact matrices of a store (matrix[i, j] = impact of word j on word i) "
                "so they can be used without Python: npy and csv write a folder with one file per sentence "
                "and layer plus index.json, json writes one file.",
    epilog="example:\n  pmask export pud-store/ --format csv --layers -1 -o pud-csv/"))
