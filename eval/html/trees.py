"""Constituency data for ``pmask report``: trees as nested JSON and F1 by span length and label."""
from __future__ import annotations

from typing import Any, Sequence

from pmask.eval.scores.bracket_score import node_spans, sentence_spans
from pmask.eval.scores.percent import f1, percent

SPAN_BUCKETS = ((2, 2), (3, 3), (4, 4), (5, 6), (7, 10), (11, None))


def tree_json(tree: Any) -> Any:
    """A tree as ``{"l": label, "c": [children]}`` with leaves as 0-based word indices.

    Example:
        >>> import nltk
        >>> tree_json(nltk.Tree.fromstring("(S (NP a) b)"))
        {'l': 'S', 'c': [{'l': 'NP', 'c': [0]}, 1]}
    """
    import nltk

    position = 0

    def walk(node: Any) -> Any:
        nonlocal position
        if not isinstance(node, nltk.Tree):
            position += 1
            return position - 1
        return {"l": str(node.label()), "c": [walk(child) for child in node]}

    return walk(tree)


def _bucket(length: int) -> str:
    for lo, hi in SPAN_BUCKETS:
        if hi is None or length <= hi:
            return str(lo) if lo == hi else (f"{lo}-{hi}" if hi else f">{lo - 1}")
    return "?"


def _f1_row(label: str, matched_pred: int, pred: int, matched_gold: int, gold: int) -> dict[str, Any]:
    p, r = percent(matched_pred, pred), percent(matched_gold, gold)
    return {"label": label, "precision": p, "recall": r, "accuracy": f1(p, r), "total": gold, "pred": pred,
            "correct": matched_gold}


def span_length_rows(pairs: Sequence[tuple[Any, Any]]) -> list[dict[str, Any]]:
    """Corpus-level P/R/F1 of the sentence-level spans (≥ 2 words, whole sentence excluded) by span length."""
    cells: dict[str, list[int]] = {}
    for tree, gold in pairs:
        pred_spans, gold_spans = sentence_spans(tree), sentence_spans(gold.tree)
        for spans, slot in ((pred_spans, 0), (gold_spans, 2)):
            for i, j in spans:
                cell = cells.setdefault(_bucket(j - i), [0, 0, 0, 0])
                cell[slot + 1] += 1
                cell[slot] += (i, j) in (gold_spans if slot == 0 else pred_spans)
    labels = [_bucket(lo) for lo, _ in SPAN_BUCKETS]
    return [_f1_row(b, *cells[b]) for b in labels if b in cells]


def label_rows(pairs: Sequence[tuple[Any, Any]]) -> list[dict[str, Any]]:
    """Recall of gold spans by gold label (the predicted trees are unlabelled), most frequent first."""
    cells: dict[str, list[int]] = {}
    for tree, gold in pairs:
        pred_spans = sentence_spans(tree)
        nodes, n = node_spans(gold.tree)
        for i, j, node in nodes:
            if j - i < 2 or (i, j) == (0, n):
                continue
            cell = cells.setdefault(str(node.label()).split("-")[0] or "?", [0, 0])
            cell[0] += (i, j) in pred_spans
            cell[1] += 1
    order = sorted(cells, key=lambda k: (-cells[k][1], k))
    return [{"label": k, "correct": cells[k][0], "total": cells[k][1],
             "accuracy": percent(*cells[k])} for k in order]


def constituency_sentences(pairs: Sequence[tuple[Any, Any]], per_sentence: Sequence[Any]) -> list[dict[str, Any]]:
    """One dict per sentence: id, words, both trees and the sentence-level F1 (%)."""
    return [{"id": gold.id, "words": list(gold.words), "predTree": tree_json(tree), "goldTree": tree_json(gold.tree),
             "score": round(100 * s.f1, 2), "correct": s.matched, "scored": s.gold}
            for (tree, gold), s in zip(pairs, per_sentence)]


def constituency_breakdowns(pairs: Sequence[tuple[Any, Any]]) -> list[dict[str, Any]]:
    """The "where it fails" tables for brackets: F1 by span length, recall by gold label."""
    return [
        {"id": "by-span-length", "title": "Bracket F1 by span length (words)", "key": "span",
         "rows": span_length_rows(pairs)},
        {"id": "by-label", "title": "Recall of gold spans by gold label", "key": "label", "rows": label_rows(pairs)},
    ]
