"""Perturbed sequences: model inputs that rewrite a sentence, not only mask its words in place.

The pair and single probes (:mod:`pmask.perturb.engine.jobs`) mask at most two words of the sentence
and keep every other token where it was. A span probe (contextual distortion) needs inputs
that *rewrite* the sentence: a span replaced by one mask, a span alone between masks, a span
moved to the front with commas between the parts. This module describes such an input as a
list of *units* (a word of the sentence by its 0-based index, :data:`MASK` or :data:`COMMA`),
builds its tokens from the sentence's own word pieces (so a word is tokenised the same way in
every rewrite); :class:`Rewriting` is a job's list of such inputs, the second kind of sequences
of the perturbation model (:mod:`pmask.perturb.engine.perturbation`), run by the one engine loop
(:class:`pmask.perturb.engine.runner.BatchRunner`) under the same token budget as masked sequences.

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
_PREFIX, _SUFFIX = -3, -4   # the special tokens around every rewrite (units of the piece table only)


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
        # every unit's tokens in one table, unit u at row u - _SUFFIX, for building many rewrites at once
        table = [self.suffix, self.prefix, self.comma, self.mask, *self.pieces]
        self.table = np.concatenate(table).astype(np.int64)
        self.table_length = np.array([len(t) for t in table], dtype=np.int64)
        self.table_start = np.cumsum(self.table_length) - self.table_length

    def framed(self, rewrites: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
        """Every unit of ``rewrites`` end to end, the special tokens' units around each rewrite, as rows of
        the piece table; and the index of each rewrite's first unit."""
        rows = np.fromiter((u - _SUFFIX for units in rewrites for u in (_PREFIX, *units, _SUFFIX)), dtype=np.int64)
        first = np.cumsum([0] + [len(units) + 2 for units in rewrites[:-1]]) if len(rewrites) else np.zeros(0)
        return rows, np.asarray(first, dtype=np.int64)

    def lengths(self, rewrites: Sequence[Sequence[int]]) -> np.ndarray:
        """Tokens in each of ``rewrites`` (special tokens included), [len(rewrites)] int64."""
        rows, first = self.framed(rewrites)
        return np.add.reduceat(self.table_length[rows], first) if len(first) else np.zeros(0, dtype=np.int64)

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
    """A job's rewritten inputs of one sentence, in run order (:class:`pmask.perturb.engine.perturbation.Sequences`),
    built at once from the sentence's piece table (the tokens of each rewrite as :meth:`SentencePieces.build`).

    Args:
        sentence: the sentence's pieces.
        rewrites: each a list of units (word index, :data:`MASK`, :data:`COMMA`).

    Attributes:
        offsets: [S + 1] token offsets of the sequences end to end.
        ids: [offsets[-1]] their tokens.
        unit_sequence, unit_position, unit_length, unit_word: [W] each word unit over all rewrites in
            order: its sequence, its first token's position there, its number of tokens, its word.
    """

    def __init__(self, sentence: SentencePieces, rewrites: Sequence[Sequence[int]]):
        rows, first = sentence.framed(rewrites)
        length = sentence.table_length[rows]                         # tokens of each unit
        unit_first = np.cumsum(length) - length                      # its first token end to end
        total = int(length.sum())
        self.ids = sentence.table[np.repeat(sentence.table_start[rows] - unit_first, length) + np.arange(total)]
        per_rewrite = np.add.reduceat(length, first) if len(first) else np.zeros(0, dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(per_rewrite)]).astype(np.int64)
        rewrite = np.repeat(np.arange(len(first)), np.diff(np.append(first, len(rows))))
        word = rows >= -_SUFFIX
        self.unit_sequence = rewrite[word]
        self.unit_position = unit_first[word] - self.offsets[self.unit_sequence]
        self.unit_length = length[word]
        self.unit_word = rows[word] + _SUFFIX

    def tokens(self, start: int, stop: int) -> np.ndarray:
        return self.ids[self.offsets[start]:self.offsets[stop]]
