"""``pmask info STORE``: what an impact store holds (corpus and selection, sentences, layers, model,
settings), as text or ``--json``; reads the manifest only (:mod:`pmask.perturb.store.info`).

Kept beside the other commands' parsers so that it can be added to :func:`pmask.cli.build_parser`
in one line.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from pmask.cli.args import command
from pmask.perturb.store.info import describe_store_info, store_info


def add_info_parser(sub: argparse._SubParsersAction) -> None:
    """The ``info`` subcommand."""
    p = command(
        sub, "info",
        help="what an impact store holds: corpus, selection, sentences, layers, model, settings",
        description="Describe an impact store from its manifest: the corpus it was made from and the selection "
                    "(format, --limit, --max-words) it was read with, how many sentences it holds, its layers, "
                    "the model and the impact settings. Loads no model and reads no shard.",
        epilog="examples:\n  pmask info pud-store/\n  pmask info pud-store/ --json")
    p.add_argument("store", type=Path, help="impact store directory")
    p.add_argument("--json", action="store_true", help="print the description as JSON")
    p.set_defaults(func=cmd_info)


def cmd_info(args: argparse.Namespace) -> int:
    info = store_info(args.store)
    print(json.dumps(info, indent=1, ensure_ascii=False) if args.json else describe_store_info(info))
    return 0
