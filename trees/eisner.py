"""Eisner's O(n^3) projective maximum spanning tree, vectorised over spans and split points.

Conventions: ``scores[dependent, head]``, (n+1)x(n+1), index 0 = ROOT, words 1..n; row 0 and
the diagonal are ignored.  Returns ``heads`` (length n, ``heads[k-1]`` = head of word k,
0 = ROOT).

Tie-breaking: every chart item keeps the FIRST maximum over its split points, scanned left
to right (``np.argmax``), with the classic item recurrences and sums associated exactly as in
Kiperwasser & Goldberg's ``parse_proj`` (the decoder the paper's authors used).  Equal-score
trees therefore resolve deterministically, and :func:`eisner_core` with ``single_root=False``
reproduces ``parse_proj`` head for head (tested against a loop reference).
"""
from __future__ import annotations

import numpy as np

from pmask.trees.validate import check_root, check_scores, rescale

NEG_INF = -np.inf


def eisner_core(arc: np.ndarray, *, single_root: bool) -> np.ndarray:
    """Decode ``arc[head, dependent]`` ((N+1)x(N+1), 0 = ROOT) -> heads (length N+1, heads[0] = -1).

    Items (s < t): ``Il[s,t]`` arc t->s, ``Ir[s,t]`` arc s->t (incomplete), ``Cl[s,t]`` head t
    spanning s..t, ``Cr[s,t]`` head s spanning s..t (complete).  Recurrences, for r in split order:
      Il/Ir[s,t] = max_{r=s..t-1} (Cr[s,r] + Cl[r+1,t]) + arc[t,s] / arc[s,t]
      Cl[s,t]    = max_{r=s..t-1} Cl[s,r] + Il[r,t]
      Cr[s,t]    = max_{r=s+1..t} Ir[s,r] + Cr[r,t]
    The answer is Cr[0,N].  ``single_root`` lets ROOT take exactly one child by allowing only
    the split r=0 in Ir[0,t] (so ROOT's item cannot already contain another child).
    ``arc`` may contain -inf for forbidden arcs (never +inf or NaN).
    """
    N = arc.shape[0] - 1
    heads = -np.ones(N + 1, dtype=np.int64)
    if N == 0:
        return heads
    Cl = np.zeros((N + 1, N + 1))
    Cr = np.zeros((N + 1, N + 1))
    Il = np.zeros((N + 1, N + 1))
    Ir = np.zeros((N + 1, N + 1))
    bCl = np.zeros((N + 1, N + 1), dtype=np.int64)
    bCr = np.zeros((N + 1, N + 1), dtype=np.int64)
    bIl = np.zeros((N + 1, N + 1), dtype=np.int64)
    bIr = np.zeros((N + 1, N + 1), dtype=np.int64)
    for w in range(1, N + 1):
        s = np.arange(0, N - w + 1)
        t = s + w
        m = np.arange(w)
        r = s[:, None] + m[None, :]                # splits s..t-1, shape (S, w)
        base = Cr[s[:, None], r] + Cl[r + 1, t[:, None]]
        vl = base + arc[t, s][:, None]
        vr = base + arc[s, t][:, None]
        vl[0] = NEG_INF                            # s[0] = 0: ROOT is never a dependent
        if single_root:
            vr[0, 1:] = NEG_INF                    # ROOT item may contain no earlier child
        kl = vl.argmax(axis=1)
        kr = vr.argmax(axis=1)
        rows = np.arange(len(s))
        Il[s, t] = vl[rows, kl]
        Ir[s, t] = vr[rows, kr]
        bIl[s, t] = s + kl
        bIr[s, t] = s + kr
        vcl = Cl[s[:, None], r] + Il[r, t[:, None]]
        r2 = r + 1                                 # splits s+1..t
        vcr = Ir[s[:, None], r2] + Cr[r2, t[:, None]]
        kcl = vcl.argmax(axis=1)
        kcr = vcr.argmax(axis=1)
        Cl[s, t] = vcl[rows, kcl]
        Cr[s, t] = vcr[rows, kcr]
        bCl[s, t] = s + kcl
        bCr[s, t] = s + 1 + kcr
    _backtrack(heads, bCl, bCr, bIl, bIr)
    return heads


def _backtrack(heads: np.ndarray, bCl: np.ndarray, bCr: np.ndarray, bIl: np.ndarray, bIr: np.ndarray) -> None:
    """Fill ``heads`` from the split points of :func:`eisner_core`'s items, from ``Cr[0, N]`` down."""
    N = len(heads) - 1
    # iterative backtrack: (s, t, direction 0=left/1=right, complete)
    stack: list[tuple[int, int, int, bool]] = [(0, N, 1, True)]
    while stack:
        s, t, d, complete = stack.pop()
        if s == t:
            continue
        if complete:
            if d == 0:
                r = int(bCl[s, t])
                stack += [(s, r, 0, True), (r, t, 0, False)]
            else:
                r = int(bCr[s, t])
                stack += [(s, r, 1, False), (r, t, 1, True)]
        else:
            r = int((bIl if d == 0 else bIr)[s, t])
            if d == 0:
                heads[s] = t
            else:
                heads[t] = s
            stack += [(s, r, 1, True), (r + 1, t, 0, True)]


def eisner(scores, root: int | None = None, multiroot: bool = False, *, where: str | None = None) -> np.ndarray:
    """Projective maximum spanning tree of ``scores[dependent, head]`` ((n+1)x(n+1), 0 = ROOT).

    - default: single root (ROOT has exactly one child);
    - ``multiroot=True``: ROOT may have several children;
    - ``root=k`` (1-based): word k is ROOT's only child (the paper's gold-root setting);
      incompatible with ``multiroot=True``.
    Returns ``heads`` (int64, length n, ``heads[k-1]`` = head of word k, 0 = ROOT).  Ties:
    first maximum over split points, left to right (see module docstring).  Raises
    DecodeError for NaN/inf or a non-square matrix.
    """
    S = check_scores(scores, where=where)
    n = S.shape[0] - 1
    root = check_root(root, n, where=where)
    if root is not None and multiroot:
        raise ValueError("eisner: root= (ROOT's only child) and multiroot=True are incompatible")
    arc = rescale(S).T.copy()  # arc[head, dependent]; exact power-of-two scaling, no overflow
    if root is not None:
        keep = arc[0, root]
        arc[0, :] = NEG_INF
        arc[0, root] = keep
    heads = eisner_core(arc, single_root=not multiroot)
    return heads[1:]
