"""Echo layouts (``--tokenize echo``, ``echo-prompt``): the sentence given twice, read in the second copy.

A causal LM's word sees only the words before it. Given the sentence twice, a word of the second copy sees
the whole first copy: both sides of the sentence. An echo alignment lays the input out as ``start before
sentence between sentence (end)`` (the start and end tokens the ``words`` layout has; ``echo``: a newline
between the copies; ``echo-prompt``: Springer et al.'s echo-embedding template, "Rewrite the sentence:"
before, a newline and "Rewritten sentence:" between) and maps each word to its pieces in the second copy,
where it is read, and to its first copy's pieces as the positions it is attended at
(``WordAlignment.key_pieces``): probe ``attention`` then reads the attention of word i (second copy) to
word j (first copy), for every i ≠ j, and probe ``distance`` the distances between the second copy's states.
Both copies are tokenised word by word, as ``words`` does; the template's text exactly as given (no space
marker added in front of it).

Example:
    >>> from pmask.perturb.alignment.word_alignment import WordAlignment
    >>> echoed(WordAlignment([1, 7, 8, 9], [-1, 0, 1, 1]), [], [5]).input_ids
    [1, 7, 8, 9, 5, 7, 8, 9]
"""
from __future__ import annotations

from typing import Any

from pmask.perturb.alignment.subword_lists import plain_tokenize
from pmask.perturb.alignment.word_alignment import WordAlignment
from pmask.perturb.alignment.words import align

#: Springer et al. 2024's echo-embedding template: the text before the first copy and between the copies.
PROMPT = ("Rewrite the sentence:", "\nRewritten sentence:")


def echoed(alignment: WordAlignment, before: list[int], between: list[int]) -> WordAlignment:
    """``alignment`` (of the ``words`` layout) laid out twice: ``head before pieces between pieces tail``, its
    words read in the second copy and attended at in the first."""
    inside = [t for t, w in enumerate(alignment.word_index) if w >= 0]
    lo, hi = inside[0], inside[-1] + 1
    head, body, tail = alignment.input_ids[:lo], alignment.input_ids[lo:hi], alignment.input_ids[hi:]
    first = len(head) + len(before)
    second = first + len(body) + len(between)
    index = list(alignment.word_index[lo:hi])
    ids = list(head) + before + list(body) + between + list(body) + list(tail)
    word_index = [-1] * second + index + [-1] * len(tail)
    moved = [[p - lo for p in alignment.pieces(k)] for k in range(alignment.n_words)]
    return WordAlignment(ids, word_index, alignment.n_words, word_pieces=[[p + second for p in s] for s in moved],
                         key_pieces=[[p + first for p in s] for s in moved])


def _ids(tokenizer: Any, text: str) -> list[int]:
    return [int(t) for t in tokenizer.convert_tokens_to_ids(plain_tokenize(tokenizer)(text))]


def echo_align(tokenizer: Any, sentence: Any, *, warn: bool = True) -> WordAlignment:
    """The ``echo`` layout: ``start sentence \\n sentence``."""
    return echoed(align(tokenizer, sentence), [], _ids(tokenizer, "\n"))


def echo_prompt_align(tokenizer: Any, sentence: Any, *, warn: bool = True) -> WordAlignment:
    """The ``echo-prompt`` layout: ``start Rewrite the sentence: sentence \\nRewritten sentence: sentence``."""
    return echoed(align(tokenizer, sentence), _ids(tokenizer, PROMPT[0]), _ids(tokenizer, PROMPT[1]))
