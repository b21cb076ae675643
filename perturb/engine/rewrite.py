"""Perturbed sequences: model inputs that rewrite a sentence, not only mask its words in place.

The pair and single probes (:mod:`pmask.perturb.engine.jobs`) mask at most two words of the sentence
and keep every other token where it was. A span probe (contextual distortion) needs inputs
that *rewrite* the sentence: a span replaced by one mask, a span alone between masks, a span
moved to the front with commas between the parts. This module describes such an input as a
list of *units* (a word of the sentence by its 0-based index, :data:`MASK` or :data:`COMMA`),
builds its tokens from the sentence's own word pieces (so a word is tokenised the same way in
every rewrite), runs many rewrites in token-budgeted packed batches, and returns one vector per
word unit: the mean of its pieces' hidden states at each requested layer.

Example:
    >>> units = [MASK, 2, COMMA, 0, 1]          # "[MASK] w2 , w0 w1"
    >>> [u for u in units if u >= 0]            # the word units a rewrite returns vectors for
    [2, 0, 1]
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch

from pmask.common.errors import ModelError
from pmask.perturb.alignment import WordAlignment
from pmask.perturb.encoders import Encoder, pack

MASK = -1    # unit: one mask token
COMMA = -2   # unit: the tokenizer's pieces of ","


@dataclass
class RewriteStats:
    """Counters of :func:`rewrite_vectors` (they accumulate)."""

    sequences: int = 0
    tokens: int = 0
    batches: int = 0


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


def rewrite_vectors(lm: Any, encoder: Encoder, sentence: SentencePieces, rewrites: Sequence[Sequence[int]],
                    layers: Sequence[int], budget: int, stats: RewriteStats | None = None,
                    dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """Word vectors of every word unit of every rewrite, end to end in rewrite and unit order.

    Args:
        lm: a ``pmask.perturb.LoadedModel``.
        encoder: its encoder path (``Encoder.states``).
        sentence: the sentence's pieces.
        rewrites: each a list of units (word index, :data:`MASK`, :data:`COMMA`).
        layers: absolute layer indices (0 = embeddings).
        budget: tokens per packed batch (a longer single rewrite runs alone).
        stats: counters to add to.
        dtype: of the returned vectors (pieces are averaged in it).

    Returns:
        ``[G, len(layers), D]``: G = the number of word units over all rewrites.
    """
    built = [sentence.build(units) for units in rewrites]
    vectors: list[torch.Tensor] = []
    start = 0
    while start < len(built):
        stop, tokens = start, 0
        while stop < len(built) and (stop == start or tokens + len(built[stop][0]) <= budget):
            tokens += len(built[stop][0])
            stop += 1
        vectors.append(_run(lm, encoder, built[start:stop], layers, dtype))
        if stats is not None:
            stats.sequences += stop - start
            stats.tokens += tokens
            stats.batches += 1
        start = stop
    return torch.cat(vectors) if vectors else torch.zeros((0, len(layers), 0), dtype=dtype)


def _run(lm: Any, encoder: Encoder, built: list[tuple[np.ndarray, list[np.ndarray]]], layers: Sequence[int],
         dtype: torch.dtype) -> torch.Tensor:
    """One packed batch: the pooled word-unit vectors of ``built`` in input order."""
    order = sorted(range(len(built)), key=lambda k: len(built[k][0]))   # equal lengths share one attention call
    lengths = np.array([len(built[k][0]) for k in order])
    rows, pos, group = [], [], []
    first = np.concatenate([[0], np.cumsum([len(p) for _, p in built])]).astype(np.int64)
    for rank, k in enumerate(order):
        for unit, positions in enumerate(built[k][1]):
            rows.append(np.full(len(positions), rank))
            pos.append(positions)
            group.append(np.full(len(positions), first[k] + unit))
    read_row = np.concatenate(rows).astype(np.int64)
    read_pos = np.concatenate(pos).astype(np.int64)
    read_group = torch.as_tensor(np.concatenate(group), device=lm.device)
    batch = pack(np.concatenate([built[k][0] for k in order]), lengths, read_row, read_pos, lm.device)
    with torch.inference_mode():
        states = encoder.states(batch, list(layers)).to(dtype)               # [reads, L, D]
        total = int(first[-1])
        sums = torch.zeros((total,) + tuple(states.shape[1:]), dtype=dtype, device=states.device)
        sums.index_add_(0, read_group, states)
        counts = torch.bincount(read_group, minlength=total).to(dtype)
        return (sums / counts[:, None, None]).cpu()
