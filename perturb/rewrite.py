"""Perturbed sequences: model inputs that rewrite a sentence, not only mask its words in place.

The pair and single probes (:mod:`pmask.perturb.jobs`) mask at most two words of the sentence
and keep every other token where it was. A span probe (contextual distortion) needs inputs
that *rewrite* the sentence: a span replaced by one mask, a span alone between masks, a span
moved to the front with commas between the parts. This module describes such an input as a
list of *units* (a word of the sentence by its 0-based index, :data:`MASK` or :data:`COMMA`),
builds its tokens from the sentence's own word pieces (so a word is tokenised the same way in
every rewrite); :class:`Rewriting` is a job's list of such inputs, the second kind of sequences
of the perturbation model (:mod:`pmask.perturb.perturbation`), run by the one engine loop
(:class:`pmask.perturb.engine.BatchRunner`) under the same token budget as masked sequences.

Example:
    >>> units = [MASK, 2, COMMA, 0, 1]          # "[MASK] w2 , w0 w1"
    >>> [u for u in units if u >= 0]            # the word units a rewrite returns vectors for
    [2, 0, 1]
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from pmask.common.errors import ModelError
from pmask.perturb.alignment import WordAlignment

MASK = -1    # unit: one mask token
COMMA = -2   # unit: the tokenizer's pieces of ","


class SentencePieces:
    """A sentence's word pieces and special tokens, to build rewrites of it.

    Args:
        alignment: the sentence's :class:`WordAlignment` (words must not share pieces).
        mask_id: the tokenizer's mask token id.
        comma_ids: the tokenizer's pieces of ",".
    """

    def __init__(self, alignment: WordAlignment, mask_id: int, comma_ids: Sequence[int]):
        ids = np.asarray(alignment.input_ids, dtype=np.int64)
        self.pieces = [ids[alignment.pieces(k)] for k in range(alignment.n_words)]
        owners = np.asarray(alignment.word_index)
        words = np.flatnonzero(owners >= 0)
        if sum(len(p) for p in self.pieces) != len(words):
            raise ModelError("a span probe needs words that own their pieces (--tokenize words)")
        self.prefix = ids[:words[0]]              # e.g. [CLS]
        self.suffix = ids[words[-1] + 1:]         # e.g. [SEP]
        self.mask = np.array([mask_id], dtype=np.int64)
        self.comma = np.asarray(comma_ids, dtype=np.int64)
        self.n_words = alignment.n_words

    def build(self, units: Sequence[int]) -> tuple[np.ndarray, list[np.ndarray]]:
        """Token ids of the rewrite ``units`` and, for each word unit in order, its token positions."""
        parts, positions = [self.prefix], []
        at = len(self.prefix)
        for u in units:
            piece = self.pieces[u] if u >= 0 else (self.mask if u == MASK else self.comma)
            if u >= 0:
                positions.append(np.arange(at, at + len(piece)))
            parts.append(piece)
            at += len(piece)
        parts.append(self.suffix)
        return np.concatenate(parts), positions

    def length(self, units: Sequence[int]) -> int:
        """Tokens in the rewrite ``units`` (special tokens included)."""
        return len(self.prefix) + len(self.suffix) + sum(
            len(self.pieces[u]) if u >= 0 else (1 if u == MASK else len(self.comma)) for u in units)


def comma_pieces(tokenizer: Any) -> list[int]:
    """The tokenizer's pieces of "," (without special tokens)."""
    ids = tokenizer(",", add_special_tokens=False)["input_ids"]
    if not ids:
        raise ModelError("the tokenizer turns ',' into no piece; movement perturbations need one")
    return list(ids)


class Rewriting:
    """A job's rewritten inputs of one sentence, in run order (:class:`pmask.perturb.perturbation.Sequences`).

    Args:
        sentence: the sentence's pieces.
        rewrites: each a list of units (word index, :data:`MASK`, :data:`COMMA`).

    Attributes:
        offsets: [S + 1] token offsets of the sequences end to end.
        word_positions: per sequence, the token positions of each of its word units, in unit order.
    """

    def __init__(self, sentence: SentencePieces, rewrites: Sequence[Sequence[int]]):
        built = [sentence.build(units) for units in rewrites]
        self.offsets = np.concatenate([[0], np.cumsum([len(ids) for ids, _ in built])]).astype(np.int64)
        self.ids = np.concatenate([ids for ids, _ in built]) if built else np.zeros(0, dtype=np.int64)
        self.word_positions = [positions for _, positions in built]

    def tokens(self, start: int, stop: int) -> np.ndarray:
        return self.ids[self.offsets[start]:self.offsets[stop]]
