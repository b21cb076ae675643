"""The tokenisation modes (``--tokenize``): how a sentence becomes model input, one entry each (torch-free).

A :class:`TokenizeMode` says what the mode reads of a sentence and what the model input holds; code
asks it (``tokenize_mode(name).special_tokens``), never the mode's name. Its aligner, which builds the
input, is registered under the same name in :data:`pmask.perturb.alignment.ALIGNERS` (checked there on
import). :data:`pmask.common.options.TOKENIZE_MODES` (CLI choices, help, manifests) is a view of
:data:`TOKENIZE_ENTRIES`.

Example:
    >>> [m.name for m in TOKENIZE_ENTRIES.values() if m.takes_context]
    ['words', 'words-ptb']
    >>> tokenize_mode("bare").special_tokens
    False
"""
from __future__ import annotations

from dataclasses import dataclass

from pmask.common.registry import Registry


@dataclass(frozen=True)
class TokenizeMode:
    """One tokenisation mode.

    Attributes:
        name, description: the ``--tokenize`` value and its one-line help (written into manifests).
        special_tokens: the input holds the model's special tokens ([CLS], [SEP]) around the words.
        takes_context: lays a sentence out with its neighbours' words (``--context``); a mode that reads the
            running text, or one without the special tokens that separate them, does not.
    """

    name: str
    description: str
    special_tokens: bool = True
    takes_context: bool = True


#: The modes, in documentation order (``words`` first: the default).
TOKENIZE_ENTRIES: Registry[TokenizeMode] = Registry("tokenisation mode")

TOKENIZE_ENTRIES.register(TokenizeMode(
    "words", "tokenise every word separately (the paper's setting)"))
TOKENIZE_ENTRIES.register(TokenizeMode(
    "text", "tokenise the surface text (SpaceAfter, multiword tokens) and map pieces to words by offsets",
    takes_context=False))
TOKENIZE_ENTRIES.register(TokenizeMode(
    "words-ptb", "as words, after Hoover et al. 2021's adjustments: PTB bracket tokens (-LRB- ...) read as brackets, "
                 "and the n of a word tokenised n ' t moved onto the previous word's last piece (their --faithful)"))
TOKENIZE_ENTRIES.register(TokenizeMode(
    "bare", "as words, but without the model's special tokens ([CLS], [SEP]): Kim et al. 2020's input (probe "
            "distance, --faithful)", special_tokens=False, takes_context=False))


def tokenize_mode(name: str | None) -> TokenizeMode:
    """The entry of tokenisation mode ``name``; a one-line :class:`~pmask.common.errors.OptionError` listing
    the modes otherwise."""
    return TOKENIZE_ENTRIES.lookup(name)
