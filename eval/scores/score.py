"""What every score in :mod:`pmask.eval` shares: counts gathered sentence by sentence, merged by
addition, so that the score of a corpus is the sum of the scores of its parts; and the columns
it shows in every results table.

A score is a dataclass deriving from :class:`Score` whose fields are all one of:

* a number (a count or a sum): added;
* a dict of count lists (e.g. gold relation -> ``[correct, total]``): added cell by cell;
* a list (e.g. the per-sentence results): concatenated.

Its ``add(...)`` scores one sentence in the score's own terms; ``add_sentence(pred, gold,
punct_mask=...)`` is the one call every caller makes (the comparison, the sweep, ``bench``): the
predicted heads or tree, the gold :class:`~pmask.corpora.sentence.Sentence` (heads, relations,
UPOS, tree, id) and the words ``--punct exclude`` leaves out. Its ``to_dict()`` gives the figures
(percentages 0-100 plus the counts). ``a + b`` and ``sum(scores)`` return a new score, ``a += b`` merges into
``a``; a new field is merged by the rule of its type, with no code to add. ``repr()`` shows the
figures of ``to_dict()`` on one line, never the per-sentence data (subclasses are declared with
``@dataclass(repr=False)`` to keep it).

SuPar-style, a score class also says what the tables show of it: its ``task``, its ``columns``
(:class:`Column`: the ``to_dict()`` key, the label, whether the per-layer tables show it), the
first one its headline (:attr:`Score.headline`), and whether it is computed only when asked
(``optional``: the name that asks for it, e.g. ``hoover_uuas``). The comparison, sweep and bench
fill every listed score of their task (:class:`pmask.eval.scores.score_set.ScoreSet`), and their
tables, CSV and JSON ask :mod:`pmask.eval.scores.columns`, which asks the score classes: adding a
score is one class registered in :data:`SCORES` (and its module's import in :mod:`pmask.eval.scores.columns`).

Example:
    >>> from pmask.eval.scores.dependency_score import DependencyScore
    >>> a, b = DependencyScore(), DependencyScore()
    >>> _ = a.add([2, 0], [2, 0]); _ = b.add([0, 1, 2], [2, 0, 2])
    >>> total = sum([a, b])
    >>> total.correct, total.total, total.sentences
    (3, 5, 2)
    >>> total.headline, DependencyScore.headline_key()
    (60.0, 'uas')
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any, ClassVar, TypeVar, cast

from pmask.common.registry import Registry
from pmask.corpora.sentence import Sentence

M = TypeVar("M", bound="Score")


@dataclass(frozen=True)
class Column:
    """One percentage column a score shows in the results tables.

    Attributes:
        key: its key in the score's ``to_dict()`` (and in every table's JSON and CSV).
        label: its header in Markdown and HTML tables (``"UAS"``, ``"Sentence F1"``).
        per_layer: shown by the per-layer tables too (``sweep``, ``bench``), not only by ``eval``'s comparison.
        short: its name in a plot's title or colour bar (default: ``label``).
    """

    key: str
    label: str
    per_layer: bool = True
    short: str = ""

    @property
    def name(self) -> str:
        """``short``, or the label."""
        return self.short or self.label


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


class Score:
    """Base of the scores: ``+``, ``+=``, ``sum()``, an abstract ``to_dict()`` and the columns
    (module docstring).

    Subclasses are dataclasses whose every field has a default, so that ``type(self)()`` is the
    empty score; a score the tables show sets :attr:`task` and :attr:`columns`.
    """

    #: Its name in :data:`SCORES` (for an optional score, the name that asks for it: ``--score NAME``).
    name: ClassVar[str] = ""
    #: The task whose trees it scores (a :data:`pmask.trees.tasks.TASKS` name); "" for a score no table shows.
    task: ClassVar[str] = ""
    #: Its percentage columns in table order, the headline first.
    columns: ClassVar[tuple[Column, ...]] = ()
    #: Computed only when asked for by its :attr:`name` (``hoover_uuas``: ``evaluate_files(...,
    #: scores=["hoover_uuas"])``, ``pmask eval --score hoover_uuas``), so that outputs that do not ask stay as they
    #: were; False: computed whenever its task is scored.
    optional: ClassVar[bool] = False

    @classmethod
    def headline_key(cls) -> str:
        """The ``to_dict()`` key of the headline score: the first column."""
        return cls.columns[0].key

    @classmethod
    def layer_keys(cls) -> tuple[str, ...]:
        """The keys of the columns the per-layer tables (sweep, bench) show, headline first."""
        return tuple(c.key for c in cls.columns if c.per_layer)

    @property
    def headline(self) -> float:
        """The headline figure (percent): the first column's value."""
        return float(self.to_dict()[self.headline_key()])

    def add_sentence(self, pred: Any, gold: Sentence, *, punct_mask: Sequence[bool] | None = None) -> Any:
        """Score one sentence and add it: the one call the comparison, the sweep and ``bench`` make.

        Args:
            pred: the predicted heads (dependency; ``heads[k-1]`` = head of word k, 0 = ROOT) or tree
                (constituency, an ``nltk.Tree``).
            gold: the gold sentence: ``heads``, ``deprels``, ``upos``, ``tree``, ``id`` as its task has them.
            punct_mask: ``punct_mask[k-1]`` True leaves word k out (``--punct exclude``); None scores every
                word. A score that has its own rule for punctuation ignores it.
        """
        raise NotImplementedError(f"{type(self).__name__} does not score sentences through add_sentence")

    def breakdowns(self, *, subtypes: bool = False) -> dict[str, dict[str, dict[str, Any]]]:
        """Its breakdowns, name -> bucket -> cell of counts and percentages (``eval --details``, ``--json``,
        ``to_pandas(name)``); none by default. ``subtypes``: relation subtypes kept apart, where it applies."""
        return {}

    def to_dict(self) -> dict[str, Any]:
        """The figures (percentages 0-100) and the counts behind them."""
        raise NotImplementedError

    def __repr__(self) -> str:
        """``Name(key=value, ...)`` of :meth:`to_dict`, fractional numbers to two decimals.

        Example:
            >>> from pmask.eval.scores.dependency_score import DependencyScore
            >>> s = DependencyScore(); _ = s.add([0, 1, 2], [2, 0, 2]); s
            DependencyScore(uas=33.33, uuas=66.67, correct=1, correct_undirected=2, total=3, sentences=1)
        """
        shown = (f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v!r}" for k, v in self.to_dict().items())
        return f"{type(self).__name__}({', '.join(shown)})"

    def __iadd__(self: M, other: M) -> M:
        if not isinstance(other, type(self)):
            return NotImplemented
        for f in fields(cast(Any, self)):   # every Score subclass is a dataclass
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


#: The score classes the tables show, in table order (the order their modules register them in, imported by
#: :mod:`pmask.eval.scores.columns`); a task's own score (the first of its task that is not optional) comes
#: before its optional ones. Each module of :mod:`pmask.eval.scores` registers its class as it is imported.
SCORES: Registry[type[Score]] = Registry("score")
