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

All reported figures are percentages (0-100); 0.0 when nothing was scored.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pmask.common.errors import DecodeError
from pmask.corpora.brackets import node_spans
from pmask.eval.scores.percent import f1, percent
from pmask.eval.scores.score import Column, Score

Span = tuple[int, int]


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
        """Per-sentence figures (precision, recall, F1 in %, bracket counts) as a pandas ``DataFrame``;
        needs ``pmask[pandas]``."""
        from pmask.eval.outputs.frames import score_frame

        return score_frame(self, table)

