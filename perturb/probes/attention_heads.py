"""Choosing attention heads in a probe's matrices (numpy only, no torch: stores are read with it).

Probes whose values differ per head (``attention``, and ``distance`` with ``jsd``/``hellinger``)
compute and store every head: one layer's matrix is ``[H, n, n]``. ``--head`` picks what is
decoded: a head number ``h`` (0-based) gives ``M[h]``, ``mean`` the mean over heads (the default;
for ``jsd``/``hellinger`` the mean of the per-head distances, as Kim et al.'s ``avg_`` measures),
``max`` the element-wise maximum.
"""
from __future__ import annotations

import numpy as np

from pmask.common.errors import SettingError
from pmask.common.options import parse_attention_head


def select_head(matrix: np.ndarray, head: str | int | None, where: str = "") -> np.ndarray:
    """One ``[n, n]`` matrix from ``[H, n, n]`` (``head``: a number, "mean" or "max"; None = "mean");
    a matrix without a head axis (``[n, n]``) is returned as it is.

    Raises:
        SettingError: a head number the matrix does not have.

    Example:
        >>> m = np.arange(8.0).reshape(2, 2, 2)
        >>> select_head(m, "mean").tolist(), select_head(m, 1).tolist()
        ([[2.0, 3.0], [4.0, 5.0]], [[4.0, 5.0], [6.0, 7.0]])
    """
    matrix = np.asarray(matrix)
    if matrix.ndim == 2:
        return matrix
    head = parse_attention_head(head)
    if head is None or head == "mean":
        return matrix.mean(axis=0, dtype=np.float64).astype(matrix.dtype)
    if head == "max":
        return matrix.max(axis=0)
    if head >= matrix.shape[0]:
        raise SettingError(f"{where}{{head}} {head} does not exist: the model has {matrix.shape[0]} heads per layer "
                           f"(0..{matrix.shape[0] - 1})")
    return matrix[head]


def check_attention_head(head: str | int | None, n_heads: int | None, where: str = "") -> None:
    """A :class:`SettingError` now (before any work) for a head number outside ``0..n_heads-1``."""
    head = parse_attention_head(head)
    if isinstance(head, int) and n_heads is not None and head >= n_heads:
        raise SettingError(f"{where}{{head}} {head} does not exist: the model has {n_heads} heads per layer "
                           f"(0..{n_heads - 1})")
