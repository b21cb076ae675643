"""Unlabelled attachment scores (UAS / UUAS) with breakdowns; additive across sentences and corpora.

Conventions (heads are CoNLL-U style: ``heads[k-1]`` = head of word k, 1-based, 0 = ROOT):

* UAS = words whose predicted head equals the gold head / scored words (micro-averaged); the root
  word counts (correct iff it is predicted to attach to 0).
* UUAS: the gold tree's undirected edges are E = {{k, gold(k)} : k = 1..n} (ROOT edges {k, 0}
  included).  A scored word k is undirected-correct when its predicted edge {k, pred(k)} is in E;
  each gold edge is matched at most once per sentence (so a predicted 2-cycle cannot count one
  edge twice).  For tree-shaped predictions without exclusions this is |E_pred ∩ E_gold| / n.
* ``punct_mask[k-1] = True`` excludes word k from scoring (neither numerator nor denominator),
  but it still counts as a head for the others.  Default: every word scored (the paper's setting).
* A head of :data:`~pmask.corpora.sentence.NO_HEAD` (-1) is no head: predicted, it is wrong (the
  last EDU that ``--faithful`` discourse drops); gold (an EDU whose SciDTB parent is -1), nothing
  can match it. Either way the unit is scored and counted wrong, as in Wu et al.'s scoring.
* All reported figures are percentages (0-100); 0.0 when nothing was scored.
* Breakdowns by gold relation count a subtyped relation under its universal relation
  (``nmod:poss`` under ``nmod``), UD's convention for comparing treebanks, unless asked to keep
  the subtypes (``subtypes=True``): :func:`relation_key` decides, for every table, file and report.
"""
from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pmask.common.errors import DecodeError, PmaskError
from pmask.corpora.sentence import NO_HEAD, Sentence
from pmask.eval.scores.percent import percent
from pmask.eval.scores.score import SCORES, Column, Score

if TYPE_CHECKING:
    import numpy as np

LENGTH_BUCKETS = ("root", "1", "2", "3", "4", "5", "6-10", ">10", "no head")

#: The breakdowns of a dependency score (:meth:`DependencyScore.breakdowns`), in the order they are printed.
BREAKDOWNS = ("relation", "arc_length", "sentence_length")


def relation_key(deprel: str, *, subtypes: bool = False) -> str:
    """The relation a gold DEPREL is counted under: its universal part, before ':', unless ``subtypes``.

    Example:
        >>> relation_key("nmod:poss"), relation_key("nmod:poss", subtypes=True), relation_key("obj")
        ('nmod', 'nmod:poss', 'obj')
    """
    return deprel if subtypes else deprel.split(":", 1)[0]


def relation_title(subtypes: bool = False) -> str:
    """What the relation breakdown is keyed by, as tables and reports title it."""
    return "gold relation (with subtypes)" if subtypes else "gold relation (universal, before ':')"


def length_bucket(dependent: int, head: int) -> str:
    """Bucket of a gold arc: 'root' for head 0, else |dependent − head| as '1'…'5', '6-10', '>10' ('no head'
    for :data:`~pmask.corpora.sentence.NO_HEAD`)."""
    if head == NO_HEAD:
        return "no head"
    if head == 0:
        return "root"
    d = abs(dependent - head)
    return str(d) if d <= 5 else ("6-10" if d <= 10 else ">10")


#: Sentence length buckets (in words): ``(lo, hi)``, ``hi`` None = open-ended.
SENTENCE_LENGTH_BUCKETS = ((1, 10), (11, 20), (21, 30), (31, 40), (41, None))


def sentence_length_bucket(n: int) -> str:
    """Bucket label of a sentence of ``n`` words: '1-10', '11-20', '21-30', '31-40', '>40'."""
    for lo, hi in SENTENCE_LENGTH_BUCKETS:
        if hi is None or n <= hi:
            return f"{lo}-{hi}" if hi else f">{lo - 1}"
    raise ValueError(f"no bucket for a sentence of {n} words")


@dataclass
class SentenceUAS:
    """Score of one sentence: ``n`` scored words, ``correct`` directed, ``correct_undirected``."""

    id: str | None
    n: int
    correct: int
    correct_undirected: int

    @property
    def uas(self) -> float:
        return percent(self.correct, self.n)

    @property
    def uuas(self) -> float:
        return percent(self.correct_undirected, self.n)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "n": self.n, "correct": self.correct, "uas": self.uas, "uuas": self.uuas}


