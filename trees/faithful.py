"""The paper's setup: the authors' own dependency decoding, reproduced step by step.

Input layout ``F_cls`` ((n+1)x(n+1)) is the engine's ``include_cls=True`` matrix: index 0 is
``[CLS]``, words are 1..n, ``F_cls[i][j]`` = impact of j on i, row 0 = impact of each word on
``[CLS]`` and column 0 = 0.  ``root`` is the gold root (1-based).  Output ``heads`` (length n,
``heads[k-1]`` = head of word k, 0 = ROOT), as everywhere in pmask.trees.

This is what the paper's numbers (e.g. 41.7 UAS with bert-base-uncased on PUD, Eisner) come
from; the clean default (:func:`pmask.trees.dependency_scores` + :func:`eisner` /
:func:`chu_liu_edmonds`) treats ROOT and normalisation deliberately instead.

- Eisner: ``F[r,:] = 0; F[r,0] = 1; F[0,0] = 0``; their softmax ``e / e.sum(axis=1)`` with
  ``e = exp(F − max F)``, whose broadcasting divides column j by the sum of ROW j (a bug we
  keep): ``S[i][j] = exp(F[i][j] − max F) / Σ_k exp(F[j][k] − max F)``; then Kiperwasser &
  Goldberg's ``parse_proj`` on ``S.T`` read as ``scores[head, dep]``: ROOT may take several
  children (the gold root is only nudged, not forced) and ties go to the first maximum over
  split points, exactly as theirs (:func:`pmask.trees.eisner.eisner_core`, checked head for
  head against a loop transcription in the tests).
- CLE: ``F[0,:] = 0; F[r,:] = 0; F[r,0] = 1`` (r's only possible head is ROOT and, column 0
  being 0 elsewhere, r is ROOT's only child), raw distances, and Dozat's multiplicative
  objective: the arborescence maximising the PRODUCT of scores, i.e. the sum of logs with
  zero-score arcs impossible.  Solved exactly by Edmonds (numpy by default, networkx on
  request; see :mod:`pmask.trees.cle`) on log-scores with zero-score arcs removed; only if that leaves no
  spanning tree are zero word-to-word arcs re-admitted with a penalty below any tree of
  positive arcs (ROOT->r stays ROOT's only arc; Dozat's code would then return some
  zero-product tree).  Negative scores have no log and
  raise DecodeError.
"""
from __future__ import annotations

import logging

import numpy as np

from pmask.common.errors import DecodeError, at
from pmask.trees.cle import max_arborescence
from pmask.trees.eisner import eisner_core
from pmask.trees.validate import check_impact, check_root

logger = logging.getLogger(__name__)


def _check_cls(F_cls, root, where):
    F = check_impact(F_cls, where=where, name="F_cls").copy()
    n = F.shape[0] - 1
    if n < 1:
        raise DecodeError(f"{at(where)}F_cls must be (n+1)x(n+1) with n >= 1 words, got shape {F.shape}")
    if root is None:
        raise ValueError(f"{at(where)}the paper's (faithful) decoding needs the gold root (root=k)")
    return F, n, check_root(root, n, where=where)


def authors_softmax(F: np.ndarray) -> np.ndarray:
    """The authors' ``softmax``: ``e / e.sum(axis=1)`` with ``e = exp(F − max F)`` (column j / row-j sum)."""
    e = np.exp(F - np.max(F))
    with np.errstate(divide="ignore", invalid="ignore"):
        return e / e.sum(axis=1)


def faithful_eisner(F_cls, root: int, *, where: str | None = None) -> np.ndarray:
    """The authors' Eisner decoding of ``F_cls`` ((n+1)x(n+1), [CLS] = 0) with gold ``root`` -> heads (length n)."""
    F, n, r = _check_cls(F_cls, root, where)
    F[r, :] = 0
    F[r, 0] = 1
    F[0, 0] = 0
    S = authors_softmax(F)
    if not np.isfinite(S).all():
        raise DecodeError(f"{at(where)}the authors' softmax under/overflowed (impact range too wide)")
    heads = eisner_core(S.T, single_root=False)
    return heads[1:]


def faithful_cle(F_cls, root: int, *, backend: str = "numpy", where: str | None = None) -> np.ndarray:
    """The authors' Chu-Liu/Edmonds decoding of ``F_cls`` with gold ``root`` -> heads (length n).

    Maximises the product of ``F[dep, head]`` (Dozat's multiplicative contraction) over
    arborescences rooted at [CLS]/ROOT, after the authors' masking (module docstring).
    ``backend``: "numpy" (default) or "networkx" Edmonds on the log-scores (both exact).
    """
    F, n, r = _check_cls(F_cls, root, where)
    F[0, :] = 0
    F[r, :] = 0
    F[r, 0] = 1
    np.fill_diagonal(F, 0)
    if (F < 0).any():
        i, j = np.argwhere(F < 0)[0]
        raise DecodeError(
            f"{at(where)}the paper's CLE multiplies scores and needs non-negative impacts; "
            f"F_cls[{i}, {j}] = {F[i, j]}"
        )
    if n == 1:
        return np.zeros(1, dtype=np.int64)
    allowed = F > 0
    allowed[0] = False
    with np.errstate(divide="ignore"):
        logs = np.where(allowed, np.log(np.where(allowed, F, 1.0)), 0.0)
    try:
        heads = _arborescence_or_none(logs, allowed, backend)
    except _NoTree:
        # Zero arcs readmitted with a penalty that any all-positive tree beats.
        pos = logs[allowed]
        lo, hi = float(pos.min()), float(pos.max())
        penalty = lo - n * (hi - lo) - 1.0
        zero = ~allowed & ~np.eye(n + 1, dtype=bool)
        zero[0] = False                          # ROOT is nobody's dependent
        zero[r] = False                          # r keeps ROOT as its only head
        zero[:, 0] = False                       # zero-score ROOT arcs stay impossible
        logs = np.where(zero, penalty, logs)
        logger.warning("%sno spanning tree of positive arcs; zero-score arcs used", at(where))
        heads = max_arborescence(logs, allowed | zero, backend)
    return heads[1:].astype(np.int64)


class _NoTree(Exception):
    pass


def _arborescence_or_none(logs: np.ndarray, allowed: np.ndarray, backend: str) -> np.ndarray:
    """Arborescence over ``allowed`` arcs, raising _NoTree when some word is unreachable from 0."""
    n1 = allowed.shape[0]
    reached = np.zeros(n1, dtype=bool)
    reached[0] = True
    frontier = [0]
    while frontier:  # BFS from ROOT over allowed arcs (allowed[dep, head])
        h = frontier.pop()
        new = allowed[:, h] & ~reached
        reached |= new
        frontier += np.flatnonzero(new).tolist()
    if not reached.all():
        raise _NoTree()
    return max_arborescence(logs, allowed, backend)
