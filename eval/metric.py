"""What every score in :mod:`pmask.eval` shares: counts gathered sentence by sentence, merged by
addition, so that the score of a corpus is the sum of the scores of its parts.

A score is a dataclass deriving from :class:`Metric` whose fields are all one of:

* a number (a count or a sum): added;
* a dict of count lists (e.g. gold relation -> ``[correct, total]``): added cell by cell;
* a list (e.g. the per-sentence results): concatenated.

Its ``add(...)`` scores one sentence; its ``to_dict()`` gives the figures (percentages 0-100
plus the counts). ``a + b`` and ``sum(scores)`` return a new score, ``a += b`` merges into
``a``; a new field is merged by the rule of its type, with no code to add. ``repr()`` shows the
figures of ``to_dict()`` on one line, never the per-sentence data (subclasses are declared with
``@dataclass(repr=False)`` to keep it).

Example:
    >>> from pmask.eval.dependency_score import DependencyScore
    >>> a, b = DependencyScore(), DependencyScore()
    >>> _ = a.add([2, 0], [2, 0]); _ = b.add([0, 1, 2], [2, 0, 2])
    >>> total = sum([a, b])
    >>> total.correct, total.total, total.sentences
    (3, 5, 2)
"""
from __future__ import annotations

from dataclasses import fields
from typing import Any, TypeVar, cast

M = TypeVar("M", bound="Metric")


def merged(a: Any, b: Any) -> Any:
    """``a`` and ``b`` merged by the rule of their type (module docstring); neither is changed.

    Example:
        >>> merged({"nsubj": [1, 2]}, {"nsubj": [1, 1], "obj": [0, 1]}), merged([1], [2]), merged(2, 3)
        ({'nsubj': [2, 3], 'obj': [0, 1]}, [1, 2], 5)
    """
    if isinstance(a, dict):
        out = {key: list(cell) for key, cell in a.items()}
        for key, cell in b.items():
            mine = out.setdefault(key, [0] * len(cell))
            out[key] = [x + y for x, y in zip(mine, cell)]
        return out
    return a + b   # numbers add, lists concatenate (into a new list)


class Metric:
    """Base of the scores: ``+``, ``+=``, ``sum()`` and an abstract ``to_dict()`` (module docstring).

    Subclasses are dataclasses whose every field has a default, so that ``type(self)()`` is the
    empty score.
    """

    def to_dict(self) -> dict[str, Any]:
        """The figures (percentages 0-100) and the counts behind them."""
        raise NotImplementedError

    def __repr__(self) -> str:
        """``Name(key=value, ...)`` of :meth:`to_dict`, fractional numbers to two decimals.

        Example:
            >>> from pmask.eval.dependency_score import DependencyScore
            >>> s = DependencyScore(); _ = s.add([0, 1, 2], [2, 0, 2]); s
            DependencyScore(uas=33.33, uuas=66.67, correct=1, correct_undirected=2, total=3, sentences=1)
        """
        shown = (f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v!r}" for k, v in self.to_dict().items())
        return f"{type(self).__name__}({', '.join(shown)})"

    def __iadd__(self: M, other: M) -> M:
        if not isinstance(other, type(self)):
            return NotImplemented
        for f in fields(cast(Any, self)):   # every Metric subclass is a dataclass
            setattr(self, f.name, merged(getattr(self, f.name), getattr(other, f.name)))
        return self

    def __add__(self: M, other: M) -> M:
        if not isinstance(other, type(self)):
            return NotImplemented
        out = type(self)()
        out += self
        out += other
        return out

    def __radd__(self: M, other: Any) -> M:
        if other == 0:   # plain sum(scores) starts from 0
            return self + type(self)()
        return NotImplemented
