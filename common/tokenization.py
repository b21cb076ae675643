"""The tokenisation modes (``--tokenize``): how a sentence becomes model input, one entry each (torch-free).

A :class:`TokenizeMode` says what the mode reads of a sentence and what the model input holds, and holds its
aligner, which builds the input; code asks it (``tokenize_mode(name).special_tokens``,
``tokenize_mode(name).aligner``), never the mode's name. The entries are registered beside their aligners, in
:mod:`pmask.perturb.alignment` (imported by ``pmask/__init__.py``).
:data:`pmask.common.options.TOKENIZE_MODES` (CLI choices, help, manifests) is a view of :data:`TOKENIZE_ENTRIES`.

Example:
    >>> import pmask
    >>> [m.name for m in TOKENIZE_ENTRIES.values() if m.takes_context]
    ['words', 'words-ptb']
    >>> tokenize_mode("bare").special_tokens
    False
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pmask.common.registry import Registry


@dataclass(frozen=True)
class TokenizeMode:
    """One tokenisation mode.

    Attributes:
        name, description: the ``--tokenize`` value and its one-line help (written into manifests).
        special_tokens: the input holds the model's special tokens ([CLS], [SEP]) around the words.
        aligner: ``(tokenizer, sentence, *, warn=True) -> WordAlignment``: the sentence's model input and which
            pieces each word owns (``pmask.perturb.alignment.word_alignment.WordAlignment``); ``warn``: say what
            the mode could not map, once.
        takes_context: lays a sentence out with its neighbours' words (``--context``); a mode that reads the
            running text, or one without the special tokens that separate them, does not.
        probes: the probes its layout is for (None: every probe); another is refused in one line.
    """

    name: str
    description: str
    aligner: Callable[..., Any]
    special_tokens: bool = True
    takes_context: bool = True
    probes: tuple[str, ...] | None = None


#: The modes, in documentation order (``words`` first: the default); each is registered beside its aligner, in
#: :mod:`pmask.perturb.alignment`.
TOKENIZE_ENTRIES: Registry[TokenizeMode] = Registry("tokenisation mode")


def tokenize_mode(name: str | None) -> TokenizeMode:
    """The entry of tokenisation mode ``name``; a one-line :class:`~pmask.common.errors.OptionError` listing
    the modes otherwise."""
    return TOKENIZE_ENTRIES.lookup(name)
