"""What a ``pmask`` command is: a :class:`Command` (its name, help text, arguments, run function
and the hooks that the shared steps of :mod:`pmask.cli.dispatch` call), with the defaults most
commands keep.

A command's hooks:

* ``add_arguments(parser)``: its arguments, from the option groups of :mod:`pmask.cli.args`;
* ``run(args) -> Outcome``: a few lines over one library call (at most 30, checked by
  ``tests/test_structure.py``); it never prints;
* ``outputs(args)``: every output it writes, as :class:`~pmask.common.output_checks.Output` checks
  (default :func:`output_files`: ``-o``, ``--json``, ``--csv`` files and a ``--plot`` figure);
* ``check(args)``: its own refusals before any work, after the outputs are checked (default: none);
* ``interrupted(args)``: the one line said on Ctrl-C (default :data:`NOTHING`: nothing was written).

Example:
    >>> import argparse
    >>> [str(o.path) for o in output_files(argparse.Namespace(output="p.conllu", json=None))]
    ['p.conllu']
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Callable

from pmask.cli.outcome import Outcome
from pmask.common.options import FIGURE_FORMATS
from pmask.common.output_checks import Output
from pmask.common.registry import Registry

#: What an interrupted command that keeps no work says.
NOTHING = "interrupted: nothing was written (outputs are written only when complete)"


def suffixes(formats: tuple[str, ...]) -> tuple[str, ...]:
    """``("png", "svg")`` -> ``(".png", ".svg")``: the file suffixes an output of those types may have."""
    return tuple(f".{f}" for f in formats)


def output_files(args: argparse.Namespace) -> list[Output]:
    """The default outputs: the files ``-o``, ``--json`` and ``--csv`` name, and a ``--plot`` figure."""
    files = [Output(path) for path in (getattr(args, name, None) for name in ("output", "json", "csv"))
             if path is not None]
    if getattr(args, "plot", None) is not None:
        files.append(Output(args.plot, suffixes=suffixes(FIGURE_FORMATS)))
    return files


def no_check(args: argparse.Namespace) -> None:
    """The default check: nothing beyond the outputs (which every command's are)."""


def nothing_kept(args: argparse.Namespace) -> str:
    """The default Ctrl-C line: outputs are written whole or not at all, so nothing was."""
    return NOTHING


@dataclass(frozen=True)
class Command:
    """One ``pmask`` command; :data:`COMMANDS` holds them, and the parser, the checks before any work and the
    Ctrl-C message are derived from it.

    Attributes:
        name: ``pmask NAME``.
        help: the one line ``pmask --help`` shows.
        description: the paragraph of ``pmask NAME --help``.
        epilog: its examples (``example:`` or ``examples:`` then lines kept as written).
        add_arguments: adds the command's arguments to its parser.
        run: does the work; returns what the command has to say.
        outputs: the outputs ``args`` names (checked before any work).
        check: the command's own refusals, run after the outputs are checked and before any work.
        interrupted: the one line said when Ctrl-C stops the command.
    """

    name: str
    help: str
    description: str
    epilog: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], Outcome]
    outputs: Callable[[argparse.Namespace], list[Output]] = output_files
    check: Callable[[argparse.Namespace], None] = no_check
    interrupted: Callable[[argparse.Namespace], str] = nothing_kept


#: Every command, in the order ``pmask --help`` lists them (the order :mod:`pmask.cli.commands` imports their
#: modules in); each module registers its command as it is imported.
COMMANDS: Registry[Command] = Registry("command")
