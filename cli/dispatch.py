"""What every command goes through, derived from the registry :data:`pmask.cli.commands.COMMANDS`:
its parser (:func:`build_parser`), the one validation step before anything is read or loaded
(:func:`check_command`, over :func:`outputs_of`), and the line said when Ctrl-C stops it
(:func:`interrupted_message`). Each reads the registry as it is when called, so a command registered later
(a test's, ``COMMANDS.registered(...)``) is parsed, checked and interrupted like the others.

:func:`check_command` checks every output a command will write (its ``outputs`` hook says which,
and whether each is a file or a folder the command creates) with
:func:`pmask.common.output_checks.check_outputs`, that standard output holds one of them at most, then
the command's own ``check`` hook (settings that can be checked without a model, e.g. layer 0
refused where trees would be decoded from it). The library functions behind the commands run
the same checks on their own outputs, so a script that calls them directly gets the same refusals.

Outputs are written whole or not at all, so an interrupted command never leaves half a file;
only impact stores keep work (every finished shard): a command's ``interrupted`` hook says how
many sentences its stores hold and how to continue, or that nothing was kept.

Example:
    >>> import argparse
    >>> [o.folder for o in outputs_of(argparse.Namespace(command="impact", output="store/"))]
    [True]
    >>> interrupted_message(argparse.Namespace(command="eval"))
    'interrupted: nothing was written (outputs are written only when complete)'
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pmask.cli.args import INPUT_ARGS, OUTPUT_ARGS, HelpFormatter, command
from pmask.cli.commands import COMMANDS, Command
from pmask.common.command_line import flag_of
from pmask.common.errors import OutputError
from pmask.common.files import is_stdout
from pmask.common.output_checks import Output, check_outputs
from pmask.common.version import __version__


def build_parser() -> argparse.ArgumentParser:
    """The ``pmask`` parser: one sub-parser per registered command, in their order; each sets
    ``args.command`` to its name and ``args.func`` to its run function."""
    parser = argparse.ArgumentParser(
        prog="pmask", formatter_class=HelpFormatter,
        description="Induce syntax from masked language models with Perturbed Masking (Wu et al., ACL 2020).",
        epilog="example:\n  pmask parse en_pud-ud-test.conllu --model bert-base-uncased --root gold -o pud.conllu\n"
               "  pmask eval pud.conllu --gold en_pud-ud-test.conllu --baselines")
    parser.add_argument("--version", action="version", version=f"pmask {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for entry in COMMANDS.values():
        p = command(sub, entry.name, help=entry.help, description=entry.description, epilog=entry.epilog)
        entry.add_arguments(p)
        p.set_defaults(func=entry.run)
    return parser


def command_named(name: str) -> Command:
    """The entry of ``pmask NAME``."""
    return COMMANDS.lookup(name)


def outputs_of(args: argparse.Namespace) -> list[Output]:
    """Every output ``args.command`` will write, as :class:`~pmask.common.output_checks.Output` checks."""
    return command_named(args.command).outputs(args)


def check_command(args: argparse.Namespace) -> None:
    """Refuse, in one line, any output that cannot be written or would overwrite an input, and any
    setting that is wrong whatever the model; nothing is read, loaded or written before this.

    Raises:
        OutputError: an output that cannot be written (missing folder, a folder in the way, a file
            type the command cannot write, no permission) or that is one of the inputs.
        SettingError: a setting refused before any model work (layer 0 for decoding).
    """
    inputs: list[Any] = []
    for name in INPUT_ARGS:
        value = getattr(args, name, None)
        inputs.extend(value if isinstance(value, list) else [value])
    check_outputs(outputs_of(args), inputs)
    _refuse_two_on_stdout(args)
    command_named(args.command).check(args)


def _refuse_two_on_stdout(args: argparse.Namespace) -> None:
    """Standard output holds one output at most (``eval --json - --csv -`` would interleave two files)."""
    named = {name: getattr(args, name, None) for name in OUTPUT_ARGS}   # info's --json is a switch, not a path
    flags = [flag_of(name) for name, value in named.items()
             if isinstance(value, (str, Path)) and is_stdout(value)]
    if len(flags) > 1:
        raise OutputError(f"-: {' and '.join(flags)} both name standard output; one output at most can go there")


def interrupted_message(args: argparse.Namespace) -> str:
    """One line: what ``args.command`` kept when it was interrupted, and how to go on from it."""
    return command_named(args.command).interrupted(args)
