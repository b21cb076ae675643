"""The ``pmask`` command: thin wrappers over library functions that return data.

:mod:`.args` holds the shared option groups (every flag that several commands take, spelled
once), :mod:`.parsers` the parser of each command, :mod:`.commands` one ``cmd_<command>`` per
command, each a few lines over one library call; here :func:`main` (the ``pmask`` entry point)
runs them. Exit codes: 0 ok, 1 failure (a one-line ``pmask: error: …`` on stderr), 2 usage
error. May import every wing; nothing imports it.
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import Sequence

from pmask.cli.args import INPUT_ARGS, OUTPUT_ARGS, option_names
from pmask.cli.parsers import build_parser
from pmask.common.errors import HelperRankDone, PmaskError, SettingError
from pmask.common.files import refuse_overwriting_inputs

__all__ = ["build_parser", "main"]


def _setup_logging(args: argparse.Namespace) -> None:
    level = logging.WARNING if args.quiet else (logging.DEBUG if args.verbose >= 2 else logging.INFO)
    logging.basicConfig(level=level, format="pmask: %(message)s", stream=sys.stderr, force=True)
    for noisy in ("transformers", "huggingface_hub", "urllib3", "matplotlib", "filelock"):
        logging.getLogger(noisy).setLevel(max(level, logging.WARNING))


def _check_paths(args: argparse.Namespace) -> None:
    """No output may resolve to one of the command's inputs (or lie inside an input store), nor
    sit below a path that is a file."""
    outputs = [getattr(args, name, None) for name in OUTPUT_ARGS]
    refuse_overwriting_inputs(outputs, [getattr(args, name, None) for name in INPUT_ARGS])
    for out in filter(None, outputs):
        blocking = next((p for p in Path(out).parents if p.exists() and not p.is_dir()), None)
        if blocking is not None:
            raise PmaskError(f"{out}: cannot write there, {blocking} is a file, not a folder")


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
        print(f"pmask: error: {exc.render(option_names(parser))}", file=sys.stderr)
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
