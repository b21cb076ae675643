"""MART: the paper's top-down splitting of a sentence into an unlabelled constituency tree.

Input ``F`` is the n x n word-level impact matrix (``F[i][j]`` = impact of word j on word i,
no ROOT/[CLS]); output an ``nltk.Tree`` with internal label "X" and the words as leaves
(a one-word sentence is ``(X w)``).

Distance matrix, computed ONCE for the whole sentence: ``P[:, j] = softmax(F[:, j])`` (a
column-wise softmax, over i, diagonal included), zero P's diagonal, ``D = 1 − P``, zero D's
diagonal again.  Each span uses D's sub-block (no re-normalisation inside spans).

``variant="three-way"`` (the authors' decoder): for a span of m words and each split word
k in 1..m−1 (0-based within the span), with word k itself left out of all three terms,
    left    = ΣD[:k, :k] / (2k)
    right   = ΣD[k+1:, k+1:] / (2(m−k))
    between = (ΣD[:k, k+1:] + ΣD[k+1:, :k]) / (k(m−k))
the split is argmin(left + right − between) and the node is
``[MART(x<k), [x_k, MART(x>k)]]`` (a right-branching bias: x_k opens the right part).  The
denominators are the spec's, literally (2(m−k) and k(m−k), not m−k−1: the right part's
size is m−k−1); for k = m−1 the right part is empty and its sums are 0 (0/0 := 0 in
general).  Since k ≥ 1 the left part is never empty; an empty right part makes x_k a bare
leaf, and a node with one child collapses into that child.

``variant="binary"``: k in 1..m−1 splits the span into x[:k] and x[k:] (no word set apart),
    left = ΣD[:k,:k]/(2k), right = ΣD[k:,k:]/(2(m−k)), between = (ΣD[:k,k:]+ΣD[k:,:k])/(k(m−k)),
and the node is ``[MART(x[:k]), MART(x[k:])]``.

Ties: objectives within ``1e-9·max(1, max|objective|)`` of the minimum are treated as equal
and the smallest k wins (block sums come from a 2-D prefix-sum table, so exact ties would
otherwise be decided by rounding).  Cost: O(n^2) for the table plus O(m) per span.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pmask.common.errors import DecodeError, at
from pmask.corpora.brackets import LABEL
from pmask.trees.validate import check_impact

if TYPE_CHECKING:
    from nltk import Tree

VARIANTS = ("three-way", "binary")
TIE_RTOL = 1e-9


def mart_distance(F) -> np.ndarray:
    """D = 1 − column-softmax(F), diagonals zeroed before and after (module docstring)."""
    F = np.asarray(F, dtype=np.float64)
    e = np.exp(F - F.max(axis=0, keepdims=True))
    P = e / e.sum(axis=0, keepdims=True)
    np.fill_diagonal(P, 0.0)
    D = 1.0 - P
    np.fill_diagonal(D, 0.0)
    return D


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den with 0/0 := 0."""
    den = np.asarray(den, dtype=np.float64)
    return np.divide(num, den, out=np.zeros_like(num, dtype=np.float64), where=den != 0)


class _Blocks:
    """O(1) block sums of D through a zero-padded 2-D prefix-sum table."""

    def __init__(self, D: np.ndarray):
        n = D.shape[0]
        self.Q = np.zeros((n + 1, n + 1))
        self.Q[1:, 1:] = D.cumsum(axis=0).cumsum(axis=1)

    def __call__(self, r0, r1, c0, c1):
        Q = self.Q
        return Q[r1, c1] - Q[r0, c1] - Q[r1, c0] + Q[r0, c0]


def split_objectives(blocks: _Blocks, a: int, b: int, variant: str) -> np.ndarray:
    """Objective left + right − between for k = 1..m−1 of span [a, b) (index 0 <-> k = 1)."""
    m = b - a
    k = np.arange(1, m)
    lo = a + k                                   # first word of the right part (binary) / x_k
    hi = lo + 1 if variant == "three-way" else lo
    left = _safe_div(blocks(a, lo, a, lo), 2 * k)
    right = _safe_div(blocks(hi, b, hi, b), 2 * (m - k))
    between = _safe_div(blocks(a, lo, hi, b) + blocks(hi, b, a, lo), k * (m - k))
    return left + right - between


def best_split(objective: np.ndarray) -> int:
    """Index of the smallest objective, ties (within TIE_RTOL) to the smallest index."""
    best = objective.min()
    tol = TIE_RTOL * max(1.0, float(np.abs(objective).max()))
    return int(np.flatnonzero(objective <= best + tol)[0])


def mart(F, words, variant: str = "three-way", *, where: str | None = None) -> Tree:
    """Unlabelled constituency tree of ``words`` from the n x n impact matrix ``F`` (module docstring)."""
    from nltk import Tree

    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    words = list(words)
    n = len(words)
    if n == 0:
        raise DecodeError(f"{at(where)}cannot build a tree over an empty sentence")
    F = check_impact(F, n=n, where=where)
    if n == 1:
        return Tree(LABEL, [words[0]])
    blocks = _Blocks(mart_distance(F))

    def build(a: int, b: int):
        if b - a == 1:
            return words[a]
        k = 1 + best_split(split_objectives(blocks, a, b, variant))
        s = a + k
        if variant == "binary":
            return Tree(LABEL, [build(a, s), build(s, b)])
        inner = words[s] if s + 1 == b else Tree(LABEL, [words[s], build(s + 1, b)])
        return Tree(LABEL, [build(a, s), inner])     # left part is never empty (k >= 1)

    tree = build(0, n)
    return tree
