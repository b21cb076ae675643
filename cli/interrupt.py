"""What an interrupted command (Ctrl-C) kept, said in one line that fits that command's flags.

Outputs are written whole or not at all, so an interrupted command never leaves half a file; only
impact stores keep work: every finished shard (flushed when the interruption unwinds the writer).
:func:`interrupted_message` looks at the stores the command was filling and says how many
sentences they hold and how to continue, or that nothing was kept.

Example:
    >>> import argparse
    >>> interrupted_message(argparse.Namespace(command="eval"))
    'interrupted: nothing was written (outputs are written only when complete)'
"""
from __future__ import annotations

import argparse
from pathlib import Path

from pmask.cli.args import reads_impacts
from pmask.common.errors import StoreError
from pmask.common.labels import plural
from pmask.perturb.store.layout import PARTIAL, read_manifest

NOTHING = "interrupted: nothing was written (outputs are written only when complete)"


def stored_sentences(store: Path) -> int | None:
    """Sentences a store holds (finished, not skipped), None when there is no readable store."""
    if not (store / "manifest.json").is_file():
        return None
    try:
        manifest = read_manifest(store)
    except StoreError:
        return None
    return sum(1 for e in manifest["sentences"] if "skipped" not in e)


def _kept(store: Path, count: int | None, how: str) -> str:
    part = (store / PARTIAL).is_file()   # the sentence under way, kept (see StoreWriter.tick)
    if not count and not part:
        return f"interrupted before any sentence was stored in {store}; nothing was kept"
    kept = " and the work done on the next one" if part else ""
    return f"interrupted: {store} keeps {plural(count or 0, 'finished sentence')}{kept}; {how}"


def _is_store(path: object) -> bool:
    return path is not None and (Path(str(path)) / "manifest.json").is_file()


def interrupted_message(args: argparse.Namespace) -> str:
    """One line: what ``args.command`` kept when it was interrupted, and how to go on from it."""
    command = args.command
    if command == "impact":
        return _kept(args.output, stored_sentences(Path(args.output)),
                     "rerun the same command with --resume to continue")
    if command == "bench":
        stores = sorted(p for p in (Path(args.output) / "stores").glob("*") if p.is_dir())
        count = sum(stored_sentences(p) or 0 for p in stores)
        return _kept(Path(args.output) / "stores", count,
                     "rerun the same command to continue (finished stores are reused)")
    if command not in ("parse", "sweep", "heatmap"):
        return NOTHING
    source, cache, model = getattr(args, "source", None), getattr(args, "store", None), getattr(args, "model", None)
    decodes = command != "parse" or reads_impacts(args)
    if not decodes:
        return NOTHING
    if _is_store(source):
        if not model:   # read without a model: no layer is added, nothing is kept
            return NOTHING
        return (f"interrupted: the store {source} keeps every layer it finished adding (adding layers resumes "
                f"where it stopped): rerun the same command to continue; nothing else was written")
    if cache is not None:
        return _kept(Path(cache), stored_sentences(Path(cache)),
                     "rerun the same command to continue from them (the store is resumed)")
    hint = "; add --store DIR to keep computed impacts across runs" if command != "heatmap" else ""
    return f"interrupted: nothing was saved (impacts are computed in memory){hint}"
