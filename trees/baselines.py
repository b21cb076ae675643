"""Baseline trees: chains, adjacent words joined, uniformly random trees, random-score decoding, branching
bracketings.

Dependency baselines return ``heads`` (int64, length n, ``heads[k-1]`` = head of word k,
0 = ROOT).  Constituency baselines return ``nltk.Tree`` with internal label "X" and the
words as leaves (a one-word sentence is ``(X w)``).  Randomness comes only from the numpy
``Generator`` passed in, so results are reproducible given its seed.

Uniform sampling is exact: tree counts are Python integers (no float rounding) and a
uniform integer below a count is drawn by rejection from the generator's random bits.
"""
from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING

import numpy as np

from pmask.corpora.brackets import LABEL
from pmask.trees.validate import check_root

if TYPE_CHECKING:
    from nltk import Tree


# ----------------------------------------------------------------------- helpers
def _randbelow(rng: np.random.Generator, total: int) -> int:
    """Uniform integer in [0, total) from ``rng``, exact for arbitrarily large ``total``."""
    if total <= 0:
        raise ValueError("total must be positive")
    bits = max(1, (total - 1).bit_length())
    words = (bits + 31) // 32
    while True:
        x = 0
        for w in rng.integers(0, 2**32, size=words, dtype=np.uint64).tolist():
            x = (x << 32) | int(w)
        x >>= words * 32 - bits
        if x < total:
            return x


def _choose(rng: np.random.Generator, weights: list[int]) -> int:
    """Index i with probability weights[i] / sum(weights) (exact, integer weights)."""
    u = _randbelow(rng, sum(weights))
    for i, w in enumerate(weights):
        if u < w:
            return i
        u -= w
    raise AssertionError("unreachable")


# ------------------------------------------------------------ dependency baselines
def right_chain(n: int, root: int | None = None) -> np.ndarray:
    """Word i's head is word i+1; the last word attaches to ROOT; with ``root=r`` word r too.

    This exact rule (the authors') gives 35.04 UAS on the paper's PUD copy with gold roots.
    """
    root = check_root(root, n)
    heads = np.arange(2, n + 2, dtype=np.int64)
    if n:
        heads[-1] = 0
    if root is not None:
        heads[root - 1] = 0
    return heads


def left_chain(n: int, root: int | None = None) -> np.ndarray:
    """Mirror of :func:`right_chain`: word i's head is word i−1; word 1 (and word ``root``) -> ROOT."""
    root = check_root(root, n)
    heads = np.arange(0, n, dtype=np.int64)
    if root is not None:
        heads[root - 1] = 0
    return heads


@cache
def _complete_count(w: int) -> int:
    """Complete Eisner items of width w (head at one end, spanning w+1 positions)."""
    if w == 0:
        return 1
    return sum(_incomplete_count(m) * _complete_count(w - m) for m in range(1, w + 1))


@cache
def _incomplete_count(w: int) -> int:
    """Incomplete items of width w >= 1 (the arc between the two ends is fixed)."""
    return sum(_complete_count(m) * _complete_count(w - 1 - m) for m in range(w))


def count_projective(n: int, root: int | None = None) -> int:
    """Number of single-rooted projective trees over n words (with word ``root`` as root if given)."""
    if n == 0:
        return 1
    roots = [root] if root is not None else range(1, n + 1)
    return sum(_complete_count(r - 1) * _complete_count(n - r) for r in roots)


def random_projective(n: int, rng: np.random.Generator, root: int | None = None) -> np.ndarray:
    """A uniformly random single-rooted projective tree over n words (``root=r`` fixes the root).

    Exact: Eisner's first-order derivations are unambiguous (each tree has exactly one), so
    counting derivations by item width counts trees; each item's split point is drawn with
    probability proportional to the number of trees it leads to (top-down), which makes every
    tree equally likely.
    """
    root = check_root(root, n)
    heads = np.zeros(n, dtype=np.int64)
    if n == 0:
        return heads
    roots = [root] if root is not None else list(range(1, n + 1))
    r = roots[_choose(rng, [_complete_count(k - 1) * _complete_count(n - k) for k in roots])]
    heads[r - 1] = 0
    # items: (kind, s, t): "CL" head t over s..t, "CR" head s over s..t, "IL" arc t->s, "IR" arc s->t
    stack = [("CL", 1, r), ("CR", r, n)]
    while stack:
        kind, s, t = stack.pop()
        w = t - s
        if w == 0:
            continue
        if kind == "CR":    # last dependent q of s: IR(s,q) + CR(q,t)
            q = s + 1 + _choose(rng, [_incomplete_count(m) * _complete_count(w - m) for m in range(1, w + 1)])
            stack += [("IR", s, q), ("CR", q, t)]
        elif kind == "CL":  # first dependent q of t: CL(s,q) + IL(q,t)
            q = s + _choose(rng, [_complete_count(m) * _incomplete_count(w - m) for m in range(w)])
            stack += [("CL", s, q), ("IL", q, t)]
        else:               # arc, then CR(s,q) + CL(q+1,t)
            if kind == "IR":
                heads[t - 1] = s
            else:
                heads[s - 1] = t
            q = s + _choose(rng, [_complete_count(m) * _complete_count(w - 1 - m) for m in range(w)])
            stack += [("CR", s, q), ("CL", q + 1, t)]
    return heads


