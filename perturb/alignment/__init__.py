"""Word <-> word-piece alignment: which model tokens each word of a sentence owns.

Each tokenisation mode (:class:`pmask.common.tokenization.TokenizeMode`, ``--tokenize``) is registered here with its
aligner ``(tokenizer, sentence, *, warn) -> WordAlignment``: ``words`` (:mod:`.words`, the paper's scheme), ``text``
(:mod:`.surface`, the running text mapped by offsets), ``words-ptb`` (:mod:`.context`, Hoover et al.'s
adjustments), ``bare`` (:mod:`.words`, no special tokens) and ``echo``, ``echo-prompt`` (:mod:`.echo`, the
sentence twice: both sides for a causal model). The engine reads a sentence only through
:func:`align_sentence`. Importing this package registers the modes (torch-free; ``pmask/__init__.py`` imports it).

May import: ``pmask.common``. Imported by the engine, the store filler and the tests.
"""
from __future__ import annotations

from typing import Any, Callable

from pmask.common.tokenization import TOKENIZE_ENTRIES, TokenizeMode, tokenize_mode
from pmask.perturb.alignment.context import add_context_pieces, ptb_align, sentence_context
from pmask.perturb.alignment.echo import echo_align, echo_prompt_align
from pmask.perturb.alignment.surface import SurfaceLayout, surface_align, surface_layout
from pmask.perturb.alignment.word_alignment import WordAlignment
from pmask.perturb.alignment.words import align, align_bare, sentence_words


def words_align(tokenizer: Any, sentence: Any, *, warn: bool = True) -> WordAlignment:
    """The ``words`` alignment (:func:`align`), laid out with the sentence's context words if it carries any."""
    return add_context_pieces(tokenizer, align(tokenizer, sentence), sentence)


def _quiet(aligner: Callable[[Any, Any], WordAlignment]) -> Callable[..., WordAlignment]:
    """``aligner`` with the one signature of the modes' aligners (a mode that maps every word has nothing to say)."""
    def run(tokenizer: Any, sentence: Any, *, warn: bool = True) -> WordAlignment:
        return aligner(tokenizer, sentence)
    run.__doc__ = aligner.__doc__
    return run


# The modes in documentation order (``--tokenize``'s choices; ``words`` first: the default).
TOKENIZE_ENTRIES.register(TokenizeMode(
    "words", "tokenise every word separately (the paper's setting)", aligner=words_align))
TOKENIZE_ENTRIES.register(TokenizeMode(
    "text", "tokenise the surface text (SpaceAfter, multiword tokens) and map pieces to words by offsets",
    aligner=surface_align, takes_context=False))
TOKENIZE_ENTRIES.register(TokenizeMode(
    "words-ptb", "as words, after Hoover et al. 2021's adjustments: PTB bracket tokens (-LRB- ...) read as brackets, "
                 "and the n of a word tokenised n ' t moved onto the previous word's last piece (their --faithful)",
    aligner=_quiet(ptb_align)))
TOKENIZE_ENTRIES.register(TokenizeMode(
    "bare", "as words, but without the model's special tokens ([CLS], [SEP]): Kim et al. 2020's input (probe "
            "distance, --faithful)", aligner=_quiet(align_bare), special_tokens=False, takes_context=False))
TOKENIZE_ENTRIES.register(TokenizeMode(
    "echo", "as words, the sentence given twice (a newline between): each word read in the second copy, attended "
            "at in the first, so a causal model's word sees both sides (probes attention and distance)",
    aligner=echo_align, takes_context=False, probes=("attention", "distance")))
TOKENIZE_ENTRIES.register(TokenizeMode(
    "echo-prompt", "as echo, inside Springer et al. 2024's template: 'Rewrite the sentence:' before the first copy, "
                   "a newline and 'Rewritten sentence:' between (probes attention and distance)",
    aligner=echo_prompt_align, takes_context=False, probes=("attention", "distance")))

__all__ = ["SurfaceLayout", "WordAlignment", "align", "align_sentence", "get_aligner", "ptb_align",
           "sentence_context", "sentence_words", "surface_align", "surface_layout", "words_align"]


def get_aligner(name: str | None) -> Callable[..., WordAlignment]:
    """The aligner of tokenisation mode ``name``; ``OptionError`` (a ``ValueError``) for an unknown one."""
    return tokenize_mode(name).aligner


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
    return get_aligner(tokenize)(tokenizer, sentence, warn=warn)
