"""Word <-> word-piece alignment: which model tokens each word of a sentence owns.

One registry, :data:`ALIGNERS`, maps every tokenisation mode of
:data:`pmask.common.options.TOKENIZE_MODES` (names and descriptions live there, torch-free, for
the CLI and store manifests) to its aligner ``(tokenizer, sentence) -> WordAlignment``:
``"words"`` (:mod:`.words`, the paper's scheme) and ``"text"`` (:mod:`.surface`, the running text
mapped by offsets). The engine reads a sentence only through :func:`align_sentence`.

May import: ``pmask.common``. Imported by the engine, the store filler and the tests.
"""
from __future__ import annotations

from typing import Any, Callable

from pmask.common.options import TOKENIZE_MODES, check_choice
from pmask.perturb.alignment.context import add_context_pieces, ptb_align, sentence_context
from pmask.perturb.alignment.surface import SurfaceLayout, surface_align, surface_layout
from pmask.perturb.alignment.word_alignment import WordAlignment
from pmask.perturb.alignment.words import align, align_bare, sentence_words


def words_align(tokenizer: Any, sentence: Any) -> WordAlignment:
    """The ``words`` alignment (:func:`align`), laid out with the sentence's context words if it carries any."""
    return add_context_pieces(tokenizer, align(tokenizer, sentence), sentence)


#: Tokenisation mode -> aligner; its keys are exactly ``TOKENIZE_MODES`` (checked below).
ALIGNERS: dict[str, Callable[..., WordAlignment]] = {"words": words_align, "text": surface_align,
                                                     "words-ptb": ptb_align, "bare": align_bare}
assert set(ALIGNERS) == set(TOKENIZE_MODES), "every tokenisation mode needs exactly one aligner"

__all__ = ["ALIGNERS", "SurfaceLayout", "WordAlignment", "align", "align_sentence", "get_aligner", "ptb_align",
           "sentence_context", "sentence_words", "surface_align", "surface_layout", "words_align"]


def get_aligner(name: str | None) -> Callable[..., WordAlignment]:
    """The aligner registered as ``name`` in :data:`ALIGNERS`; ``OptionError`` (a ``ValueError``) for an unknown one."""
    return ALIGNERS[check_choice("tokenisation mode", name, ALIGNERS)]


def align_sentence(tokenizer: Any, sentence: Any, tokenize: str, *, warn: bool = True) -> WordAlignment:
    """The model input of ``sentence`` under tokenisation mode ``tokenize`` (see ``TOKENIZE_MODES``).

    Args:
        tokenizer: a fast tokenizer.
        sentence: a :class:`pmask.corpora.Sentence` or a list of words.
        tokenize: ``"words"`` (each word separately) or ``"text"`` (the surface text).
        warn: see :func:`surface_align`.

    Returns:
        The sentence's :class:`WordAlignment`.

    Example:
        >>> align_sentence(tok, ["The", "cat"], "words").n_words   # doctest: +SKIP
        2
    """
    aligner = get_aligner(tokenize)
    return aligner(tokenizer, sentence, warn=warn) if aligner is surface_align else aligner(tokenizer, sentence)
