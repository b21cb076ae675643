"""Input checks shared by every decoder, and a validity check for head arrays.

Conventions (whole package):

- Dependency scores are an (n+1)x(n+1) float array ``scores[dependent, head]``; index 0 is
  ROOT, words are 1..n.  Row 0 (ROOT as a dependent) and the diagonal (self-loops) are never
  read by a decoder, so they may hold anything (they are not validated).
- A word-level impact matrix ``F`` is n x n, 0-based: ``F[i][j]`` = impact of word j on word
  i = score of "word j+1 heads word i+1".
- A dependency tree is ``heads``: int array of length n, ``heads[k-1]`` = head of word k,
  0 = ROOT (the CoNLL-U HEAD column).
"""
from __future__ import annotations

import numpy as np

from pmask.common.errors import DecodeError, at
from pmask.corpora.head_maps import find_cycle


def check_scores(scores, *, where: str | None = None) -> np.ndarray:
    """Return ``scores`` as a float64 (n+1)x(n+1) array, or raise DecodeError.

    Only the entries a decoder reads are checked for NaN/inf: rows 1..n, every column,
    diagonal excluded.
    """
    try:
        arr = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DecodeError(f"{at(where)}scores are not a numeric matrix ({exc})") from None
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] < 1:
        raise DecodeError(
            f"{at(where)}scores must be a square (n+1)x(n+1) matrix (row/column 0 = ROOT), "
            f"got shape {arr.shape}"
        )
    n = arr.shape[0] - 1
    used = arr[1:]
    off_diag = ~np.eye(n + 1, dtype=bool)[1:]
    bad = ~np.isfinite(used) & off_diag
    if bad.any():
        d, h = np.argwhere(bad)[0]
        raise DecodeError(
            f"{at(where)}scores contain {int(bad.sum())} non-finite value(s) "
            f"(first: scores[{d + 1}, {h}] = {used[d, h]}, dependent {d + 1}, head {h})"
        )
    return arr


def check_impact(F, *, n: int | None = None, where: str | None = None, name: str = "F") -> np.ndarray:
    """Return a word-level impact matrix as a finite float64 n x n array, or raise DecodeError."""
    try:
        arr = np.asarray(F, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DecodeError(f"{at(where)}{name} is not a numeric matrix ({exc})") from None
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise DecodeError(f"{at(where)}{name} must be a square matrix, got shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise DecodeError(f"{at(where)}{name} is {arr.shape[0]}x{arr.shape[1]} but the sentence has {n} words")
    if not np.isfinite(arr).all():
        i, j = np.argwhere(~np.isfinite(arr))[0]
        raise DecodeError(
            f"{at(where)}{name} contains {int((~np.isfinite(arr)).sum())} non-finite value(s) "
            f"(first: {name}[{i}, {j}] = {arr[i, j]})"
        )
    return arr


def check_root(root, n: int, *, where: str | None = None) -> int | None:
    """Validate a 1-based gold root index (None passes through)."""
    if root is None:
        return None
    if isinstance(root, (bool, np.bool_)) or not isinstance(root, (int, np.integer)):
        raise ValueError(f"{at(where)}root must be a 1-based word index, got {root!r}")
    if not 1 <= int(root) <= n:
        raise ValueError(f"{at(where)}root={root} is outside the sentence's words 1..{n}")
    return int(root)


def tree_errors(heads, *, single_root: bool = False, root: int | None = None, projective: bool = False) -> list[str]:
    """Every reason ``heads`` is not a valid dependency tree (empty list = valid).

    Checks: heads in 0..n, no self-loop, no cycle (every word reaches ROOT), at least one
    ROOT child, exactly one when ``single_root``, word ``root`` being ROOT's only child when
    given, and no crossing arcs when ``projective``.
    """
    h = np.asarray(heads)
    n = len(h)
    errors: list[str] = []
    if h.ndim != 1 or (n and not np.issubdtype(h.dtype, np.integer)):
        return [f"heads must be a 1-D int array, got dtype {h.dtype} shape {h.shape}"]
    if n == 0:
        return errors
    if ((h < 0) | (h > n)).any():
        return [f"heads out of range 0..{n}: {h.tolist()}"]
    if (h == np.arange(1, n + 1)).any():
        errors.append(f"self-loop in {h.tolist()}")
    cycle = find_cycle(h.tolist())
    if cycle is not None:
        errors.append(f"word {cycle.start} does not reach ROOT (cycle) in {h.tolist()}")
    children = np.flatnonzero(h == 0) + 1
    if len(children) == 0:
        errors.append("no word attached to ROOT")
    if single_root and len(children) > 1:
        errors.append(f"{len(children)} ROOT children {children.tolist()}, expected one")
    if root is not None and children.tolist() != [root]:
        errors.append(f"ROOT children {children.tolist()}, expected only the given root {root}")
    if projective:
        arcs = [(min(d, int(hd)), max(d, int(hd))) for d, hd in enumerate(h, start=1)]
        for a, b in arcs:
            for c, d in arcs:
                if a < c < b < d:
                    errors.append(f"crossing arcs {a}-{b} and {c}-{d} in {h.tolist()}")
                    return errors
    return errors


def is_valid_tree(heads, **kwargs) -> bool:
    """True when :func:`tree_errors` finds nothing."""
    return not tree_errors(heads, **kwargs)


def rescale(scores: np.ndarray) -> np.ndarray:
    """``scores`` times a power of two that brings the largest used |score| into [0.5, 1).

    Multiplying by 2^k is exact and commutes with rounding (barring underflow of entries
    ~2^-1074 smaller than the largest), so every sum comparison a decoder makes comes out as
    it would with unbounded exponents; it only prevents overflow (e.g. scores near 1e308)
    and makes the decoders' big constants safe.  Row 0 and the diagonal are zeroed.
    """
    s = np.array(scores, dtype=np.float64)
    s[0] = 0.0
    np.fill_diagonal(s, 0.0)
    top = float(np.abs(s).max()) if s.size else 0.0
    if top == 0.0:
        return s
    _, exp = np.frexp(top)
    return np.ldexp(s, -int(exp))

