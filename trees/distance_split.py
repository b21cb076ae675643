"""Kim et al. 2020's constituency decoder: split top-down at the largest distance between neighbours.

"Are pre-trained language models aware of phrases? Simple but strong baselines for grammar
induction" (Kim, Choi, Edmiston, Bae, Lee; ICLR 2020). A sentence of m words has m − 1 *gaps*;
gap k (0-based) lies between words k and k+1 and has a syntactic distance d_k.

Tree: the span [a, b) of the sentence splits at the gap with the largest distance inside it,
into [a, k+1) and [k+1, b), and each part is split again until single words remain (a binary
tree; ties go to the leftmost gap, as ``numpy.argmax``). This is the ``parser`` of the authors'
code (``utils/parser.py`` in github.com/galsang/trees_from_transformers, read at commit a820f34),
not its optional "NOT-COO" variant.

Right-branching bias λ (``bias``), exactly as that code's ``run.py`` applies it: ONCE, to the
whole sentence's m − 1 distances before any split (sub-spans reuse the biased values, nothing
is recomputed per span), and only when there are at least two gaps (m ≥ 3):

    d̂_k = d_k + λ · mean(d) · (1 − k / (m − 2)),    k = 0 … m − 2,

so the first gap gets + λ·mean(d), the last one + 0 and the bias falls linearly in between
(written 1-based over the gaps i = 1 … m − 1: (1 − (i − 1)/(m − 2)); the denominator is the
number of gaps minus one). λ = 0 (the default) is the plain decoder; a large λ pushes splits to
the left, towards a right-branching tree.

Distances of adjacent words from a word-level matrix F (:func:`adjacent_distances`): for a
distance matrix (probe ``distance``; F ≥ 0, low = close) d_k = (F[k, k+1] + F[k+1, k]) / 2; for
an affinity matrix (every other probe: high = close) a_k = (F[k, k+1] + F[k+1, k]) / 2 and
d_k = max(a) − a_k, so that distances are non-negative and mean(d) — and with it λ — keeps its
meaning.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from pmask.common.errors import DecodeError, at
from pmask.corpora.brackets import LABEL
from pmask.trees.validate import check_impact

if TYPE_CHECKING:
    from nltk import Tree


def adjacent_distances(F, *, distance: bool = True, where: str | None = None) -> np.ndarray:
    """The m − 1 distances d_k between words k and k+1 of an m × m matrix ``F`` (module docstring).

    Example:
        >>> F = np.array([[0, 1, 9], [1, 0, 4], [9, 4, 0]], dtype=float)
        >>> adjacent_distances(F).tolist(), adjacent_distances(F, distance=False).tolist()
        ([1.0, 4.0], [3.0, 0.0])
    """
    F = check_impact(F, where=where)
    k = np.arange(F.shape[0] - 1)
    between = (F[k, k + 1] + F[k + 1, k]) / 2.0
    if distance or not len(between):
        return between
    return between.max() - between


def right_skew(d: Sequence[float] | np.ndarray, bias: float) -> np.ndarray:
    """Kim et al.'s right-branching bias applied to the whole sentence's distances (module docstring).

    Example:
        >>> right_skew([1.0, 2.0, 3.0], 1.0).tolist()     # mean 2: + 2, + 1, + 0
        [3.0, 3.0, 3.0]
    """
    gaps = np.asarray(d, dtype=np.float64)
    if not bias or len(gaps) < 2:
        return gaps.copy()
    return gaps + bias * gaps.mean() * (1.0 - np.arange(len(gaps)) / (len(gaps) - 1))


def distance_split(words: Sequence[str], d: Sequence[float] | np.ndarray, *, bias: float = 0.0,
                   where: str | None = None) -> Tree:
    """The binary tree over ``words`` from the top-down splits at the largest biased distance.

    Args:
        words: the m words.
        d: the m − 1 distances between neighbours (:func:`adjacent_distances`).
        bias: λ, the right-branching bias (0 = none).
        where: "file:line (sentence id)" for error messages.

    Returns:
        An ``nltk.Tree`` labelled "X" with the words as leaves (``(X w)`` for one word).

    Example:
        >>> print(distance_split(["a", "b", "c"], [0.2, 0.9]))
        (X (X a b) c)
    """
    from nltk import Tree

    words = list(words)
    gaps = np.asarray(d, dtype=np.float64)
    if not words:
        raise DecodeError(f"{at(where)}cannot build a tree over an empty sentence")
    if gaps.shape != (len(words) - 1,) or not np.all(np.isfinite(gaps)):
        raise DecodeError(f"{at(where)}distance-split needs {len(words) - 1} finite distances between neighbours, "
                          f"got {gaps.shape[0] if gaps.ndim == 1 else gaps.shape}")
    if len(words) == 1:
        return Tree(LABEL, [words[0]])
    biased = right_skew(gaps, bias)

    def build(a: int, b: int):
        if b - a == 1:
            return words[a]
        k = a + int(np.argmax(biased[a:b - 1]))       # gap k lies between words k and k + 1
        return Tree(LABEL, [build(a, k + 1), build(k + 1, b)])

    return build(0, len(words))
