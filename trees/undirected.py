"""Undirected tree decoders and score symmetrisation (Hoover et al. 2021, the CPMI paper).

Conventions: ``W`` is an n x n matrix of word-pair scores (high = close), ``W[i][j]`` relates word
j to word i (the impact convention); ``keep`` (length n, default all True) leaves words out of the
tree (their ``--faithful``: punctuation, UPOS ``PUNCT``). A decoder returns undirected edges
``(i, j)`` between kept words (0-based); :func:`orient` turns them into CoNLL-U heads.

- :func:`symmetrize`: ``none``, ``sum`` (W + Wᵀ), ``triu``/``tril`` (one triangle mirrored), after
  ``|W|`` with ``absolute``; applied to any metric's F before any decoder reads it.
- :func:`max_spanning_tree`: Kruskal's maximum spanning tree over the ordered pairs ``(i, j)``
  (both orders, so with ``none`` each unordered pair counts with its larger score), NaN as −∞,
  ties to the pair first in row-major order (a stable sort, as their ``prims``); ``minimum=True``
  gives the minimum tree (their gold edges: minimum tree of tree distances over non-punctuation).
- :func:`projective_tree`: Eisner's algorithm (the core of :mod:`pmask.trees.eisner`) on the kept
  words with ``W[head][dependent]`` as the arc score, a ROOT row of −50 (so ROOT takes one child
  unless the scores are extreme) and ties to the first maximum over split points; its edges between
  words, undirected (their ``eisners``).

Example:
    >>> W = np.array([[0, 3, 1], [3, 0, 2], [1, 2, 0]], dtype=float)
    >>> max_spanning_tree(W)
    [(0, 1), (1, 2)]
    >>> orient([(0, 1), (1, 2)], 3, root=3).tolist()
    [2, 3, 0]
"""
from __future__ import annotations

from collections import deque
from typing import Sequence

import numpy as np

from pmask.common.errors import DecodeError, at
from pmask.common.options import SYMMETRIZE_MODES, check_choice
from pmask.trees.eisner import eisner_core

#: The ROOT row of :func:`projective_tree` (theirs): every word's ROOT arc scores this.
ROOT_SCORE = -50.0


def symmetrize(W: np.ndarray, mode: str = "none", absolute: bool = False) -> np.ndarray:
    """``W`` (n x n) after ``|·|`` (``absolute``) and the symmetrisation ``mode`` (:data:`SYMMETRIZE_MODES`).

    Example:
        >>> symmetrize(np.array([[0., -1.], [2., 0.]]), "sum", absolute=True).tolist()
        [[0.0, 3.0], [3.0, 0.0]]
    """
    check_choice("symmetrization", mode, SYMMETRIZE_MODES)
    M = np.abs(W) if absolute else np.asarray(W)
    if mode == "sum":
        return M + M.T
    if mode == "triu":
        return np.triu(M) + np.triu(M).T
    if mode == "tril":
        return np.tril(M) + np.tril(M).T
    return M


def _kept(keep: Sequence[bool] | None, n: int) -> np.ndarray:
    return np.ones(n, dtype=bool) if keep is None else np.asarray(keep, dtype=bool)


def max_spanning_tree(W: np.ndarray, keep: Sequence[bool] | None = None, *,
                      minimum: bool = False) -> list[tuple[int, int]]:
    """Kruskal's maximum (``minimum``: minimum) spanning tree over the kept words: edges ``(i, j)``
    in the order taken, ``i`` the row of the pair that won."""
    W = np.asarray(W, dtype=np.float64)
    n = W.shape[0]
    kept = _kept(keep, n)
    rows, cols = np.nonzero(kept[:, None] & kept[None, :])        # row-major, as their loops
    w = W[rows, cols]
    w = np.where(np.isnan(w), -np.inf, w)                        # NaN as -inf, as their sort key
    order = np.argsort(w if minimum else -w, kind="stable")     # ties: row-major order
    parent = list(range(n))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    edges = []
    need = int(kept.sum()) - 1
    for t in order:
        i, j = int(rows[t]), int(cols[t])
        ri, rj = find(i), find(j)
        if ri != rj:
            parent[ri] = rj
            edges.append((i, j))
            if len(edges) == need:
                break
    return edges


def projective_tree(W: np.ndarray, keep: Sequence[bool] | None = None) -> list[tuple[int, int]]:
    """Undirected edges of Eisner's best projective tree over the kept words (see the module docstring)."""
    W = np.asarray(W, dtype=np.float64)
    index = np.flatnonzero(_kept(keep, W.shape[0]))
    m = len(index)
    if m < 2:
        return []
    scores = np.zeros((m + 1, m + 1))
    scores[1:, 1:] = W[np.ix_(index, index)]
    scores[0, :] = ROOT_SCORE
    heads = eisner_core(scores, single_root=False)   # scores[head, dependent]; ROOT may take several children
    edges = [(int(index[d - 1]), int(index[h - 1])) for d, h in enumerate(heads) if d and h]
    return sorted((min(a, b), max(a, b)) for a, b in edges)


def orient(edges: Sequence[tuple[int, int]], n: int, root: int | None = None) -> np.ndarray:
    """CoNLL-U heads (length n, 1-based, 0 = ROOT) for undirected ``edges`` between 0-based words.

    Each connected part is directed away from its root: ``root`` (1-based) for its own part, else
    the part's first word. Words in no edge (left out, e.g. punctuation) hang from the nearest word
    before them that is in an edge (else the nearest after; a sentence without edges: a chain
    under word 1's root). Only the edges carry the decoder's choice: score these trees undirected.
    """
    adjacent: list[list[int]] = [[] for _ in range(n)]
    for i, j in edges:
        adjacent[i].append(j)
        adjacent[j].append(i)
    heads = np.full(n, -1, dtype=np.int64)
    starts = ([root - 1] if root is not None and 0 < root <= n else []) + list(range(n))
    for start in starts:
        if heads[start] >= 0 or not adjacent[start]:
            continue
        heads[start] = 0
        queue = deque([start])
        while queue:
            a = queue.popleft()
            for b in adjacent[a]:
                if heads[b] < 0:
                    heads[b] = a + 1
                    queue.append(b)
    linked = [k for k in range(n) if heads[k] >= 0]
    if not linked:
        heads[0] = 0
        linked = [0]
    for k in range(n):
        if heads[k] < 0:
            before = [a for a in linked if a < k]
            heads[k] = (before[-1] if before else min(a for a in linked if a > k)) + 1
    return heads


def check_square(W: np.ndarray, n: int, where: str | None) -> np.ndarray:
    """``W`` as a float array, or a :class:`DecodeError` when it is not n x n."""
    W = np.asarray(W, dtype=np.float64)
    if W.shape != (n, n):
        raise DecodeError(f"{at(where)}F is {W.shape} but the sentence has {n} words")
    return W
