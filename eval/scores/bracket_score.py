"""Unlabelled bracket scores of constituency trees (any ``nltk.Tree`` labels); additive.

Two conventions are reported side by side:

* **Sentence-level F1** (``f1_sentence``; the PRPN / ON-LSTM / Wu et al. 2020 convention): the
  spans of all nodes covering ≥ 2 words, *excluding* the whole-sentence span, as sets (a unary
  chain's duplicate spans collapse).  Per sentence P = |overlap| / |pred|, R = |overlap| / |gold|;
  a gold tree with no such span has R = 1 (and P = 1 if the prediction has none either);
  F1 = 2PR / (P + R), 0 when both are 0; averaged over sentences.
* **Corpus-level (EVALB-style, micro over brackets)** (``precision``, ``recall``, ``f1_corpus``):
  unlabelled; brackets are the spans of every node that is not a preterminal (a node whose only
  child is a word), *including* the whole-sentence span (the root always counts, even written as
  ``(X w)`` over one word) and unary-over-preterminal spans of length 1 like ``(NP (NN it))``;
  spans are a set per sentence (duplicates from unary chains count once — EVALB would count
  identical labelled brackets separately, and with labels erased they only ever double-count).
  P = Σ matched / Σ predicted, R = Σ matched / Σ gold, F1 = 2PR / (P + R).  Checked against
  PYEVALB on trees with erased labels and collapsed unary chains.

Breakdowns (:meth:`BracketScore.breakdowns`, sentence-level spans: ≥ 2 words, the whole sentence
excluded): corpus-level P/R/F1 by span length (:data:`SPAN_BUCKETS`) and the recall of gold spans
by gold label (its part before ``-``: ``NP-SBJ`` counts as ``NP``; the predicted trees are unlabelled).

All reported figures are percentages (0-100); 0.0 when nothing was scored.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pmask.common.errors import DecodeError
from pmask.corpora.brackets import node_spans
from pmask.corpora.sentence import Sentence
from pmask.eval.scores.percent import f1, percent
from pmask.eval.scores.score import SCORES, Column, Score

Span = tuple[int, int]

#: Span length buckets (words) of the breakdown by span length: ``(lo, hi)``, ``hi`` None = open-ended.
SPAN_BUCKETS = ((2, 2), (3, 3), (4, 4), (5, 6), (7, 10), (11, None))

#: The breakdowns of a bracket score (:meth:`BracketScore.breakdowns`), in the order they are printed.
BREAKDOWNS = ("span_length", "label")


def span_bucket(length: int) -> str:
    """Bucket label of a span of ``length`` words: '2', '3', '4', '5-6', '7-10', '>10'.

    Example:
        >>> [span_bucket(k) for k in (2, 6, 11)]
        ['2', '5-6', '>10']
    """
    for lo, hi in SPAN_BUCKETS:
        if hi is None or length <= hi:
            return str(lo) if lo == hi else (f"{lo}-{hi}" if hi else f">{lo - 1}")
    raise ValueError(f"no bucket for a span of {length} words")


def gold_label(node: Any) -> str:
    """The label a gold span is counted under: its part before ``-`` (``NP-SBJ`` -> ``NP``), ``?`` if none."""
    return str(node.label()).split("-")[0] or "?"


def sentence_spans(tree: Any) -> set[Span]:
    """Spans of ≥ 2 words except the whole sentence (the sentence-level F1 convention)."""
    nodes, n = node_spans(tree)
    return {(i, j) for i, j, _ in nodes if j - i >= 2 and (i, j) != (0, n)}


def _is_preterminal(node: Any) -> bool:
    import nltk

    return len(node) == 1 and not isinstance(node[0], nltk.Tree)


def evalb_spans(tree: Any) -> set[Span]:
    """Unlabelled EVALB brackets: non-preterminal nodes' spans plus the whole sentence (0, n)."""
    nodes, n = node_spans(tree)
    spans = {(i, j) for i, j, node in nodes if not _is_preterminal(node)}
    if n:
        spans.add((0, n))
    return spans


