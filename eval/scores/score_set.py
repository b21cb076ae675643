"""The scores of one row of a table (a prediction, a baseline, a layer): every score class of its task
that :data:`pmask.eval.scores.columns.SCORES` lists (the optional ones when asked), filled by one call
per sentence, :meth:`pmask.eval.scores.score.Score.add_sentence`.

The comparison (``eval``), the layer sweep and ``bench`` build their rows with :meth:`ScoreSet.of`, so
a score named in ``SCORES`` is computed wherever its task is scored, with no other code to change.

Example:
    >>> from pmask.corpora import Sentence
    >>> gold = Sentence(id="s1", words=["a", "b", "."], heads=[2, 0, 2], upos=["DET", "NOUN", "PUNCT"], path="g")
    >>> row = ScoreSet.of("dependency", ["hoover_uuas"])
    >>> row.add_sentence([2, 0, 1], gold)
    >>> [type(s).__name__ for s in row], row.main.uas
    (['DependencyScore', 'HooverUuasScore'], 66.66666666666667)
    >>> {k: round(v, 2) for k, v in row.to_dict().items() if k in ("uas", "uuas", "hoover_uuas")}
    {'uas': 66.67, 'uuas': 66.67, 'hoover_uuas': 100.0}
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypeVar

from pmask.corpora.sentence import Sentence
from pmask.eval.scores import columns
from pmask.eval.scores.score import Score

S = TypeVar("S", bound=Score)


class ScoreSet:
    """Every score of one row, in :data:`~pmask.eval.scores.columns.SCORES` order, the task's own first
    (:attr:`main`: ``DependencyScore`` or ``BracketScore``).

    ``to_dict()`` holds every score's figures under their own keys; ``a + b`` and ``sum()`` add
    score by score; any other attribute is the main score's (``row.uas``, ``row.per_sentence``,
    ``row.breakdowns()``), so a set reads as the task's score.
    """

    def __init__(self, scores: Sequence[Score]):
        if not scores:
            raise ValueError("a score set holds at least the task's own score")
        self.scores: tuple[Score, ...] = tuple(scores)

    @classmethod
    def of(cls, task: str, scores: Iterable[str] = ()) -> ScoreSet:
        """Empty scores of ``task``: every listed score that is not optional, and the optional ones named
        in ``scores`` (:func:`pmask.eval.scores.columns.score_classes`)."""
        return cls([score_class() for score_class in columns.score_classes(task, scores)])

    @property
    def main(self) -> Score:
        """The task's own score (its headline is the row's)."""
        return self.scores[0]

    @property
    def task(self) -> str:
        return self.main.task

    def add_sentence(self, pred: Any, gold: Sentence, *, punct_mask: Sequence[bool] | None = None) -> None:
        """Add one sentence to every score (:meth:`Score.add_sentence`: predicted heads or tree, the gold
        sentence, the words ``--punct exclude`` leaves out)."""
        for score in self.scores:
            score.add_sentence(pred, gold, punct_mask=punct_mask)

    def get(self, score_class: type[S]) -> S | None:
        """The score of class ``score_class``, or None when the set does not hold one."""
        return next((s for s in self.scores if isinstance(s, score_class)), None)

    def layer_keys(self) -> tuple[str, ...]:
        """Every score's per-layer columns (sweep, bench), the main score's first."""
        return tuple(key for score in self.scores for key in score.layer_keys())

    def to_dict(self) -> dict[str, Any]:
        """Every score's ``to_dict()``, the main score's first; a key two scores give is a ValueError."""
        out: dict[str, Any] = {}
        for score in self.scores:
            figures = score.to_dict()
            clash = sorted(set(out) & set(figures))
            if clash:
                raise ValueError(f"{type(score).__name__} gives {', '.join(clash)}, which an earlier score of "
                                 f"the row gives too: name its figures apart")
            out.update(figures)
        return out

    def __iter__(self) -> Iterator[Score]:
        return iter(self.scores)

    def __getattr__(self, name: str) -> Any:   # only for names the set itself lacks: the main score's
        if name == "scores":   # not set yet (copy, pickle): no recursion through main
            raise AttributeError(name)
        return getattr(self.main, name)

    def __add__(self, other: ScoreSet) -> ScoreSet:
        if not isinstance(other, ScoreSet) or [type(s) for s in self] != [type(s) for s in other]:
            return NotImplemented
        return ScoreSet([a + b for a, b in zip(self, other)])

    def __radd__(self, other: Any) -> ScoreSet:
        if other == 0:   # plain sum(sets) starts from 0
            return ScoreSet([s + type(s)() for s in self])
        return NotImplemented

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ScoreSet) and self.scores == other.scores

    __hash__ = None   # type: ignore[assignment]   # mutable, as the scores

    def __repr__(self) -> str:
        return f"ScoreSet({', '.join(map(repr, self.scores))})"
