"""The ``pmask`` command: thin wrappers over library functions that return data.

:mod:`.commands` holds one module per command (its arguments, its checks, its Ctrl-C line and its
run function, a few lines over one library call) and :data:`~pmask.cli.commands.command.COMMANDS`, the
registry of them; :mod:`.dispatch` derives from it the parser, the validation step run before any
work and the Ctrl-C message; :mod:`.args` holds the shared option groups (every flag that several
commands take, spelled once), :mod:`.outcome` what a command returns and :mod:`.logs` where text
goes (data on stdout, messages on stderr); here :func:`main` (the ``pmask`` entry point) runs them.
Exit codes: 0 ok, 1 failure (a one-line ``pmask: error: …`` on stderr), 2 usage error. May import
every wing; nothing imports it.
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import NoReturn, Sequence

from pmask.cli.args import option_names
from pmask.cli.dispatch import build_parser, check_command, interrupted_message, outputs_of
from pmask.cli.logs import command_logging, deliver, notes_held
from pmask.common.errors import HelperRankDone, PmaskError, SettingError
from pmask.common.files import is_stdout, stdout_to_devnull

__all__ = ["build_parser", "console", "main"]


# ---------------------------------------------------------------------------- entry point

def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 ok, 1 failure, 2 usage error).

    Args:
        argv: the arguments after ``pmask`` (default: the process's own).

    Every registered command is known (:data:`pmask.cli.commands.command.COMMANDS`; a test registers its own
    with ``COMMANDS.registered(...)``).
    """
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:   # argparse would name them under the top-level usage; the command's own usage helps more
            _command_parser(parser, args.command).error(f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as exc:  # argparse: --help/--version exit 0, usage errors 2
        return int(exc.code or 0)
    with command_logging(quiet=args.quiet, verbose=args.verbose):
        return _run(parser, args)


def console() -> NoReturn:
    """The ``pmask`` executable (and ``python -m pmask``): :func:`main` on the process's arguments, then exit
    with its code.

    Once :func:`main` has returned, its work is written and its last line said; a Ctrl-C that comes while
    the interpreter then shuts down (seconds, after torch and transformers) is ignored, where Python's
    default action would kill the process with no line and the signal's exit code. A Ctrl-C that reaches
    here from outside a command's own handling (before it started, or as it returned) says one line.
    """
    code = 130
    try:
        code = main()
    except KeyboardInterrupt:
        print("pmask: interrupted", file=sys.stderr)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)   # survives the interpreter's finalisation
    sys.exit(code)


def _command_parser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    """The sub-parser of ``command`` (``pmask parse`` …)."""
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices[command]


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Run the command ``args`` names; its failures become one-line messages and exit codes."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        check_command(args)   # every output and model-free setting, before any work
        stdout_taken = any(is_stdout(output.path) for output in outputs_of(args))
        with notes_held():   # a refused run says one line: what was read is said once the checks pass
            deliver(args.func(args), stdout_taken)   # data on stdout, messages on stderr
        sys.stdout.flush()    # a reader that went away shows here, not in the interpreter's last flush
        return 0
    except BrokenPipeError:   # `pmask … | head`: the reader has what it wanted; not an error
        stdout_to_devnull()
        return 0
    except HelperRankDone:   # torchrun: this rank computed its share of the store; rank 0 writes the outputs
        return 0
    except SettingError as exc:
        print(f"pmask: error: {exc.render(option_names(parser))}", file=sys.stderr)
    except PmaskError as exc:
        print(f"pmask: error: {exc}", file=sys.stderr)
    except KeyboardInterrupt:
        print(f"pmask: {interrupted_message(args)}", file=sys.stderr)
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
    console()
