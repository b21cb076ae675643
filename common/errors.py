"""Exceptions whose message is the one line shown to a command-line user."""
from __future__ import annotations

import re


class PmaskError(Exception):
    """Base class: ``str(err)`` is a complete one-line message (it names the file, line or sentence)."""


def at(where: str | None) -> str:
    """The ``"WHERE: "`` prefix of an error message, or ``""`` when ``where`` is empty.

    Example:
        >>> at("pud.conllu:12 (sentence s1)") + "no words"
        'pud.conllu:12 (sentence s1): no words'
        >>> at(None) + "no words"
        'no words'
    """
    return f"{where}: " if where else ""


def json_problem(err: ValueError) -> str:
    """What a ``json.JSONDecodeError`` found and the column, as a whole phrase (its ``msg`` may end mid-phrase:
    "Unterminated string starting at"); the line is the caller's to name.

    Example:
        >>> import json
        >>> try:
        ...     json.loads('{"root": [{"text": "We stu')
        ... except json.JSONDecodeError as err:
        ...     print(json_problem(err))
        Unterminated string starting at column 20
    """
    msg, column = str(getattr(err, "msg", err)), getattr(err, "colno", None)
    if column is None:
        return msg
    return f"{msg} column {column}" if msg.endswith(" at") else f"{msg} at column {column}"


class OutputError(PmaskError):
    """An output cannot be written: not writable, a folder in the way, or it would overwrite an input."""


class CorpusError(PmaskError):
    """Malformed or unreadable input corpus."""


class ModelError(PmaskError):
    """A model or tokenizer could not be loaded or used."""


class StoreError(PmaskError):
    """An impact store is missing, corrupt or does not match the request."""


class DecodeError(PmaskError):
    """Scores that no decoder can use (NaN, infinite, wrong shape)."""


class OptionError(PmaskError, ValueError):
    """A setting's value is not one of its known names (see :mod:`pmask.common.options`)."""


class LayerError(PmaskError, ValueError):
    """A requested layer does not exist in the model (or the request is malformed)."""


class MissingSentenceError(StoreError, KeyError):
    """No stored sentence under that key (also a KeyError, so ``in``/``dict`` idioms work)."""

    def __str__(self) -> str:   # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class HelperRankDone(Exception):
    """Raised on a torchrun rank other than 0 once it has computed its share of a cache store:
    rank 0 alone goes on to decode and write the outputs (the CLI exits 0 quietly)."""


class SettingError(PmaskError):
    """Settings that cannot work together. The message names settings as ``{name}``: ``str()``
    shows the bare name, a front end may show its own spelling (the CLI shows its flag)."""

    def __init__(self, template: str):
        super().__init__(template)
        self.template = template

    def render(self, names: dict[str, str] | None = None) -> str:
        """The message with each ``{name}`` replaced by ``names[name]`` (default: the bare name)."""
        names = names or {}
        return re.sub(r"\{(\w+)\}", lambda m: names.get(m[1], m[1]), self.template)

    def __str__(self) -> str:
        return self.render()


class StoreSettingError(SettingError, StoreError):
    """A store refused as asked for; the message names the settings that would change that as ``{name}``."""


class UnfinishedStoreError(SettingError, StoreError):
    """A store that holds only part of its corpus (interrupted, or still being written), read where
    a result needs all of it; the message names the setting that accepts part as ``{allow_incomplete}``."""
