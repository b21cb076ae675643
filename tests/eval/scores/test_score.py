"""The scores share one base class (:class:`pmask.eval.scores.score.Score`): addition is written once,
merges every field by its type, never aliases an operand and refuses mixing scores."""
from __future__ import annotations

from dataclasses import dataclass, field

import nltk
import pytest

from pmask.eval import BracketScore, DependencyScore
from pmask.eval.scores.score import Score, merged


@dataclass
class Toy(Score):
    """A score with one field of each kind the base class merges."""

    count: int = 0
    mass: float = 0.0
    cells: dict[str, list[int]] = field(default_factory=dict)
    items: list[str] = field(default_factory=list)

    def to_dict(self):
        return {"count": self.count}


def test_a_new_score_adds_every_field_with_no_code_of_its_own():
    a = Toy(1, 0.5, {"x": [1, 2]}, ["a"])
    b = Toy(2, 0.25, {"x": [3, 4], "y": [1, 1]}, ["b"])
    assert a + b == Toy(3, 0.75, {"x": [4, 6], "y": [1, 1]}, ["a", "b"])
    assert sum([a, b]) == a + b and sum([a]) == a


def test_sum_and_in_place_addition_leave_the_operands_alone():
    a = Toy(1, 0.5, {"x": [1, 2]}, ["a"])
    b = Toy(2, 0.25, {"x": [3, 4]}, ["b"])
    total = a + b
    total.cells["x"][0] = 99
    total.items.append("c")
    assert a == Toy(1, 0.5, {"x": [1, 2]}, ["a"]) and b == Toy(2, 0.25, {"x": [3, 4]}, ["b"])
    acc = Toy()
    same = acc
    acc += a
    acc += b
    assert acc is same and acc == Toy(3, 0.75, {"x": [4, 6]}, ["a", "b"])
    acc.cells["x"][1] = 0
    assert a.cells == {"x": [1, 2]}


def test_the_scores_share_the_base_and_do_not_mix():
    dep, brackets = DependencyScore(), BracketScore()
    assert isinstance(dep, Score) and isinstance(brackets, Score)
    for x, y in ((dep, brackets), (brackets, dep), (dep, 1), (Toy(), dep)):
        with pytest.raises(TypeError):
            x + y
    with pytest.raises(TypeError):
        dep += brackets
    with pytest.raises(NotImplementedError):
        Score().to_dict()


def test_the_real_scores_merge_like_before():
    """Hand-computed: the relation and length tables add cell by cell, the sentences concatenate."""
    a, b = DependencyScore(), DependencyScore()
    a.add([2, 0], [2, 0], deprels=["nsubj", "root"], sent_id="a")
    b.add([0, 1, 1], [2, 0, 2], deprels=["nsubj", "root", "obj"], sent_id="b")
    total = a + b
    assert (total.correct, total.correct_undirected, total.total) == (2, 3, 5)
    assert total.relations == {"nsubj": [1, 2], "root": [1, 2], "obj": [0, 1]}
    assert total.lengths == {"1": [1, 3], "root": [1, 2]}
    assert [s.id for s in total.per_sentence] == ["a", "b"]
    x, y = BracketScore(), BracketScore()
    tree = nltk.Tree.fromstring("(X (X a b) c)")
    x.add(tree, tree)
    y.add(nltk.Tree.fromstring("(X a (X b c))"), tree)
    both = x + y
    assert (both.sentences, both.matched, both.gold_brackets, both.pred_brackets) == (2, 3, 4, 4)
    assert both.f1_sum == pytest.approx(1.0)


def test_merged_by_type():
    assert merged({"a": [1, 2, 3]}, {"a": [1, 1, 1]}) == {"a": [2, 3, 4]}
    assert merged([1], [2]) == [1, 2] and merged(1.5, 2) == 3.5
