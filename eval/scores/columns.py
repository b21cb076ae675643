"""The score columns of every results table, asked of the score classes (:class:`pmask.eval.scores.score.Score`).

``eval``'s comparison (:class:`pmask.eval.comparison.tables.Comparison`), the layer sweep
(:mod:`pmask.eval.studies.sweep`), ``bench``'s rows and ``results.csv`` (:mod:`pmask.eval.studies.bench`), the
notebook tables and the data frames take their score columns, labels and headline from here; and
the comparison, the sweep and ``bench`` fill every score of their task that :data:`SCORES` holds
(:class:`pmask.eval.scores.score_set.ScoreSet`): nothing else lists them. A score class says its
``name``, its ``task``, its ``columns`` (the first the headline) and whether it is ``optional`` (computed and
shown only when asked, by its name: ``hoover_uuas``). The first score of a task that is not optional is
the task's own (its headline is the task's). Adding a score is writing its class, registering it in
:data:`SCORES` at the end of its module, and importing that module in :mod:`pmask.eval.scores` (its place among
the imports there is its place in the tables).

Example:
    >>> percent_keys("constituency"), layer_keys("constituency"), headline_key("dependency")
    (('f1_sentence', 'f1_corpus', 'precision', 'recall'), ('f1_sentence', 'f1_corpus'), 'uas')
    >>> percent_keys("dependency"), percent_keys("dependency", ["hoover_uuas"])
    (('uas', 'uuas'), ('uas', 'uuas', 'hoover_uuas', 'hoover_uuas_mean'))
    >>> label("uuas"), label("pair uas"), label("words"), is_percent_key("pair uas")
    ('UUAS', 'pair uas', 'Words', True)
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from pmask.common.errors import OptionError, SettingError
from pmask.eval.scores.score import SCORES, Column, Score

#: Labels of the count columns the tables add after the scores.
COUNT_LABELS = {"words": "Words", "sentences": "Sentences"}


def optional_scores() -> dict[str, type[Score]]:
    """``{name: class}`` of the scores computed only when asked (``{"hoover_uuas": HooverUuasScore}``)."""
    return {cls.name: cls for cls in SCORES.values() if cls.optional}


def check_asked(scores: Iterable[str], task: str | None = None, what: str = "the prediction") -> tuple[str, ...]:
    """``scores`` (names of optional scores) as a tuple, each known and, given the ``task`` of the trees
    scored, of that task; a one-line error otherwise (``what`` names the trees in it).

    Example:
        >>> check_asked(["hoover_uuas"], "constituency", "p.txt")
        Traceback (most recent call last):
        pmask.common.errors.SettingError: scores hoover_uuas needs dependency trees, and the trees of p.txt are ...
    """
    asked, known = tuple(scores), optional_scores()
    for name in asked:
        if name not in known:
            raise OptionError(f"unknown optional score '{name}' (choose from {', '.join(known) or 'none'})")
        if task is not None and known[name].task != task:
            raise SettingError(f"{{scores}} {name} needs {known[name].task} trees, and the trees of {what} are "
                               f"{task} trees; leave it out")
    return asked


def score_classes(task: str, scores: Iterable[str] = ()) -> tuple[type[Score], ...]:
    """The score classes a row of ``task`` holds, in :data:`SCORES` order: the task's own, every other one
    that is not optional, and the optional ones named in ``scores`` (unknown names refused)."""
    asked = check_asked(scores)
    chosen = tuple(cls for cls in SCORES.values() if cls.task == task and (not cls.optional or cls.name in asked))
    if not chosen or chosen[0].optional:
        raise KeyError(f"no score for task {task!r} (scored tasks: {', '.join(tasks())})")
    return chosen


def score_class(task: str) -> type[Score]:
    """The score of ``task`` (``"dependency"``: :class:`DependencyScore`); KeyError for another."""
    return score_classes(task)[0]


def tasks() -> tuple[str, ...]:
    """The tasks that have a score, in table order."""
    return tuple(dict.fromkeys(cls.task for cls in SCORES.values() if not cls.optional))


def percent_keys(task: str, scores: Iterable[str] = ()) -> tuple[str, ...]:
    """Every percentage column of ``task``'s scores (``eval``'s comparison), headline first; optional
    scores' when named in ``scores``."""
    return tuple(c.key for cls in score_classes(task, scores) for c in cls.columns)


def layer_keys(task: str, scores: Iterable[str] = ()) -> tuple[str, ...]:
    """The columns the per-layer tables show for ``task`` (sweep, bench), headline first; optional
    scores' when named in ``scores``."""
    return tuple(key for cls in score_classes(task, scores) for key in cls.layer_keys())


def headline_key(task: str) -> str:
    """The headline column of ``task``: ``uas``, ``f1_sentence``."""
    return score_class(task).headline_key()


def decoder_headline(decoder: str) -> str:
    """The score a decoder's trees are judged by: UUAS for undirected trees (they say nothing of
    direction), else its task's headline.

    Example:
        >>> decoder_headline("eisner"), decoder_headline("mst-projective"), decoder_headline("mart")
        ('uas', 'uuas', 'f1_sentence')
    """
    from pmask.trees.registry import get_decoder

    entry = get_decoder(decoder)
    return "uuas" if entry.undirected else headline_key(entry.task)


def all_percent_keys() -> tuple[str, ...]:
    """Every score's percentage columns, score after score (:data:`SCORES` order), optional ones included."""
    return tuple(c.key for cls in SCORES.values() for c in cls.columns)


def all_layer_keys(scores: Iterable[str] = ()) -> tuple[str, ...]:
    """Every score's per-layer columns, score after score (``bench``'s ``results.csv``); optional scores'
    when named in ``scores``."""
    asked = check_asked(scores)
    return tuple(key for cls in SCORES.values() if not cls.optional or cls.name in asked for key in cls.layer_keys())


def asked_in(rows: Iterable[Mapping[str, Any]]) -> tuple[str, ...]:
    """The optional scores whose headline ``rows`` hold (a table says what it was asked by what it holds)."""
    rows = list(rows)
    return tuple(name for name, cls in optional_scores().items()
                 if any(row.get(cls.headline_key()) is not None for row in rows))


def _column(key: str) -> Column | None:
    return next((c for cls in SCORES.values() for c in cls.columns if c.key == key), None)


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
    """The headline column of a flat row (``bench``): the first task's headline the row holds a value
    for, else the last task's (``uas`` for dependency rows, ``f1_sentence`` for constituency rows)."""
    keys = [headline_key(task) for task in tasks()]
    return next((key for key in keys if row.get(key) is not None), keys[-1])


def labels() -> dict[str, str]:
    """Every column's label: the scores' columns, then the counts' (what ``LABELS`` was)."""
    return {**{c.key: c.label for cls in SCORES.values() for c in cls.columns}, **COUNT_LABELS}
