"""UAS/UUAS (``DependencyScore``): golden values on hand-made fixtures, additivity, brute force."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pmask.common.errors import DecodeError
from pmask.corpora import read_conllu
from pmask.eval import DependencyScore, punct_mask
from pmask.eval.scores.dependency_score import length_bucket

DATA = Path(__file__).resolve().parents[2] / "data"


def right_chain(n: int, root: int | None = None) -> list[int]:
    """Local reference: head of word i = i + 1, last word → 0, word ``root`` → 0 too."""
    heads = [i + 1 for i in range(1, n + 1)]
    heads[-1] = 0
    if root is not None:
        heads[root - 1] = 0
    return heads


# --------------------------------------------------------------------------- dependencies

@pytest.fixture(scope="module")
def mini():
    return read_conllu(DATA / "mini.conllu")


def score_mini(sents, exclude_punct=False):
    score = DependencyScore()
    for s in sents:
        score.add(right_chain(len(s), s.root), s.heads, deprels=s.deprels,
                  punct_mask=punct_mask(s) if exclude_punct else None, sent_id=s.id)
    return score


def test_uas_golden(mini):
    score = score_mini(mini)
    assert (score.correct, score.correct_undirected, score.total) == (9, 10, 18)
    assert score.uas == pytest.approx(50.0) and score.uuas == pytest.approx(100 * 10 / 18)
    assert [(p.id, p.n, p.correct, p.correct_undirected) for p in score.per_sentence] == [
        ("s1", 6, 3, 3), ("s2", 7, 3, 4), ("3", 2, 1, 1), ("s4", 1, 1, 1), ("s5", 2, 1, 1)]
    assert score.per_sentence[0].uas == pytest.approx(50.0)
    assert score.to_dict() == {"uas": pytest.approx(50.0), "uuas": pytest.approx(100 * 10 / 18), "correct": 9,
                               "correct_undirected": 10, "total": 18, "sentences": 5}
    assert score.by_length() == {
        "root": {"correct": 5, "total": 5, "accuracy": 100.0},
        "1": {"correct": 4, "total": 8, "accuracy": 50.0},
        "2": {"correct": 0, "total": 3, "accuracy": 0.0},
        "3": {"correct": 0, "total": 1, "accuracy": 0.0},
        "5": {"correct": 0, "total": 1, "accuracy": 0.0},
    }
    rel = score.by_relation()
    assert list(rel)[:2] == ["root", "punct"]
    assert rel["root"] == {"correct": 5, "total": 5, "accuracy": 100.0}
    assert rel["punct"] == {"correct": 1, "total": 4, "accuracy": 25.0}
    assert rel["nsubj"]["correct"] == 1 and rel["nsubj"]["total"] == 2
    assert sum(r["total"] for r in rel.values()) == 18


def test_uas_punct_excluded(mini):
    assert [punct_mask(s) for s in mini[:3]] == [
        [False, False, False, True, False, True], [False] * 6 + [True], [True, True]]
    score = score_mini(mini, exclude_punct=True)
    assert (score.correct, score.correct_undirected, score.total) == (7, 8, 13)
    assert score.per_sentence[2].n == 0 and score.per_sentence[2].uas == 0.0  # punctuation-only sentence
    assert "punct" not in score.by_relation()


def test_dependency_score_is_additive(mini):
    whole = score_mini(mini)
    parts = [score_mini([s]) for s in mini]
    for total in (sum(parts, DependencyScore()), sum(parts), parts[0] + parts[1] + parts[2] + parts[3] + parts[4]):
        assert total.to_dict() == whole.to_dict()
        assert total.by_length() == whole.by_length() and total.by_relation() == whole.by_relation()
        assert [p.id for p in total.per_sentence] == [p.id for p in whole.per_sentence]
    acc = DependencyScore()
    for p in parts:
        acc += p
    assert acc.to_dict() == whole.to_dict()
    assert parts[0].total == 6  # the operands are not modified


def test_length_buckets():
    assert [length_bucket(k, h) for k, h in [(1, 0), (1, 2), (9, 4), (1, 7), (2, 12), (20, 9), (1, 13)]] == \
        ["root", "1", "5", "6-10", "6-10", ">10", ">10"]


def test_dependency_score_errors():
    score = DependencyScore()
    with pytest.raises(DecodeError, match="^sentence q: the predicted tree has 2 words but the gold sentence "
                                          "has 3: they are not the same sentence$"):
        score.add([0, 1], [0, 1, 1], sent_id="q")
    with pytest.raises(DecodeError, match="out of range"):
        score.add([0, 1, 4], [0, 1, 1])
    with pytest.raises(DecodeError, match="not an integer"):
        score.add([0, 1, 1.5], [0, 1, 1])
    with pytest.raises(DecodeError, match="no gold heads"):
        score.add([0], None)
    assert score.total == 0 and score.uas == 0.0


@st.composite
def trees(draw, max_n=12, n=None):
    """(n, heads) of a random tree (each word after the first in a random order gets an earlier head)."""
    n = draw(st.integers(1, max_n)) if n is None else n
    order = draw(st.permutations(list(range(1, n + 1))))
    heads = [0] * n
    for i, k in enumerate(order[1:], start=1):
        heads[k - 1] = order[draw(st.integers(0, i - 1))]
    return n, heads


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_uuas_is_undirected_edge_overlap(data):
    n, gold = data.draw(trees())
    pred = data.draw(st.lists(st.integers(0, n), min_size=n, max_size=n))
    s = DependencyScore()
    s.add(pred, gold)
    assert s.correct == sum(p == g for p, g in zip(pred, gold))
    gold_edges = {frozenset((k, h)) for k, h in enumerate(gold, 1)}
    pred_edges = {frozenset((k, h)) for k, h in enumerate(pred, 1)}
    assert s.correct_undirected == len(gold_edges & pred_edges)
    assert s.correct <= s.correct_undirected <= n


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_uuas_trees_are_symmetric(data):
    n, gold = data.draw(trees())
    _, pred = data.draw(trees(n=n))
    a, b = DependencyScore(), DependencyScore()
    a.add(pred, gold)
    b.add(gold, pred)
    assert a.correct_undirected == b.correct_undirected


def test_same_id_other_words_names_the_real_problem():
    from pmask.common.errors import PmaskError
    from pmask.corpora import Sentence
    from pmask.eval.scores.dependency_score import check_same_words

    gold = Sentence(id="s1", words=["a", "b", "c"], heads=[0, 1, 1], path="g.conllu", line=4)
    check_same_words(["a", "b", "c"], gold, "store sentence s1")
    with pytest.raises(PmaskError) as err:
        check_same_words(["x", "y"], gold, "store sentence s1")
    assert str(err.value) == ("store sentence s1 does not match gold g.conllu:4 (sentence s1): the words differ "
                              "(2 words 'x y' vs 3 words 'a b c')")