def check_same_words(words: Sequence[str], gold: Sentence, where: str) -> None:
    """Raise PmaskError unless ``gold`` has exactly ``words`` (same sentence id is not enough).

    Args:
        words: the words of the predicted tree or impact matrix.
        gold: the gold sentence found for it (e.g. by id).
        where: names the prediction in the message (e.g. ``"pred.conllu:3 (sentence s1)"``).

    Example:
        >>> gold = Sentence(id="s1", words=["a", "b", "c"], path="g.conllu", line=1)
        >>> check_same_words(["a", "b"], gold, "store sentence s1")
        Traceback (most recent call last):
        pmask.common.errors.PmaskError: store sentence s1 does not match gold g.conllu:1 (sentence s1): the words ...
    """
    if list(words) == list(gold.words):
        return
    raise PmaskError(f"{where} does not match gold {gold.where()}: the words differ "
                     f"({len(words)} words '{' '.join(words[:6])}' vs {len(gold.words)} words "
                     f"'{' '.join(gold.words[:6])}')")


def _as_heads(heads: Sequence[int] | np.ndarray, n: int, what: str, sent_id: str | None) -> list[int]:
    if len(heads) != n:  # only the prediction can differ: n is the gold length
        raise DecodeError(f"sentence {sent_id}: the {what} tree has {len(heads)} words but the gold "
                          f"sentence has {n}: they are not the same sentence")
    out = []
    for k, h in enumerate(heads, start=1):
        try:
            value = operator.index(h)
        except TypeError:
            raise DecodeError(f"sentence {sent_id}: {what} head {h!r} of word {k} is not an integer") from None
        if not (0 <= value <= n or value == NO_HEAD):
            raise DecodeError(f"sentence {sent_id}: {what} head {value} of word {k} is out of range 0..{n}")
        out.append(value)
    return out


