"""MART top-down splitting and the bracket/span helpers.

F is the n x n word-level impact matrix (F[i][j] = impact of word j on word i).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from nltk import Tree

from pmask.common.errors import DecodeError
from pmask.trees import from_brackets, mart, spans, to_brackets
from pmask.trees.mart import TIE_RTOL, mart_distance


def direct_D(F):
    F = np.asarray(F, float)
    P = np.zeros_like(F)
    for j in range(F.shape[1]):                    # column-wise softmax, over i
        col = np.exp(F[:, j] - F[:, j].max())
        P[:, j] = col / col.sum()
    np.fill_diagonal(P, 0)
    D = 1 - P
    np.fill_diagonal(D, 0)
    return D


def div(a, b):
    return 0.0 if b == 0 else a / b


def direct_objective(B, k, variant):
    """The spec's formulas, with plain block sums of the span's sub-matrix B (m x m)."""
    m = len(B)
    if variant == "three-way":
        left = div(B[:k, :k].sum(), 2 * k)
        right = div(B[k + 1:, k + 1:].sum(), 2 * (m - k))
        between = div(B[:k, k + 1:].sum() + B[k + 1:, :k].sum(), k * (m - k))
    else:
        left = div(B[:k, :k].sum(), 2 * k)
        right = div(B[k:, k:].sum(), 2 * (m - k))
        between = div(B[:k, k:].sum() + B[k:, :k].sum(), k * (m - k))
    return left + right - between


def reference_mart(F, words, variant):
    D = direct_D(F)

    def build(a, b):
        if b - a == 1:
            return words[a]
        B = D[a:b, a:b]
        obj = np.array([direct_objective(B, k, variant) for k in range(1, b - a)])
        tol = TIE_RTOL * max(1.0, np.abs(obj).max())
        k = 1 + int(np.flatnonzero(obj <= obj.min() + tol)[0])
        s = a + k
        if variant == "binary":
            return Tree("X", [build(a, s), build(s, b)])
        inner = words[s] if s + 1 == b else Tree("X", [words[s], build(s + 1, b)])
        return Tree("X", [build(a, s), inner])

    return build(0, len(words)) if len(words) > 1 else Tree("X", list(words))


@pytest.mark.parametrize("variant", ["three-way", "binary"])
def test_split_choice_equals_exhaustive_evaluation(variant):
    rng = np.random.default_rng(11)
    for n in list(range(1, 12)) + [25, 40]:
        for _ in range(5):
            F = rng.gamma(2.0, size=(n, n)) * rng.choice([0.1, 1, 10])
            np.fill_diagonal(F, 0)
            words = [f"w{i}" for i in range(n)]
            assert to_brackets(mart(F, words, variant)) == to_brackets(reference_mart(F, words, variant))


@pytest.mark.parametrize("variant", ["three-way", "binary"])
def test_ties_go_to_smallest_k(variant):
    words = list("abcdef")
    got = mart(np.zeros((6, 6)), words, variant)
    assert to_brackets(got) == to_brackets(reference_mart(np.zeros((6, 6)), words, variant))
    assert to_brackets(got) == "(X a (X b (X c (X d (X e f)))))"


def test_distance_matrix():
    F = np.random.default_rng(0).normal(size=(5, 5))
    assert np.allclose(mart_distance(F), direct_D(F))
    assert (np.diag(mart_distance(F)) == 0).all()


def test_block_matrix_recovered():
    # {a b} and {c d e}: strong mutual impact inside each block
    F = np.zeros((5, 5))
    F[:2, :2] = 10
    F[2:, 2:] = 10
    np.fill_diagonal(F, 0)
    words = list("abcde")
    assert to_brackets(mart(F, words)) == "(X (X a b) (X c (X d e)))"
    assert to_brackets(mart(F, words, "binary")) == "(X (X a b) (X c (X d e)))"
    # binary variant separates two 3-word blocks at the top
    G = np.zeros((6, 6))
    G[:3, :3] = 10
    G[3:, 3:] = 10
    np.fill_diagonal(G, 0)
    top = mart(G, list("abcdef"), "binary")
    assert [t.leaves() for t in top] == [list("abc"), list("def")]


def test_small_and_bad_inputs():
    assert mart(np.zeros((1, 1)), ["w"]) == Tree("X", ["w"])
    assert mart(np.array([[0, 1], [2, 0]]), ["a", "b"]) == Tree("X", ["a", "b"])
    with pytest.raises(DecodeError, match="3 words"):
        mart(np.zeros((2, 2)), ["a", "b", "c"])
    with pytest.raises(DecodeError):
        mart(np.array([[0, np.nan], [1, 0]]), ["a", "b"])
    with pytest.raises(DecodeError):
        mart(np.zeros((0, 0)), [])
    with pytest.raises(ValueError):
        mart(np.zeros((2, 2)), ["a", "b"], variant="ternary")


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 12).flatmap(lambda n: arrays(np.float64, (n, n),
                                                  elements=st.floats(allow_nan=False, allow_infinity=False))),
       st.sampled_from(["three-way", "binary"]))
def test_any_finite_matrix_gives_full_tree(F, variant):
    n = len(F)
    words = [f"w{i}" for i in range(n)]
    tree = mart(F, words, variant)
    assert tree.leaves() == words
    for sub in tree.subtrees():
        assert len(sub) == 2 or n == 1                                          # binary nodes


# ------------------------------------------------------------------ brackets

def test_brackets_round_trip_and_escaping():
    t = Tree("X", [Tree("X", ["The", "c(a)t"]), Tree("X", ["sat", "a b", ")"])])
    s = to_brackets(t)
    assert s == "(X (X The c-LRB-a-RRB-t) (X sat a_b -RRB-))"
    assert "\n" not in s
    back = from_brackets(s)
    assert back.leaves() == ["The", "c(a)t", "sat", "a_b", ")"]
    assert Tree.fromstring(s).leaves()[1] == "c-LRB-a-RRB-t"
    assert to_brackets(Tree("X", ["w"])) == "(X w)"


def test_spans():
    t = Tree.fromstring("(X (X The cat) (X sat (X on (X the mat))))")
    assert spans(t) == {(0, 6), (0, 2), (2, 6), (3, 6), (4, 6)}
    ptb = Tree.fromstring("(S (NP (DT The) (NN cat)) (VP (VBD sat)))")
    assert spans(ptb) == {(0, 3), (0, 2)}
    assert spans(ptb, trivial=True) == {(0, 3), (0, 2), (0, 1), (1, 2), (2, 3)}
