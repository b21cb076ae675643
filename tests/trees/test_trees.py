"""Eisner and Chu-Liu/Edmonds: brute-force optimality, validity properties, ties, errors.

Scores are ``scores[dependent, head]``, (n+1)x(n+1), 0 = ROOT; heads[k-1] = head of word k.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from pmask.common.errors import DecodeError
from pmask.trees import chu_liu_edmonds, dependency_scores, eisner, tree_score
from pmask.trees.validate import tree_errors

from authors_reference import ref_parse_proj
from brute_force import all_trees

TREES = {(n, p): all_trees(n, projective=p) for n in range(1, 7) for p in (False, True)}
MODES = [dict(), dict(multiroot=True), dict(root="gold")]


def feasible(n: int, projective: bool, mode: dict, gold: int) -> np.ndarray:
    H = TREES[(n, projective)]
    roots = (H == 0).sum(axis=1)
    if mode.get("multiroot"):
        return H
    if mode.get("root"):
        return H[(roots == 1) & (H[:, gold - 1] == 0)]
    return H[roots == 1]


def kwargs(mode: dict, gold: int) -> dict:
    return {"root": gold} if mode.get("root") else dict(mode)


def check_optimal(decoder, scores, projective, mode, gold):
    n = scores.shape[0] - 1
    H = feasible(n, projective, mode, gold)
    all_scores = scores[np.arange(1, n + 1), H].sum(axis=1)
    best = all_scores.max()
    heads = decoder(scores, **kwargs(mode, gold))
    assert heads.dtype == np.int64 and heads.shape == (n,)
    assert (heads == H).all(axis=1).any(), f"not a feasible tree: {heads}"
    assert tree_score(scores, heads) == pytest.approx(best, abs=1e-9)
    top = np.flatnonzero(all_scores >= best - 1e-9)
    if len(top) == 1:
        assert heads.tolist() == H[top[0]].tolist()


DECODERS = [
    pytest.param(eisner, True, id="eisner"),
    pytest.param(chu_liu_edmonds, False, id="cle-numpy"),
    pytest.param(lambda s, **k: chu_liu_edmonds(s, backend="networkx", **k), False, id="cle-networkx"),
]


@pytest.mark.parametrize("decoder,projective", DECODERS)
@pytest.mark.parametrize("mode", MODES, ids=["single", "multi", "given-root"])
def test_brute_force_random(decoder, projective, mode):
    rng = np.random.default_rng(1234)
    for n in range(1, 7):
        for _ in range(12 if n < 6 else 4):
            scores = rng.normal(size=(n + 1, n + 1))
            check_optimal(decoder, scores, projective, mode, gold=int(rng.integers(1, n + 1)))


@pytest.mark.parametrize("decoder,projective", DECODERS)
@pytest.mark.parametrize("mode", MODES, ids=["single", "multi", "given-root"])
def test_brute_force_integer_ties(decoder, projective, mode):
    rng = np.random.default_rng(99)
    for n in range(2, 6):
        for _ in range(8):
            scores = rng.integers(0, 3, size=(n + 1, n + 1)).astype(float)
            check_optimal(decoder, scores, projective, mode, gold=int(rng.integers(1, n + 1)))


def test_root_bias_matters_only_for_multiroot():
    # ROOT arcs dominate: single-root must still give one ROOT child
    scores = np.zeros((5, 5))
    scores[1:, 0] = 10.0
    for dec in (eisner, chu_liu_edmonds):
        assert (dec(scores) == 0).sum() == 1
        assert (dec(scores, multiroot=True) == 0).all()
        assert dec(scores, root=3).tolist().count(0) == 1 and dec(scores, root=3)[2] == 0


def test_small_sentences():
    for dec in (eisner, chu_liu_edmonds):
        assert dec(np.zeros((1, 1))).tolist() == []
        assert dec(np.array([[0, 0], [5, 0]])).tolist() == [0]
        assert dec(np.array([[0, 0, 0], [1, 0, 9], [0, 0, 0]])).tolist() == [2, 0]
        assert dec(np.array([[0, 0, 0], [1, 0, 9], [0, 0, 0]]), root=1).tolist() == [0, 1]
        assert dec(np.array([[0, 0, 0], [5, 0, 0], [5, 0, 0]]), multiroot=True).tolist() == [0, 0]


# ------------------------------------------------------------------ normalisation

def test_row_shift_invariance_log_softmax():
    """A per-dependent shift (row-wise log-softmax) never changes the decoded tree."""
    rng = np.random.default_rng(7)
    for n in (2, 5, 9, 17):
        for _ in range(5):
            F = rng.gamma(2.0, size=(n, n))
            raw = dependency_scores(F, root_score=float(rng.random()))
            norm = dependency_scores(F, root_score=raw[1, 0], normalize="log_softmax")
            shifted = raw + rng.normal(size=(n + 1, 1)) * 100
            for dec in (eisner, chu_liu_edmonds):
                for kw in ({}, {"multiroot": True}, {"root": n}):
                    ref = dec(raw, **kw)
                    assert dec(norm, **kw).tolist() == ref.tolist()
                    assert tree_score(norm, ref) == pytest.approx(tree_score(norm, dec(shifted, **kw)))


def test_constant_root_score_irrelevant_for_single_root():
    rng = np.random.default_rng(3)
    F = rng.random((8, 8))
    for dec in (eisner, chu_liu_edmonds):
        ref = dec(dependency_scores(F))
        for c in (-5.0, 0.3, 100.0):
            assert dec(dependency_scores(F, root_score=c)).tolist() == ref.tolist()
            gold_root = dec(dependency_scores(F), root=4).tolist()
            assert dec(dependency_scores(F, root_score=c), root=4).tolist() == gold_root


def test_dependency_scores_layout_and_bias():
    F = np.arange(9.0).reshape(3, 3)
    s = dependency_scores(F, root_score=[1, 2, 3])
    assert s.shape == (4, 4)
    assert s[2, 3] == F[1, 2]            # word 3 heads word 2 scores F[1][2]
    assert s[1:, 0].tolist() == [1, 2, 3] and (s[0] == 0).all() and (np.diag(s) == 0).all()
    b = dependency_scores(F, arc_bias=0.5)
    assert b[1, 3] == F[0, 2] - 0.5 * 2 and b[1, 0] == 0.0
    probs = np.exp(dependency_scores(F, normalize="log_softmax")[1:])
    probs[np.arange(3), np.arange(1, 4)] = 0
    assert probs.sum(axis=1) == pytest.approx(np.ones(3))
    with pytest.raises(ValueError):
        dependency_scores(F, normalize="softmax")


# ------------------------------------------------------------------ properties

finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


@st.composite
def score_matrices(draw, elements=finite):
    n = draw(st.integers(1, 9))
    return draw(arrays(np.float64, (n + 1, n + 1), elements=elements))


@settings(max_examples=60, deadline=None)
@given(score_matrices(), st.data())
def test_any_finite_matrix_gives_valid_tree(scores, data):
    n = scores.shape[0] - 1
    gold = data.draw(st.integers(1, n))
    for dec, proj in ((eisner, True), (chu_liu_edmonds, False)):
        assert not tree_errors(dec(scores), single_root=True, projective=proj)
        assert not tree_errors(dec(scores, multiroot=True), projective=proj)
        assert not tree_errors(dec(scores, root=gold), single_root=True, root=gold, projective=proj)


def _authors_layout(scores: np.ndarray) -> list[list[float]]:
    """``scores[dependent, head]`` as ``parse_proj``'s ``scores[head][dep]`` (row 0 and diagonal unused)."""
    s = np.array(scores, dtype=float)
    s[0] = 0.0
    np.fill_diagonal(s, 0.0)
    return s.T.tolist()


