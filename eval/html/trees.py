"""Constituency data for ``pmask report``: trees as nested JSON, and the bracket score's F1 by span
length and recall by label as the page's tables."""
from __future__ import annotations

from typing import Any, Sequence


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


def constituency_sentences(pairs: Sequence[tuple[Any, Any]], per_sentence: Sequence[Any]) -> list[dict[str, Any]]:
    """One dict per sentence: id, words, both trees and the sentence-level F1 (%)."""
    return [{"id": gold.id, "words": list(gold.words), "predTree": tree_json(tree), "goldTree": tree_json(gold.tree),
             "score": round(100 * s.f1, 2), "correct": s.matched, "scored": s.gold}
            for (tree, gold), s in zip(pairs, per_sentence)]


def constituency_breakdowns(score: Any) -> list[dict[str, Any]]:
    """The "where it fails" tables for brackets, as the bracket score counts them
    (:meth:`pmask.eval.scores.bracket_score.BracketScore.breakdowns`): F1 by span length, recall by gold label."""
    parts = score.breakdowns()
    spans = [{"label": bucket, "precision": c["precision"], "recall": c["recall"], "accuracy": c["f1"],
              "total": c["total"], "pred": c["pred"], "correct": c["correct"]}
             for bucket, c in parts["span_length"].items()]
    labels = [{"label": label, **cell} for label, cell in parts["label"].items()]
    return [
        {"id": "by-span-length", "title": "Bracket F1 by span length (words)", "key": "span", "rows": spans},
        {"id": "by-label", "title": "Recall of gold spans by gold label", "key": "label", "rows": labels},
    ]