@dataclass
class SentenceBrackets:
    """One sentence's figures (sentence-level convention, fractions 0-1) and EVALB counts."""

    id: str | None
    n: int
    precision: float
    recall: float
    f1: float
    matched: int
    gold: int
    pred: int

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "n": self.n, "precision": 100 * self.precision, "recall": 100 * self.recall,
                "f1": 100 * self.f1, "matched": self.matched, "gold_brackets": self.gold,
                "pred_brackets": self.pred}


@dataclass(repr=False)   # Score's repr: the figures, not the per-sentence data
class BracketScore(Score):
    """Accumulated bracket scores; ``a + b``, ``a += b`` and ``sum(scores)`` merge (:class:`Score`).
    Its columns: sentence-level F1 (the headline), corpus F1, and in ``eval``'s comparison the
    corpus-level precision and recall."""

    name = "brackets"
    task = "constituency"
    columns = (Column("f1_sentence", "Sentence F1", short="F1"), Column("f1_corpus", "Corpus F1"),
               Column("precision", "P", per_layer=False), Column("recall", "R", per_layer=False))

    sentences: int = 0
    precision_sum: float = 0.0       # Σ per-sentence P (sentence-level convention)
    recall_sum: float = 0.0
    f1_sum: float = 0.0
    matched: int = 0                 # EVALB counts
    gold_brackets: int = 0
    pred_brackets: int = 0
    per_sentence: list[SentenceBrackets] = field(default_factory=list)
    span_lengths: dict[str, list[int]] = field(default_factory=dict)   # span bucket → [matched, gold, pred]
    labels: dict[str, list[int]] = field(default_factory=dict)         # gold label → [found, total]

    def add(self, pred_tree: Any, gold_tree: Any, sent_id: str | None = None) -> SentenceBrackets:
        """Score one predicted tree against its gold tree (same number of leaves) and add it."""
        if gold_tree is None or pred_tree is None:
            raise DecodeError(f"sentence {sent_id}: {'gold' if gold_tree is None else 'predicted'} tree missing")
        _, n_gold = node_spans(gold_tree)
        _, n_pred = node_spans(pred_tree)
        if n_gold != n_pred:
            raise DecodeError(f"sentence {sent_id}: predicted tree has {n_pred} leaves, gold has {n_gold}")

        pred, gold = sentence_spans(pred_tree), sentence_spans(gold_tree)
        overlap = len(pred & gold)
        precision = overlap / len(pred) if pred else 0.0
        recall = overlap / len(gold) if gold else 0.0
        if not gold:
            recall = 1.0
            if not pred:
                precision = 1.0
        sentence_f1 = f1(precision, recall)

        self._add_breakdowns(pred, gold, gold_tree)
        pred_e, gold_e = evalb_spans(pred_tree), evalb_spans(gold_tree)
        result = SentenceBrackets(sent_id, n_gold, precision, recall, sentence_f1,
                                  len(pred_e & gold_e), len(gold_e), len(pred_e))
        self.sentences += 1
        self.precision_sum += precision
        self.recall_sum += recall
        self.f1_sum += sentence_f1
        self.matched += result.matched
        self.gold_brackets += result.gold
        self.pred_brackets += result.pred
        self.per_sentence.append(result)
        return result

    def add_sentence(self, pred: Any, gold: Sentence, *, punct_mask: Any = None) -> SentenceBrackets:
        """:meth:`add` of the predicted tree ``pred`` against ``gold``'s tree (the trees hold no
        punctuation: ``punct_mask`` is ignored)."""
        return self.add(pred, gold.tree, sent_id=gold.id)

    def _add_breakdowns(self, pred: set[Span], gold: set[Span], gold_tree: Any) -> None:
        """Count the sentence-level spans by length (matched, gold, predicted) and the gold ones by label."""
        for i, j in gold:
            cell = self.span_lengths.setdefault(span_bucket(j - i), [0, 0, 0])
            cell[0] += (i, j) in pred
            cell[1] += 1
        for i, j in pred:
            self.span_lengths.setdefault(span_bucket(j - i), [0, 0, 0])[2] += 1
        nodes, n = node_spans(gold_tree)
        for i, j, node in nodes:
            if j - i >= 2 and (i, j) != (0, n):
                cell = self.labels.setdefault(gold_label(node), [0, 0])
                cell[0] += (i, j) in pred
                cell[1] += 1

    def by_span_length(self) -> dict[str, dict[str, Any]]:
        """Span length bucket (:data:`SPAN_BUCKETS` order) → {"correct" (matched spans), "total" (gold
        spans), "pred" (predicted spans), "precision", "recall", "f1" (%)}, corpus-level."""
        out = {}
        for lo, _ in SPAN_BUCKETS:
            bucket = span_bucket(lo)
            if bucket in self.span_lengths:
                matched, gold, pred = self.span_lengths[bucket]
                p, r = percent(matched, pred), percent(matched, gold)
                out[bucket] = {"correct": matched, "total": gold, "pred": pred, "precision": p, "recall": r,
                               "f1": f1(p, r)}
        return out

    def by_label(self) -> dict[str, dict[str, Any]]:
        """Gold label (before ``-``) → {"correct" (gold spans found), "total", "accuracy" (recall, %)},
        most frequent first."""
        order = sorted(self.labels, key=lambda k: (-self.labels[k][1], k))
        return {k: {"correct": self.labels[k][0], "total": self.labels[k][1], "accuracy": percent(*self.labels[k])}
                for k in order}

    def breakdowns(self, *, subtypes: bool = False) -> dict[str, dict[str, dict[str, Any]]]:
        """Every breakdown (:data:`BREAKDOWNS`): ``{"span_length": by_span_length(), "label": by_label()}``
        (``subtypes`` is for dependency relations: ignored).

        Example:
            >>> import nltk
            >>> s = BracketScore(); t = nltk.Tree.fromstring
            >>> _ = s.add(t("(X (X a b) c d)"), t("(S (NP a b) (VP c d))"))
            >>> s.breakdowns()["span_length"]["2"]
            {'correct': 1, 'total': 2, 'pred': 1, 'precision': 100.0, 'recall': 50.0, 'f1': 66.66666666666667}
            >>> {label: cell["accuracy"] for label, cell in s.breakdowns()["label"].items()}
            {'NP': 100.0, 'VP': 0.0}
        """
        return {"span_length": self.by_span_length(), "label": self.by_label()}

    @property
    def f1_sentence(self) -> float:
        """Mean per-sentence F1 (%), the paper's figure."""
        return percent(self.f1_sum, self.sentences)

    @property
    def precision_sentence(self) -> float:
        return percent(self.precision_sum, self.sentences)

    @property
    def recall_sentence(self) -> float:
        return percent(self.recall_sum, self.sentences)

    @property
    def precision(self) -> float:
        """Corpus-level (EVALB-style) bracket precision (%)."""
        return percent(self.matched, self.pred_brackets)

    @property
    def recall(self) -> float:
        """Corpus-level (EVALB-style) bracket recall (%)."""
        return percent(self.matched, self.gold_brackets)

    @property
    def f1_corpus(self) -> float:
        """Corpus-level (EVALB-style) F1 (%)."""
        p, r = self.precision, self.recall
        return f1(p, r)

    def to_dict(self) -> dict[str, Any]:
        return {"f1_sentence": self.f1_sentence, "f1_corpus": self.f1_corpus, "precision": self.precision,
                "recall": self.recall, "precision_sentence": self.precision_sentence,
                "recall_sentence": self.recall_sentence, "matched": self.matched,
                "gold_brackets": self.gold_brackets, "pred_brackets": self.pred_brackets,
                "sentences": self.sentences}

    def to_pandas(self, table: str = "sentences") -> Any:
        """Per-sentence figures (precision, recall, F1 in %, bracket counts), a breakdown (``"span_length"``,
        ``"label"``) or both in long form (``"breakdowns"``) as a pandas ``DataFrame``; needs ``pmask[pandas]``."""
        from pmask.eval.outputs.frames import score_frame

        return score_frame(self, table)


SCORES.register(BracketScore)
