"""Baselines (goldens, exact uniformity) and the decoder registry.

heads[k-1] = head of word k, 0 = ROOT; constituency trees are nltk.Tree with label "X".
"""
from __future__ import annotations

from collections import Counter
from math import comb
from pathlib import Path

import numpy as np
import pytest

from pmask.common.errors import DecodeError
from pmask.corpora import read_corpus
from pmask.eval import BracketScore, DependencyScore
from pmask.trees import (
    balanced,
    decode_constituency,
    decode_dependencies,
    left_branching,
    left_chain,
    random_binary,
    random_projective,
    random_scores,
    right_branching,
    right_chain,
    to_brackets,
)
from pmask.trees.baselines import _randbelow, count_projective
from pmask.trees.registry import DECODERS, decoder_names
from pmask.trees.validate import tree_errors

from brute_force import all_trees

# ------------------------------------------------------------------ goldens

def test_chains_golden():
    assert right_chain(5).tolist() == [2, 3, 4, 5, 0]
    assert right_chain(5, root=2).tolist() == [2, 0, 4, 5, 0]
    assert right_chain(5, root=5).tolist() == [2, 3, 4, 5, 0]
    assert right_chain(1).tolist() == [0]
    assert left_chain(5).tolist() == [0, 1, 2, 3, 4]
    assert left_chain(5, root=3).tolist() == [0, 1, 0, 3, 4]
    assert left_chain(2, root=1).tolist() == [0, 1]
    with pytest.raises(ValueError):
        right_chain(3, root=4)


def test_connect_adjacent_golden():
    from pmask.trees.registry import DECODERS, DecodeInput, decode

    def heads(**kw):
        return decode("connect-adjacent", DecodeInput(words=list("abcde"), **kw)).tolist()

    # each word joined to the next, directed away from the root (the gold one, else the first word)
    assert heads() == [0, 1, 2, 3, 4] and heads(root=3) == [2, 3, 0, 3, 4]
    # words left out (punctuation): the kept ones joined across them, the others hung on the word before
    assert heads(root=3, keep=[True, False, True, True, False]) == [3, 1, 0, 3, 4]
    assert heads(keep=[False, True, True, False, True]) == [2, 0, 2, 3, 3]
    entry = DECODERS["connect-adjacent"]
    assert entry.baseline and entry.undirected and not entry.needs_model and entry.task == "dependency"


def test_branching_golden():
    w = list("abcde")
    assert to_brackets(right_branching(w)) == "(X a (X b (X c (X d e))))"
    assert to_brackets(left_branching(w)) == "(X (X (X (X a b) c) d) e)"
    assert to_brackets(balanced(w)) == "(X (X (X a b) c) (X d e))"
    assert to_brackets(balanced(list("abcd"))) == "(X (X a b) (X c d))"
    for f in (right_branching, left_branching, balanced):
        assert to_brackets(f(["a"])) == "(X a)"
        assert to_brackets(f(["a", "b"])) == "(X a b)"


def test_random_scores_layout():
    s = random_scores(4, np.random.default_rng(0))
    assert s.shape == (5, 5) and (s[0] == 0).all() and (np.diag(s) == 0).all()
    assert (s[1:, 1:] + np.eye(4) > 0).all()


# ------------------------------------------------------------------ uniformity

def chi_square_ok(counts: Counter, support: list, draws: int) -> bool:
    """Pearson chi-square against uniform; accept below mean + 5 sd (df = k-1)."""
    k = len(support)
    expected = draws / k
    stat = sum((counts.get(x, 0) - expected) ** 2 / expected for x in support)
    return set(counts) <= set(support) and stat < (k - 1) + 5 * np.sqrt(2 * (k - 1))


@pytest.mark.parametrize("n", [3, 4])
def test_random_projective_is_uniform(n):
    H = all_trees(n, projective=True)
    support = [tuple(h) for h in H[(H == 0).sum(axis=1) == 1].tolist()]
    assert len(support) == count_projective(n)
    rng = np.random.default_rng(n)
    draws = 300 * len(support)
    counts = Counter(tuple(random_projective(n, rng).tolist()) for _ in range(draws))
    assert set(counts) == set(support)
    assert chi_square_ok(counts, support, draws)


def test_random_projective_given_root_uniform_and_valid():
    H = all_trees(4, projective=True)
    support = [tuple(h) for h in H[((H == 0).sum(axis=1) == 1) & (H[:, 1] == 0)].tolist()]
    rng = np.random.default_rng(0)
    counts = Counter(tuple(random_projective(4, rng, root=2).tolist()) for _ in range(300 * len(support)))
    assert chi_square_ok(counts, support, 300 * len(support))
    for n in (1, 2, 17, 60):
        h = random_projective(n, rng)
        assert not tree_errors(h, single_root=True, projective=True)


