"""Build dependency score matrices from a word-level impact matrix.

Conventions: ``F`` is the n x n impact matrix over words, ``F[i][j]`` = impact of word j on
word i (0-based).  The result is the (n+1)x(n+1) matrix ``scores[dependent, head]`` with
index 0 = ROOT and words 1..n, so ``scores[i+1, j+1] = F[i][j]`` = score of "word j+1 heads
word i+1".  Row 0 and the diagonal are unused by the decoders and set to 0.
"""
from __future__ import annotations

import numpy as np

from pmask.trees.validate import check_impact, check_scores

NORMALIZATIONS = ("none", "log_softmax")


def dependency_scores(F, *, root_score=0.0, normalize: str = "none", arc_bias: float = 0.0,
                      where: str | None = None) -> np.ndarray:
    """The clean default (n+1)x(n+1) ``scores[dependent, head]`` built from an n x n ``F``.

    - ROOT column: ``scores[1:, 0] = root_score`` (a float, or a length-n array of per-word
      ROOT scores).  A constant ROOT column cannot matter for single-root or given-root
      decoding (every such tree has exactly one ROOT arc, so the constant shifts every tree
      by the same amount).  It only acts in ``multiroot`` decoding, as the price of attaching
      a word to ROOT; 0.0 (the default) never beats a non-negative impact distance, so raw
      impact distances rarely produce extra ROOT children.
    - ``normalize="none"`` (default): raw impacts.  ``"log_softmax"``: a row-wise log-softmax
      over the heads of each dependent (ROOT included, self excluded).  That subtracts one
      constant per dependent row, and every tree takes exactly one arc per row, so every tree's
      score drops by the same sum: first-order decoders (Eisner, CLE, any root mode) return the
      same tree as with raw scores (tested).  Raw is therefore the default; the normalised form
      is offered only for probability-like inspection.
    - ``arc_bias=λ``: adds ``λ·(−|i−j|)`` to every word-to-word arc (a short-arc preference,
      as the authors used for their sentiment experiment); ROOT arcs get no bias.  Off (0.0)
      by default.  Applied before normalisation.

    Raises DecodeError for NaN/inf or a non-square F.
    """
    F = check_impact(F, where=where)
    if normalize not in NORMALIZATIONS:
        raise ValueError(f"normalize must be one of {NORMALIZATIONS}, got {normalize!r}")
    n = F.shape[0]
    scores = np.zeros((n + 1, n + 1), dtype=np.float64)
    scores[1:, 1:] = F
    root_col = np.broadcast_to(np.asarray(root_score, dtype=np.float64), (n,)) if n else np.zeros(0)
    scores[1:, 0] = root_col
    if arc_bias:
        pos = np.arange(1, n + 1)
        scores[1:, 1:] -= float(arc_bias) * np.abs(pos[:, None] - pos[None, :])
    if normalize == "log_softmax" and n:
        rows = scores[1:].copy()
        rows[np.arange(n), np.arange(1, n + 1)] = -np.inf  # a word is not its own head
        m = rows.max(axis=1, keepdims=True)
        lse = m + np.log(np.exp(rows - m).sum(axis=1, keepdims=True))
        scores[1:] -= lse
    np.fill_diagonal(scores, 0.0)
    scores[0] = 0.0
    return check_scores(scores, where=where)


def tree_score(scores, heads) -> float:
    """Sum of ``scores[k, heads[k-1]]`` over words k = 1..n (the first-order tree score)."""
    s = np.asarray(scores, dtype=np.float64)
    h = np.asarray(heads, dtype=np.int64)
    return float(s[np.arange(1, len(h) + 1), h].sum())