@settings(max_examples=40, deadline=None)
@given(score_matrices(elements=st.integers(-2, 2).map(float)))
def test_eisner_multiroot_ties_match_parse_proj(scores):
    """Documented tie rule: with several ROOT children allowed, Eisner is Kiperwasser & Goldberg's
    ``parse_proj`` (first maximum over split points), checked on tie-heavy integer matrices."""
    assert eisner(scores, multiroot=True).tolist() == ref_parse_proj(_authors_layout(scores))


@settings(max_examples=40, deadline=None)
@given(score_matrices(elements=st.integers(-2, 2).map(float)), st.data())
def test_ties_survive_row_shifts(scores, data):
    """Adding an integer to every score of one dependent shifts every tree (and every chart item or
    contracted arc a decoder compares) by the same amount, so even tied choices must not change."""
    n = scores.shape[0] - 1
    shift = np.array(data.draw(st.lists(st.integers(-3, 3), min_size=n + 1, max_size=n + 1)), dtype=float)
    shifted = scores + shift[:, None]
    gold = data.draw(st.integers(1, n))
    for dec in (eisner, chu_liu_edmonds):
        for kw in ({}, {"multiroot": True}, {"root": gold}):
            assert dec(shifted, **kw).tolist() == dec(scores, **kw).tolist()


def test_all_equal_scores_fixed_output():
    s = np.ones((6, 6))
    # Eisner's tie rule (first split point wins) derives every word from the item to its left:
    # ROOT -> word 1 -> word 2 -> ... (the left chain), single-root or not.
    assert eisner(s).tolist() == [0, 1, 2, 3, 4]
    assert eisner(s, multiroot=True).tolist() == [0, 1, 2, 3, 4]
    assert not tree_errors(chu_liu_edmonds(s), single_root=True)
    # both CLE backends insert/scan heads in ascending order, so they break this tie alike
    assert chu_liu_edmonds(s).tolist() == chu_liu_edmonds(s, backend="networkx").tolist()
    # documented tie rule for CLE: the lowest-numbered head wins each greedy choice
    assert chu_liu_edmonds(s, multiroot=True).tolist() == [0, 0, 0, 0, 0]


def test_input_not_modified():
    rng = np.random.default_rng(0)
    s = rng.random((6, 6))
    keep = s.copy()
    eisner(s), chu_liu_edmonds(s), chu_liu_edmonds(s, backend="networkx"), eisner(s, root=2)
    assert (s == keep).all()


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_raises(bad):
    s = np.random.default_rng(0).random((5, 5))
    s[2, 3] = bad
    for dec in (eisner, chu_liu_edmonds):
        with pytest.raises(DecodeError, match=r"scores\[2, 3\]"):
            dec(s)
    with pytest.raises(DecodeError):
        dependency_scores(np.full((3, 3), bad))
    # row 0 and the diagonal are never read, so they may hold anything
    s[2, 3] = 0.5
    s[0, 1] = s[3, 3] = bad
    eisner(s), chu_liu_edmonds(s)


@pytest.mark.parametrize("shape", [(3, 4), (3,), (0, 0), (2, 2, 2)])
def test_wrong_shape_raises(shape):
    for dec in (eisner, chu_liu_edmonds):
        with pytest.raises(DecodeError, match="square"):
            dec(np.zeros(shape))


def test_bad_root_and_options():
    s = np.zeros((4, 4))
    for dec in (eisner, chu_liu_edmonds):
        with pytest.raises(ValueError):
            dec(s, root=4)
        with pytest.raises(ValueError):
            dec(s, root=0)
        with pytest.raises(ValueError):
            dec(s, root=1, multiroot=True)
    with pytest.raises(ValueError):
        chu_liu_edmonds(s, backend="scipy")