def connect_adjacent(n: int, keep: Sequence[bool] | None = None) -> list[tuple[int, int]]:
    """Undirected edges ``(i, i')`` (0-based) joining each kept word to the next kept word: Hoover et al.
    2021's connect-adjacent baseline (``keep``: their non-punctuation words; None keeps every word).
    :func:`pmask.trees.undirected.orient` turns them into heads.

    Example:
        >>> connect_adjacent(3), connect_adjacent(4, [True, False, True, True])
        ([(0, 1), (1, 2)], [(0, 2), (2, 3)])
    """
    kept = [k for k in range(n) if keep is None or keep[k]]
    return list(zip(kept, kept[1:]))


def random_scores(n: int, rng: np.random.Generator) -> np.ndarray:
    """An (n+1)x(n+1) ``scores[dependent, head]`` matrix of U[0,1) values (row 0, diagonal 0).

    Decoding it gives the "random matrix" baselines (random-eisner / random-cle); note that
    uniform scores do NOT give uniformly distributed trees (use :func:`random_projective`).
    """
    s = rng.random((n + 1, n + 1))
    s[0] = 0.0
    np.fill_diagonal(s, 0.0)
    return s


# ---------------------------------------------------------- constituency baselines
def _leaf_or_tree(words: list[str]):
    from nltk import Tree

    return Tree(LABEL, list(words))


def right_branching(words) -> Tree:
    """``(X w1 (X w2 (X w3 … (X wn-1 wn))))``."""
    from nltk import Tree

    words = list(words)
    if len(words) <= 2:
        return _leaf_or_tree(words)
    tree = Tree(LABEL, words[-2:])
    for w in reversed(words[:-2]):
        tree = Tree(LABEL, [w, tree])
    return tree


def left_branching(words) -> Tree:
    """``(X (X (X w1 w2) w3) … wn)``."""
    from nltk import Tree

    words = list(words)
    if len(words) <= 2:
        return _leaf_or_tree(words)
    tree = Tree(LABEL, words[:2])
    for w in words[2:]:
        tree = Tree(LABEL, [tree, w])
    return tree


def balanced(words) -> Tree:
    """Balanced binary bracketing: a span of m words splits after ceil(m/2) words (left half larger)."""
    from nltk import Tree

    words = list(words)

    def build(a: int, b: int):
        if b - a == 1:
            return words[a]
        mid = a + (b - a + 1) // 2
        return Tree(LABEL, [build(a, mid), build(mid, b)])

    if len(words) <= 1:
        return _leaf_or_tree(words)
    return build(0, len(words))


@cache
def _catalan(k: int) -> int:
    """Number of binary bracketings of k+1 leaves."""
    if k == 0:
        return 1
    return sum(_catalan(i) * _catalan(k - 1 - i) for i in range(k))


def random_binary(words, rng: np.random.Generator) -> Tree:
    """A uniformly random binary bracketing of ``words`` (split sizes drawn with Catalan weights)."""
    from nltk import Tree

    words = list(words)
    if len(words) <= 2:
        return _leaf_or_tree(words)

    def build(a: int, b: int):
        m = b - a
        if m == 1:
            return words[a]
        # left part of size k: Cat(k-1)·Cat(m-k-1) trees out of Cat(m-1)
        k = 1 + _choose(rng, [_catalan(k - 1) * _catalan(m - k - 1) for k in range(1, m)])
        return Tree(LABEL, [build(a, a + k), build(a + k, b)])

    return build(0, len(words))
