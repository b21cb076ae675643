"""What a command has to say once its outputs are written: an :class:`Outcome`, which
:func:`pmask.cli.logs.deliver` routes (data on stdout, messages on stderr), so that no command prints.

Example:
    >>> Outcome(summary="wrote pud.conllu").table is None
    True
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Outcome:
    """What a command has to say once its outputs are written; :func:`pmask.cli.logs.deliver` routes it.

    Attributes:
        table: the command's product when no output of it names standard output (the scores of
            ``eval``/``sweep``, the description of ``info``); a message otherwise.
        summary: one line on what was written, e.g. ``pud.conllu: 1000 dependency trees``; always a
            message.
    """

    table: str | None = None
    summary: str | None = None
