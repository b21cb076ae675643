"""The undirected decoders of Hoover et al. 2021 (mst, mst-projective) against brute force, and symmetrisation."""
from __future__ import annotations

import numpy as np
import pytest

from pmask.common.errors import OptionError
from pmask.trees.registry import DecodeInput, decode
from pmask.trees.undirected import ROOT_SCORE, max_spanning_tree, orient, projective_tree, symmetrize

from brute_force import all_trees


def _edges_of(heads):
    return {tuple(sorted((d, int(h) - 1))) for d, h in enumerate(heads) if h}


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("mode", ["none", "sum", "triu"])
def test_mst_is_the_best_spanning_tree(n, mode):
    rng = np.random.default_rng(n)
    for _ in range(5):
        W = symmetrize(rng.normal(size=(n, n)), mode)
        pair = np.maximum(W, W.T)   # Kruskal over both orders: an unordered pair counts with its larger score
        trees = all_trees(n)
        trees = trees[(trees == 0).sum(1) == 1]   # one ROOT child: every spanning tree, once per root word
        scores = [sum(pair[a, b] for a, b in _edges_of(h)) for h in trees]
        best = _edges_of(trees[int(np.argmax(scores))])
        got = {tuple(sorted(e)) for e in max_spanning_tree(W)}
        assert got == best


@pytest.mark.parametrize("m", [2, 3, 4, 5, 6])
def test_projective_is_the_best_projective_tree(m):
    rng = np.random.default_rng(10 + m)
    for _ in range(5):
        W = rng.normal(size=(m, m))
        trees = all_trees(m, projective=True)
        scores = [sum(ROOT_SCORE if h == 0 else W[h - 1, d] for d, h in enumerate(row)) for row in trees]
        best = _edges_of(trees[int(np.argmax(scores))])
        assert set(projective_tree(W)) == best


def test_left_out_words_and_orientation():
    rng = np.random.default_rng(3)
    W = rng.normal(size=(6, 6))
    keep = [True, False, True, True, False, True]
    edges = max_spanning_tree(W, keep)
    assert all(keep[a] and keep[b] for a, b in edges) and len(edges) == 3
    heads = orient(edges, 6, root=3)
    assert heads[2] == 0 and (heads == 0).sum() == 1
    assert _edges_of(heads) >= {tuple(sorted(e)) for e in edges}
    sub = projective_tree(W, keep)
    kept = [0, 2, 3, 5]
    assert sub == sorted(tuple(sorted((kept[a], kept[b]))) for a, b in projective_tree(W[np.ix_(kept, kept)]))


def test_ties_go_to_the_first_pair_row_major():
    assert max_spanning_tree(np.ones((3, 3))) == [(0, 1), (0, 2)]
    W = np.full((3, 3), np.nan)
    W[2, 1] = 1.0
    assert max_spanning_tree(W)[0] == (2, 1)   # NaN counts as -inf


def test_symmetrize_modes():
    M = np.array([[0.0, -1.0], [2.0, 0.0]])
    assert symmetrize(M, "triu").tolist() == [[0.0, -1.0], [-1.0, 0.0]]
    assert symmetrize(M, "tril").tolist() == [[0.0, 2.0], [2.0, 0.0]]
    assert symmetrize(M, "none", absolute=True).tolist() == [[0.0, 1.0], [2.0, 0.0]]
    with pytest.raises(OptionError, match="symmetrization"):
        symmetrize(M, "mean")


def test_faithful_undirected_decoders_leave_punctuation_out():
    W = np.random.default_rng(5).normal(size=(5, 5))
    words = list("abcde")
    faithful = decode("mst", DecodeInput(words=words, F=W, root=None, faithful=True,
                                         keep=[True, True, False, True, True]))
    assert 3 not in [int(h) for h in faithful]   # the left-out word heads nothing
