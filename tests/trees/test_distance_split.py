"""distance-split (Kim et al. 2020) against a brute-force reading of its definition, and its bias λ."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from nltk import Tree

from pmask.common.errors import DecodeError
from pmask.corpora.brackets import spans, to_brackets
from pmask.trees.baselines import right_branching
from pmask.trees.distance_split import adjacent_distances, distance_split, right_skew
from pmask.trees.registry import DecodeInput, decode, decode_constituency


def binary_trees(a: int, b: int):
    """Every binary bracketing of words a..b-1, as (tree, [(node span, split gap)])."""
    if b - a == 1:
        yield a, []
        return
    for k in range(a, b - 1):                        # gap k: between words k and k + 1
        for left, lnodes in binary_trees(a, k + 1):
            for right, rnodes in binary_trees(k + 1, b):
                yield (left, right), [((a, b), k), *lnodes, *rnodes]


def to_tree(shape, words) -> Tree | str:
    if isinstance(shape, int):
        return words[shape]
    return Tree("X", [to_tree(shape[0], words), to_tree(shape[1], words)])


def by_definition(words, biased):
    """The trees in which every node splits at the largest biased distance of its span (ties: leftmost)."""
    found = []
    for shape, nodes in binary_trees(0, len(words)):
        if all(k == a + int(np.argmax(biased[a:b - 1])) for (a, b), k in nodes):
            found.append(to_tree(shape, words))
    return found


@pytest.mark.parametrize("m", [1, 2, 3, 4, 5, 6, 7])
@pytest.mark.parametrize("bias", [0.0, 0.4, 3.0])
def test_the_tree_is_the_one_the_definition_gives(m, bias):
    rng = np.random.default_rng(m)
    words = [f"w{k}" for k in range(m)]
    for _ in range(5):
        d = rng.random(m - 1)
        want = by_definition(words, right_skew(d, bias))
        assert len(want) == 1                             # exactly one tree satisfies the definition
        got = distance_split(words, d, bias=bias)
        assert to_brackets(got) == to_brackets(want[0] if isinstance(want[0], Tree) else Tree("X", [want[0]]))


def test_ties_go_to_the_leftmost_gap():
    assert to_brackets(distance_split(list("abcd"), [1.0, 1.0, 1.0])) == to_brackets(right_branching(list("abcd")))


def test_the_bias_is_kims_formula_applied_once_to_the_sentence():
    d = np.array([0.3, 1.0, 0.2, 0.9, 0.4])           # m = 6 words, 5 gaps
    lam = 0.7
    want = d + lam * d.mean() * (1 - np.arange(5) / 4)   # first gap + λ·mean(d), last + 0, linear between
    np.testing.assert_allclose(right_skew(d, lam), want)
    np.testing.assert_allclose(right_skew(d, 0.0), d)
    np.testing.assert_allclose(right_skew([0.5, 0.1], 1.0), [0.8, 0.1])     # two gaps: + mean(d), + 0
    np.testing.assert_allclose(right_skew([0.5], 9.0), [0.5])               # one gap: unchanged (as their code)
    # once, globally: d̂ = [1.62, 1.14, 1.06, 0.68, 0.90], so the span "d e f" splits at its second gap
    # (0.68 < 0.90); a bias recomputed for that span ([0.5, 0.9] + 0.7 · [1, 0] = [1.2, 0.9]) would
    # split it at its first gap instead: (X d (X e f))
    once = distance_split(list("abcdef"), [0.9, 0.6, 0.7, 0.5, 0.9], bias=1.0)
    assert to_brackets(once) == "(X a (X b (X c (X (X d e) f))))"


def test_lambda_moves_the_tree_towards_right_branching():
    rng = np.random.default_rng(1)
    words = [f"w{k}" for k in range(8)]
    right = set(spans(right_branching(words)))
    for _ in range(20):
        d = rng.random(7)
        plain = distance_split(words, d)
        assert to_brackets(plain) == to_brackets(distance_split(words, d, bias=0.0))
        assert set(spans(distance_split(words, d, bias=100.0))) == right      # a huge λ: right-branching
    d = np.array([0.1, 0.9, 0.2])                        # plain: split at gap 1 first
    assert to_brackets(distance_split(list("abcd"), d)) == "(X (X a b) (X c d))"
    # λ = 10, mean(d) = 0.4: d̂ = [0.1 + 4, 0.9 + 2, 0.2 + 0] = [4.1, 2.9, 0.2]: gap 0 first, then gap 1
    assert to_brackets(distance_split(list("abcd"), d, bias=10.0)) == "(X a (X b (X c d)))"


def test_adjacent_distances_of_distance_and_affinity_matrices():
    F = np.array([[0.0, 2.0, 7.0], [4.0, 0.0, 1.0], [7.0, 3.0, 0.0]])
    np.testing.assert_allclose(adjacent_distances(F), [3.0, 2.0])                  # mean of both directions
    np.testing.assert_allclose(adjacent_distances(F, distance=False), [0.0, 1.0])  # max(a) - a: never negative
    assert adjacent_distances(np.zeros((1, 1))).shape == (0,)


def test_the_registry_reads_distances_and_affinities_the_right_way_round():
    rng = np.random.default_rng(3)
    words = list("abcdefg")
    D = rng.random((7, 7))
    D = D + D.T
    np.fill_diagonal(D, 0)
    as_distance = decode("distance-split", DecodeInput(words=words, F=D, distance=True, bias=0.5))
    as_affinity = decode("distance-split", DecodeInput(words=words, F=-D, bias=0.0))
    assert to_brackets(as_distance) == to_brackets(distance_split(words, adjacent_distances(D), bias=0.5))
    assert to_brackets(as_affinity) == to_brackets(distance_split(words, adjacent_distances(D)))
    assert to_brackets(decode_constituency("distance-split", words, F=D, distance=True, bias=0.5)) == \
        to_brackets(as_distance)
    # dependency decoders and MART read -F for a distance matrix
    for name in ("eisner", "cle", "mart"):
        got = decode(name, DecodeInput(words=words, F=D, distance=True, root=2 if name != "mart" else None))
        want = decode(name, DecodeInput(words=words, F=-D, root=2 if name != "mart" else None))
        assert (to_brackets(got) == to_brackets(want)) if name == "mart" else got.tolist() == want.tolist()


def test_bad_inputs_are_one_line_errors():
    with pytest.raises(DecodeError, match="2 finite distances"):
        distance_split(list("abc"), [0.1])
    with pytest.raises(DecodeError, match="2 finite distances"):
        distance_split(list("abc"), [0.1, np.nan])
    with pytest.raises(DecodeError, match="empty"):
        distance_split([], [])
    assert to_brackets(distance_split(["w"], [])) == "(X w)"
    assert len(list(itertools.islice(binary_trees(0, 5), 100))) == 14   # Catalan(4): the reference enumerates all
