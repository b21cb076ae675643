"""Brute-force enumeration of dependency trees, the tests' independent reference for the decoders.

Importable from test files because ``conftest.py`` puts this folder on ``sys.path``.
"""
from __future__ import annotations

import numpy as np


def all_trees(n: int, *, projective: bool = False) -> np.ndarray:
    """Every dependency tree over n words (ROOT may have several children), as rows of heads.

    All n^n head maps (n <= 6: 7^5 = 16807 trees), kept when following heads from every word
    reaches ROOT; ``projective`` also drops crossing arcs (ROOT arcs included).

    Returns:
        int64 array of shape (count, n), ``row[k-1]`` = head of word k (0 = ROOT).
    """
    if n == 0:
        return np.zeros((1, 0), dtype=np.int64)
    choices = [[h for h in range(n + 1) if h != d] for d in range(1, n + 1)]
    grids = np.meshgrid(*choices, indexing="ij")
    H = np.stack([g.ravel() for g in grids], axis=1).astype(np.int64)
    full = np.concatenate([np.zeros((len(H), 1), dtype=np.int64), H], axis=1)  # full[:, 0] = 0
    walk = full.copy()
    for _ in range(n):
        walk = np.take_along_axis(full, walk, axis=1)
    H = H[(walk[:, 1:] == 0).all(axis=1)]
    if projective and n > 1:
        dep = np.arange(1, n + 1)
        lo, hi = np.minimum(dep, H), np.maximum(dep, H)
        ok = np.ones(len(H), dtype=bool)
        for a in range(n):
            for b in range(n):
                ok &= ~((lo[:, a] < lo[:, b]) & (lo[:, b] < hi[:, a]) & (hi[:, a] < hi[:, b]))
        H = H[ok]
    return H
