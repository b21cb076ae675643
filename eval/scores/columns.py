"""The score columns of every results table, asked of the score classes (:class:`pmask.eval.scores.score.Score`).

``eval``'s comparison (:class:`pmask.eval.comparison.tables.Comparison`), the layer sweep
(:mod:`pmask.eval.studies.sweep`), ``bench``'s rows and ``results.csv`` (:mod:`pmask.eval.studies.bench`), the
notebook tables and the data frames take their score columns, labels and headline from here;
nothing else lists them. A score class says its ``task`` and its ``columns`` (the first the
headline); :data:`SCORES` lists the classes, one per task, in table order. Adding a score is
writing its class and naming it in :data:`SCORES`.

Example:
    >>> percent_keys("constituency"), layer_keys("constituency"), headline_key("dependency")
    (('f1_sentence', 'f1_corpus', 'precision', 'recall'), ('f1_sentence', 'f1_corpus'), 'uas')
    >>> label("uuas"), label("pair uas"), label("words"), is_percent_key("pair uas")
    ('UUAS', 'pair uas', 'Words', True)
"""
from __future__ import annotations

from typing import Any, Mapping

from pmask.eval.scores.bracket_score import BracketScore
from pmask.eval.scores.dependency_score import DependencyScore
from pmask.eval.scores.score import Column, Score

#: The score classes the tables show, one per task, in table order (dependency columns first).
SCORES: list[type[Score]] = [DependencyScore, BracketScore]

#: Labels of the count columns the tables add after the scores.
COUNT_LABELS = {"words": "Words", "sentences": "Sentences"}


def score_class(task: str) -> type[Score]:
    """The score class of ``task`` (``"dependency"``: :class:`DependencyScore`); KeyError for another."""
    for cls in SCORES:
        if cls.task == task:
            return cls
    raise KeyError(f"no score for task {task!r} (scored tasks: {', '.join(tasks())})")


def tasks() -> tuple[str, ...]:
    """The tasks that have a score, in table order."""
    return tuple(cls.task for cls in SCORES)


def percent_keys(task: str) -> tuple[str, ...]:
    """Every percentage column of ``task``'s score (``eval``'s comparison), headline first."""
    return tuple(c.key for c in score_class(task).columns)


def layer_keys(task: str) -> tuple[str, ...]:
    """The columns the per-layer tables show for ``task`` (sweep, bench), headline first."""
    return score_class(task).layer_keys()


def headline_key(task: str) -> str:
    """The headline column of ``task``: ``uas``, ``f1_sentence``."""
    return score_class(task).headline_key()


def all_percent_keys() -> tuple[str, ...]:
    """Every score's percentage columns, score after score (:data:`SCORES` order)."""
    return tuple(c.key for cls in SCORES for c in cls.columns)


def all_layer_keys() -> tuple[str, ...]:
    """Every score's per-layer columns, score after score (``bench``'s ``results.csv``)."""
    return tuple(key for cls in SCORES for key in cls.layer_keys())


def _column(key: str) -> Column | None:
    return next((c for cls in SCORES for c in cls.columns if c.key == key), None)


def score_key(key: str) -> str:
    """The score a sweep column holds: ``"uas"`` for ``"uas"`` and for a probe's ``"pair uas"``."""
    return key.rsplit(" ", 1)[-1]


def is_percent_key(key: str) -> bool:
    """Whether a column holds a percentage (``uas``, ``f1_sentence``, a probe's ``"pair uas"``, ...)."""
    return score_key(key) in all_percent_keys()


def label(key: str) -> str:
    """A column's header: the score column's label (``"UAS"``), a count's (``"Words"``), else the key."""
    column = _column(key)
    return column.label if column is not None else COUNT_LABELS.get(key, key)


def short_label(key: str) -> str:
    """A score column's name in a plot's title (``"UAS"``, ``"F1"`` for sentence-level F1)."""
    column = _column(key)
    return column.name if column is not None else key


def row_headline(row: Mapping[str, Any]) -> str:
    """The headline column of a flat row (``bench``): the first score's headline the row holds a value
    for, else the last score's (``uas`` for dependency rows, ``f1_sentence`` for constituency rows)."""
    keys = [cls.headline_key() for cls in SCORES]
    return next((key for key in keys if row.get(key) is not None), keys[-1])


def labels() -> dict[str, str]:
    """Every column's label: the scores' columns, then the counts' (what ``LABELS`` was)."""
    return {**{c.key: c.label for cls in SCORES for c in cls.columns}, **COUNT_LABELS}
