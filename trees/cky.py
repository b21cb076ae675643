"""CKY over binary trees for span charts (probe ``distortion``, Li & Lu 2023): the minimum-score tree.

A span chart ``S`` (n × n, upper triangle) scores the span of words l..r-1 at ``S[l, r-1]``; low =
constituent. Before decoding, each length's scores are L2-normalised as one vector
(:func:`normalise_by_length`: the diagonal ``S[l, l+k]``, l = 0 … n-1-k, of spans of k+1 words; an
all-zero vector stays zero), so that no span length dominates the sum. The tree is the binary
tree over the n words whose spans (every node: the words, the whole sentence and everything in
between) have the smallest sum of normalised scores; ties go to the smallest split point, as
Python's ``min`` over the split points in the authors' ``parse_eval.py``.

``faithful=True`` reproduces the authors' arithmetic where it can decide a tie: the normalised
chart rounded to float32 and every sum taken in float32 in their order ((left + right) + span).
The default sums in float64: the same tree except where two trees' float32 sums tie or cross.

Example:
    >>> S = np.array([[0., 1., 0.], [0., 0., 9.], [0., 0., 0.]])
    >>> print(cky(S, ["a", "b", "c"]))
    (X (X a b) c)
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from pmask.common.errors import DecodeError, at
from pmask.corpora.brackets import LABEL

if TYPE_CHECKING:
    from nltk import Tree


def normalise_by_length(chart: np.ndarray) -> np.ndarray:
    """Each length's span scores divided by their L2 norm (float64; the upper triangle only).

    Example:
        >>> normalise_by_length(np.array([[3., 1.], [0., 4.]])).round(2).tolist()
        [[0.6, 1.0], [0.0, 0.8]]
    """
    S = np.triu(np.asarray(chart, dtype=np.float64))
    out = np.zeros_like(S)
    n = S.shape[0]
    for k in range(n):
        left = np.arange(n - k)
        values = S[left, left + k]
        norm = np.sqrt((values ** 2).sum())
        out[left, left + k] = values / norm if norm > 0 else values
    return out


def cky_spans(scores: np.ndarray, *, faithful: bool = False) -> list[tuple[int, int]]:
    """The spans [l, r) of length ≥ 2 of the minimum-score binary tree over ``scores`` (n × n,
    already normalised), the whole sentence first, then top-down left to right."""
    n = scores.shape[0]
    dtype = np.float32 if faithful else np.float64
    S = np.asarray(scores, dtype=dtype)
    best = np.zeros((n + 1, n + 1), dtype=dtype)    # best[l, r]: the best subtree over [l, r)
    split = np.zeros((n + 1, n + 1), dtype=np.int64)
    for i in range(n):
        best[i, i + 1] = S[i, i]
    for length in range(2, n + 1):
        for left in range(n + 1 - length):
            right = left + length
            mids = np.arange(left + 1, right)
            totals = (best[left, mids] + best[mids, right]) + S[left, right - 1]
            k = int(np.argmin(totals))                # the first minimum: the smallest split
            split[left, right] = mids[k]
            best[left, right] = totals[k]
    out: list[tuple[int, int]] = []
    stack = [(0, n)]
    while stack:
        left, right = stack.pop()
        if right - left >= 2:
            out.append((left, right))
            mid = int(split[left, right])
            stack.extend([(mid, right), (left, mid)])
    return out


def tree_from_spans(words: Sequence[str], spans: Sequence[tuple[int, int]]) -> Tree:
    """The binary ``nltk.Tree`` (label "X") with the given spans of length ≥ 2 (whole sentence first)."""
    from nltk import Tree

    words = list(words)
    if len(words) == 1:
        return Tree(LABEL, words)
    children = {(a, b) for a, b in spans}

    def build(a: int, b: int) -> Tree | str:
        if b - a == 1:
            return words[a]
        mid = next(m for m in range(a + 1, b) if ((m - a == 1 or (a, m) in children)
                                                   and (b - m == 1 or (m, b) in children)))
        return Tree(LABEL, [build(a, mid), build(mid, b)])

    return build(0, len(words))


def cky(chart: np.ndarray, words: Sequence[str], *, faithful: bool = False, where: str | None = None) -> Tree:
    """The minimum-score binary tree over ``words`` from a span chart (normalised here; module docstring).

    Args:
        chart: n × n span scores, ``chart[l, r-1]`` for words l..r-1 (low = constituent).
        words: the n words (the tree's leaves).
        faithful: the authors' float32 arithmetic.
        where: "file:line (sentence id)" for error messages.

    Returns:
        A binary ``nltk.Tree`` labelled "X".

    Raises:
        DecodeError: a chart that does not fit the sentence or holds NaN or infinity.
    """
    S = np.asarray(chart, dtype=np.float64)
    n = len(words)
    if S.ndim != 2 or S.shape != (n, n):
        raise DecodeError(f"{at(where)}span chart of shape {S.shape} for {n} words")
    if not np.isfinite(S).all():
        raise DecodeError(f"{at(where)}span chart holds NaN or infinity")
    normalised = normalise_by_length(S)
    return tree_from_spans(words, cky_spans(normalised, faithful=faithful))
