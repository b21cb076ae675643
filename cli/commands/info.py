"""``pmask info``: what an impact store holds (reads its manifest only).

The command over :mod:`pmask.perturb.store.info` (the same concept, one layer up).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from pmask.cli.commands.command import COMMANDS, Command
from pmask.cli.outcome import Outcome
from pmask.common.output_checks import Output


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("store", type=Path, help="impact store directory")
    p.add_argument("--json", action="store_true", help="print the description as JSON")


def run(args: argparse.Namespace) -> Outcome:
    from pmask.perturb.store.info import describe_store_info, store_info

    info = store_info(args.store)
    return Outcome(table=json.dumps(info, indent=1, ensure_ascii=False) if args.json else describe_store_info(info))


def outputs(args: argparse.Namespace) -> list[Output]:
    return []   # reads only (its --json is a switch, not a file)


COMMAND = COMMANDS.register(Command(
    "info", add_arguments=add_arguments, run=run, outputs=outputs,
    help="what an impact store holds: corpus, selection, sentences, layers, model, settings",
    description="Describe an impact store from its manifest: the corpus it was made from and the selection "
                "(format, --limit, --max-words) it was read with, how many sentences it holds, its layers, "
                "the model and the impact settings. Loads no model and reads no shard.",
    epilog="examples:\n  pmask info pud-store/\n  pmask info pud-store/ --json"))