def test_random_projective_counts():
    assert [count_projective(n) for n in range(1, 8)] == [1, 2, 7, 30, 143, 728, 3876]
    # closed form (OEIS A006013): C(3n-2, n-1) / n single-rooted projective trees
    assert all(count_projective(n) == comb(3 * n - 2, n - 1) // n for n in range(1, 80))


def test_random_binary_is_uniform():
    words = list("abcde")                            # Catalan(4) = 14 bracketings
    rng = np.random.default_rng(1)
    draws = 14 * 300
    counts = Counter(to_brackets(random_binary(words, rng)) for _ in range(draws))
    assert len(counts) == 14
    assert chi_square_ok(counts, list(counts), draws)


def test_randbelow_exact_for_huge_totals():
    rng = np.random.default_rng(0)
    total = 3 * 2**100 + 1
    xs = [_randbelow(rng, total) for _ in range(200)]
    assert all(0 <= x < total for x in xs) and max(xs) > 2**100
    assert Counter(_randbelow(rng, 3) for _ in range(3000)).keys() == {0, 1, 2}


def test_seeded_determinism():
    a = random_projective(20, np.random.default_rng(5)).tolist()
    assert a == random_projective(20, np.random.default_rng(5)).tolist()
    assert to_brackets(random_binary(list("abcdefgh"), np.random.default_rng(5))) == \
        to_brackets(random_binary(list("abcdefgh"), np.random.default_rng(5)))


# ------------------------------------------------------------------ every decoder by name

@pytest.mark.parametrize("name", decoder_names("dependency"))
def test_decode_dependencies_every_name(name):
    rng = np.random.default_rng(0)
    n = 7
    F = rng.random((n, n))
    for kw in ({}, {"root": 3}):
        heads = decode_dependencies(name, n, F=F, seed=4, **kw)
        assert not tree_errors(heads)
        if kw and name != "right-chain" and name != "left-chain":
            assert not tree_errors(heads, single_root=True, root=3)
        assert heads.tolist() == decode_dependencies(name, n, F=F, seed=4, **kw).tolist()


def test_decode_dependencies_dispatch():
    rng = np.random.default_rng(1)
    F = rng.random((6, 6))
    from pmask.trees import chu_liu_edmonds, dependency_scores, eisner, faithful_eisner
    assert decode_dependencies("eisner", 6, F=F).tolist() == eisner(dependency_scores(F)).tolist()
    assert decode_dependencies("cle", 6, F=F, multiroot=True).tolist() == \
        chu_liu_edmonds(dependency_scores(F), multiroot=True).tolist()
    assert decode_dependencies("right-chain", 6, root=2).tolist() == right_chain(6, root=2).tolist()
    Fc = np.zeros((7, 7))
    Fc[1:, 1:] = F
    assert decode_dependencies("eisner", 6, F_cls=Fc, root=2, faithful=True).tolist() == \
        faithful_eisner(Fc, 2).tolist()
    with pytest.raises(DecodeError, match="impact matrix F"):
        decode_dependencies("eisner", 6)
    with pytest.raises(DecodeError, match="6 words"):
        decode_dependencies("cle", 6, F=np.zeros((5, 5)))
    with pytest.raises(ValueError, match="unknown dependency decoder"):
        decode_dependencies("nonesuch", 6, F=F)
    with pytest.raises(DecodeError, match="s1.conllu:3"):
        decode_dependencies("eisner", 2, F=np.full((2, 2), np.nan), where="s1.conllu:3 (sentence 1)")


@pytest.mark.parametrize("name", decoder_names("constituency"))
def test_decode_constituency_every_name(name):
    words = list("abcdefg")
    F = np.random.default_rng(0).random((7, 7))
    tree = decode_constituency(name, words, F=F, seed=3)
    assert tree.leaves() == words
    assert to_brackets(tree) == to_brackets(decode_constituency(name, words, F=F, seed=3))
    if DECODERS[name].needs_model:
        with pytest.raises(DecodeError, match="impact matrix F"):
            decode_constituency(name, words)
    with pytest.raises(DecodeError, match="empty"):
        decode_constituency(name, [], F=F)


# ----------------------------------------- acceptance numbers: the paper's uninformed baselines on the shared gold data

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"


def need(rel: str) -> Path:
    path = SHARED / rel
    if not path.exists():
        pytest.skip(f"shared data absent: {path}")
    return path


@pytest.mark.parametrize("rel,expected", [
    ("ud/PUD-wu2020/PUD.conllu", 35.04),
    ("ud/UD_English-PUD/en_pud-ud-test.conllu", 35.30),
])
def test_right_chain_gold_root_uas(rel, expected):
    score = DependencyScore()
    for s in read_corpus(need(rel)):
        score.add(right_chain(len(s), root=s.root), s.heads, sent_id=s.id)
    assert score.sentences == 1000
    assert round(score.uas, 2) == expected


def test_right_branching_wsj10_f1():
    golds = read_corpus(need("ptb-sample/combined"), max_words=10)
    assert len(golds) == 555
    score = BracketScore()
    for s in golds:
        score.add(right_branching(s.words), s.tree, sent_id=s.id)
    assert round(score.f1_sentence, 2) == 58.60
