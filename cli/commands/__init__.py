"""The ``pmask`` commands, one module each (its arguments, its checks, its Ctrl-C line and its run
function together, as a :class:`~pmask.cli.commands.command.Command`), and :data:`COMMANDS`, the
registry the parser, the checks before any work and the Ctrl-C message derive from
(:mod:`pmask.cli.dispatch`).

A new command is one module here that defines ``COMMAND = Command(...)`` and one line in
:data:`COMMANDS` (its place is its place in ``pmask --help``).
"""
from __future__ import annotations

from pmask.cli.commands import bench, export, heatmap, impact, info, parse, report, sweep
from pmask.cli.commands import eval as eval_
from pmask.cli.commands.command import Command

#: Every command, in the order ``pmask --help`` lists them.
COMMANDS: tuple[Command, ...] = (
    impact.COMMAND,
    parse.COMMAND,
    eval_.COMMAND,
    heatmap.COMMAND,
    sweep.COMMAND,
    export.COMMAND,
    report.COMMAND,
    bench.COMMAND,
    info.COMMAND,
)

__all__ = ["COMMANDS", "Command"]
