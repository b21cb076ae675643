"""The ``pmask`` commands, one module each (its arguments, its checks, its Ctrl-C line and its run
function together, as a :class:`~pmask.cli.commands.command.Command` that the module registers in
:data:`~pmask.cli.commands.command.COMMANDS`, the registry the parser, the checks before any work and the
Ctrl-C message derive from: :mod:`pmask.cli.dispatch`).

A new command is one module here that ends in ``COMMAND = COMMANDS.register(Command(...))`` and its import
below (its place among the imports is its place in ``pmask --help``).
"""
from __future__ import annotations

# The command modules, in the order ``pmask --help`` lists them: each registers its command as it is imported.
# isort: off
from pmask.cli.commands import impact  # noqa: F401
from pmask.cli.commands import parse  # noqa: F401
from pmask.cli.commands import eval as eval_  # noqa: F401
from pmask.cli.commands import heatmap  # noqa: F401
from pmask.cli.commands import sweep  # noqa: F401
from pmask.cli.commands import export  # noqa: F401
from pmask.cli.commands import report  # noqa: F401
from pmask.cli.commands import bench  # noqa: F401
from pmask.cli.commands import info  # noqa: F401
# isort: on
from pmask.cli.commands.command import COMMANDS, Command

#: The modules that register commands, in ``pmask --help`` order.
COMMAND_MODULES = (impact, parse, eval_, heatmap, sweep, export, report, bench, info)

__all__ = ["COMMANDS", "COMMAND_MODULES", "Command"]