@dataclass(repr=False)   # Score's repr: the figures, not the per-sentence data
class DependencyScore(Score):
    """Accumulated UAS/UUAS counts; ``a + b``, ``a += b`` and ``sum(scores)`` merge (:class:`Score`).
    Its columns: UAS (the headline), UUAS."""

    name = "attachment"
    task = "dependency"
    columns = (Column("uas", "UAS"), Column("uuas", "UUAS"))

    correct: int = 0
    correct_undirected: int = 0
    total: int = 0
    relations: dict[str, list[int]] = field(default_factory=dict)   # gold deprel → [correct, total]
    lengths: dict[str, list[int]] = field(default_factory=dict)     # length bucket → [correct, total]
    per_sentence: list[SentenceUAS] = field(default_factory=list)

    def add(self, pred_heads: Sequence[int] | np.ndarray, gold_heads: Sequence[int] | None, *,
            deprels: Sequence[str] | None = None, punct_mask: Sequence[bool] | None = None,
            sent_id: str | None = None) -> SentenceUAS:
        """Score one sentence and add it; returns its :class:`SentenceUAS`.

        ``deprels`` are the gold relations (for :meth:`by_relation`); ``punct_mask[k-1]`` True
        excludes word k from scoring.  Wrong lengths or out-of-range heads raise DecodeError.
        """
        if gold_heads is None:
            raise DecodeError(f"sentence {sent_id}: no gold heads to score against")
        n = len(gold_heads)
        gold = _as_heads(gold_heads, n, "gold", sent_id)
        pred = _as_heads(pred_heads, n, "predicted", sent_id)
        if deprels is not None and len(deprels) != n:
            raise DecodeError(f"sentence {sent_id}: {len(deprels)} relations for {n} words")
        if punct_mask is not None and len(punct_mask) != n:
            raise DecodeError(f"sentence {sent_id}: punctuation mask of {len(punct_mask)} for {n} words")

        gold_edges = {frozenset((k, h)) for k, h in enumerate(gold, start=1) if h != NO_HEAD}
        matched: set[frozenset[int]] = set()
        scored = correct = undirected = 0
        for k in range(1, n + 1):
            if punct_mask is not None and punct_mask[k - 1]:
                continue
            scored += 1
            ok = pred[k - 1] == gold[k - 1] != NO_HEAD
            correct += ok
            edge = frozenset((k, pred[k - 1]))
            if edge in gold_edges and edge not in matched:
                matched.add(edge)
                undirected += 1
            for table, key in ((self.lengths, length_bucket(k, gold[k - 1])),
                               (self.relations, deprels[k - 1] if deprels is not None else None)):
                if key is not None:
                    cell = table.setdefault(key, [0, 0])
                    cell[0] += ok
                    cell[1] += 1
        self.correct += correct
        self.correct_undirected += undirected
        self.total += scored
        result = SentenceUAS(sent_id, scored, correct, undirected)
        self.per_sentence.append(result)
        return result

    def add_sentence(self, pred: Sequence[int] | np.ndarray, gold: Sentence, *,
                     punct_mask: Sequence[bool] | None = None) -> SentenceUAS:
        """:meth:`add` of the predicted heads ``pred`` against ``gold``'s heads, with its relations and id."""
        return self.add(pred, gold.heads, deprels=gold.deprels, punct_mask=punct_mask, sent_id=gold.id)

    @property
    def uas(self) -> float:
        """Micro-averaged UAS in percent."""
        return percent(self.correct, self.total)

    @property
    def uuas(self) -> float:
        """Micro-averaged undirected UAS in percent."""
        return percent(self.correct_undirected, self.total)

    @property
    def sentences(self) -> int:
        return len(self.per_sentence)

    def by_relation(self, *, subtypes: bool = False) -> dict[str, dict[str, float]]:
        """Gold relation → {"correct", "total", "accuracy" (%)}, most frequent first.

        Subtypes are counted under their universal relation (``nmod:poss`` → ``nmod``) unless
        ``subtypes=True`` (:func:`relation_key`).
        """
        counts: dict[str, list[int]] = {}
        for rel, (c, t) in self.relations.items():
            cell = counts.setdefault(relation_key(rel, subtypes=subtypes), [0, 0])
            cell[0] += c
            cell[1] += t
        order = sorted(counts, key=lambda r: (-counts[r][1], r))
        return {r: {"correct": counts[r][0], "total": counts[r][1], "accuracy": percent(*counts[r])} for r in order}

    def by_length(self) -> dict[str, dict[str, float]]:
        """Gold arc length bucket (``LENGTH_BUCKETS`` order) → {"correct", "total", "accuracy" (%)}."""
        return {b: {"correct": self.lengths[b][0], "total": self.lengths[b][1], "accuracy": percent(*self.lengths[b])}
                for b in LENGTH_BUCKETS if b in self.lengths}

    def by_sentence_length(self) -> dict[str, dict[str, float]]:
        """Sentence length bucket, counted in scored words → {"correct", "total", "sentences", "accuracy" (%)}.

        Example:
            >>> s = DependencyScore(); _ = s.add([2, 0], [2, 0]); s.by_sentence_length()["1-10"]["accuracy"]
            100.0
        """
        cells: dict[str, list[int]] = {}
        for sent in self.per_sentence:
            cell = cells.setdefault(sentence_length_bucket(max(sent.n, 1)), [0, 0, 0])
            cell[0] += sent.correct
            cell[1] += sent.n
            cell[2] += 1
        order = [sentence_length_bucket(hi or lo) for lo, hi in SENTENCE_LENGTH_BUCKETS]
        return {b: {"correct": cells[b][0], "total": cells[b][1], "sentences": cells[b][2],
                    "accuracy": percent(cells[b][0], cells[b][1])} for b in order if b in cells}

    def breakdowns(self, *, subtypes: bool = False) -> dict[str, dict[str, dict[str, float]]]:
        """Every breakdown (:data:`BREAKDOWNS`): ``{"relation": by_relation(subtypes=...),
        "arc_length": by_length(), "sentence_length": by_sentence_length()}``."""
        return {"relation": self.by_relation(subtypes=subtypes), "arc_length": self.by_length(),
                "sentence_length": self.by_sentence_length()}

    def to_dict(self) -> dict[str, Any]:
        """{"uas", "uuas"} in percent plus the counts."""
        return {"uas": self.uas, "uuas": self.uuas, "correct": self.correct,
                "correct_undirected": self.correct_undirected, "total": self.total, "sentences": self.sentences}

    def to_pandas(self, table: str = "sentences", *, subtypes: bool = False) -> Any:
        """Per-sentence scores, a breakdown (``"relation"``, ``"arc_length"``, ``"sentence_length"``)
        or all of them in long form (``"breakdowns"``) as a pandas ``DataFrame``; ``subtypes`` as in
        :meth:`by_relation`. Needs ``pmask[pandas]``."""
        from pmask.eval.outputs.frames import score_frame

        return score_frame(self, table, subtypes=subtypes)


SCORES.register(DependencyScore)
