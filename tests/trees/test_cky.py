"""cky (Li & Lu 2023) against brute force over every binary tree, its normalisation and its ties."""
from __future__ import annotations

import numpy as np
import pytest

from pmask.common.errors import DecodeError
from pmask.corpora.brackets import spans as tree_spans
from pmask.trees.baselines import right_branching
from pmask.trees.cky import cky, cky_spans, normalise_by_length, tree_from_spans
from pmask.trees.registry import decode_constituency


def binary_span_sets(a: int, b: int):
    """Every binary bracketing of words a..b-1 as the set of its spans [l, r) of ≥ 2 words."""
    if b - a == 1:
        yield frozenset()
        return
    for mid in range(a + 1, b):
        for left in binary_span_sets(a, mid):
            for right in binary_span_sets(mid, b):
                yield frozenset({(a, b)}) | left | right


def naive_normalise(chart: np.ndarray) -> np.ndarray:
    n = len(chart)
    out = np.zeros((n, n))
    for length in range(1, n + 1):
        cells = [(left, left + length - 1) for left in range(n - length + 1)]
        norm = np.sqrt(sum(chart[c] ** 2 for c in cells))
        for c in cells:
            out[c] = chart[c] / norm if norm else 0.0
    return out


def brute_force(chart: np.ndarray) -> set[frozenset]:
    """The minimum-score bracketings: every span's normalised score summed (words and root included)."""
    S = naive_normalise(chart)
    n = len(chart)
    constant = sum(S[i, i] for i in range(n))
    totals = {t: constant + sum(S[left, r - 1] for left, r in t if (left, r) != (0, n)) + (S[0, n - 1] if n > 1 else 0)
              for t in binary_span_sets(0, n)}
    best = min(totals.values())
    return {t for t, v in totals.items() if v == best}


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7])
def test_cky_is_the_brute_force_minimum(n):
    rng = np.random.default_rng(n)
    for _ in range(30):
        chart = np.triu(rng.random((n, n)) * 10)
        chart[0, n - 1] = 0.0                     # the whole sentence has no score (as the probe gives it)
        winners = brute_force(chart)
        assert len(winners) == 1                   # continuous random scores: no tie
        got = frozenset(cky_spans(normalise_by_length(chart)))
        assert got == next(iter(winners))
        assert got == frozenset(cky_spans(normalise_by_length(chart), faithful=True))
        tree = cky(chart, [f"w{k}" for k in range(n)])
        assert {s for s in tree_spans(tree) if s[1] - s[0] >= 2} == got


def test_normalisation_divides_each_length_by_its_norm():
    rng = np.random.default_rng(0)
    chart = np.triu(rng.random((6, 6)))
    np.testing.assert_allclose(normalise_by_length(chart), naive_normalise(chart), rtol=1e-12)
    assert normalise_by_length(np.zeros((3, 3))).tolist() == np.zeros((3, 3)).tolist()


def test_ties_go_to_the_smallest_split():
    """A chart where every tree ties: each node splits after its first word, a right-branching tree."""
    words = list("abcdef")
    assert cky(np.zeros((6, 6)), words) == right_branching(words)
    assert cky(np.zeros((6, 6)), words, faithful=True) == right_branching(words)


def test_float32_ties_of_the_faithful_mode():
    """Two splits whose float64 sums differ below float32's resolution: the faithful sum ties them
    (and takes the smaller split), the default keeps them apart."""
    chart = np.zeros((3, 3))
    chart[0, 1], chart[1, 2] = 1.0 - 1e-9, 1.0      # split at 2 is cheaper by 1e-9 (after normalisation too)
    assert cky_spans(normalise_by_length(chart)) == [(0, 3), (0, 2)]
    assert cky_spans(normalise_by_length(chart), faithful=True) == [(0, 3), (1, 3)]


def test_tree_from_spans_and_errors():
    assert str(tree_from_spans(["a", "b", "c"], [(0, 3), (1, 3)])) == "(X a (X b c))"
    assert str(tree_from_spans(["a"], [])) == "(X a)"
    with pytest.raises(DecodeError, match="span chart of shape"):
        cky(np.zeros((2, 2)), ["a", "b", "c"])
    bad = np.zeros((3, 3))
    bad[0, 1] = np.nan
    with pytest.raises(DecodeError, match="NaN"):
        decode_constituency("cky", ["a", "b", "c"], F=bad)
