"""From token positions to words for the one-pass probes: pooling matrices of one sentence.

Each sentence gets three small matrices over its T tokens (``m`` = n words, or n + 1 with the
first special token as index 0 in the ``include_cls`` layout):

- ``mean_rows`` [m, T]: row k averages the pieces of word k (a query side, or hidden states);
- ``sum_cols`` [m, T]: row k sums the pieces at which word k is attended to (the key side of attention: its
  pieces, or its first copy's in an echo layout, ``WordAlignment.keys``);
- ``units`` [U, T]: a partition of the tokens into words (a shared piece goes to its first word)
  and single special tokens, so that an attention row grouped by unit still sums to 1.

Clark et al. 2019's word-level attention is then ``mean_rows @ A @ sum_cols.T``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from pmask.perturb.alignment import WordAlignment

NO_WORD = -1


@dataclass
class WordPooling:
    """Pooling matrices of one sentence (see the module docstring) and the pairs set to 0."""

    mean_rows: torch.Tensor     # [m, T]
    first_rows: torch.Tensor    # [m, T] one-hot at each word's first piece
    sum_cols: torch.Tensor      # [m, T]
    units: torch.Tensor         # [U, T]
    zero: torch.Tensor          # [m, m] bool: the diagonal and words that share a piece


def word_pooling(alignment: WordAlignment, include_cls: bool, dtype: torch.dtype,
                 device: torch.device) -> WordPooling:
    """The :class:`WordPooling` of ``alignment``; with ``include_cls`` index 0 is its first special token.

    Example:
        >>> from pmask.perturb.alignment import WordAlignment
        >>> p = word_pooling(WordAlignment([1, 5, 6, 7, 2], [-1, 0, 1, 1, -1]), False, torch.float64,
        ...                  torch.device("cpu"))
        >>> p.mean_rows.tolist()
        [[0.0, 1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.5, 0.5, 0.0]]
    """
    n, length = alignment.n_words, len(alignment)
    # the token positions of each index: the special token (include_cls), then every word
    owners = ([[alignment.word_index.index(NO_WORD)]] if include_cls else []) + \
        [list(alignment.pieces(k)) for k in range(n)]
    m = len(owners)
    member = np.zeros((m, length))
    first = np.zeros((m, length))
    for k, positions in enumerate(owners):
        member[k, positions] = 1.0
        first[k, positions[0]] = 1.0
    keys = member.copy()                      # where each index is attended to (an echo layout's first copy)
    for k in range(n):
        keys[k + int(include_cls)] = 0.0
        keys[k + int(include_cls), alignment.keys(k)] = 1.0
    unit_of = [w if w >= 0 else n + t for t, w in enumerate(alignment.word_index)]
    names = sorted(set(unit_of))
    units = np.zeros((len(names), length))
    units[[names.index(u) for u in unit_of], np.arange(length)] = 1.0
    zero = (member @ member.T) > 0            # the diagonal, and words sharing a piece

    def to(a: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(a, dtype=dtype, device=device)

    return WordPooling(mean_rows=to(member / member.sum(1, keepdims=True)), first_rows=to(first),
                       sum_cols=to(keys), units=to(units), zero=torch.as_tensor(zero, device=device))
