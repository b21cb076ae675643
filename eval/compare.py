"""Score predicted trees against gold, next to the uninformed baselines on the same sentences.

The library behind ``pmask eval``: predictions and gold are aligned by sentence id (or by order
when the prediction has no ids), their words must agree, and every baseline is decoded on the
very sentences that were predicted.
"""
from __future__ import annotations

import logging
from typing import Any, Sequence

from pmask.corpora import Sentence
from pmask.errors import PmaskError
from pmask.eval.brackets import BracketScore
from pmask.eval.dependency import DependencyScore
from pmask.eval.punct import punct_mask
from pmask.eval.report import Comparison, ComparisonRow

logger = logging.getLogger(__name__)

DEPENDENCY_BASELINES = ("right-chain", "left-chain", "random-projective", "random-eisner", "random-cle")
CONSTITUENCY_BASELINES = ("right-branching", "left-branching", "balanced", "random-binary")


def align(pred: Sequence[Sentence], gold: Sequence[Sentence], pred_name: str, gold_name: str
          ) -> list[tuple[Sentence, Sentence]]:
    """Pair each predicted sentence with its gold sentence (by id when every id is found, else by order)."""
    by_id = {g.id: g for g in gold}
    if all(p.id in by_id for p in pred) and len(by_id) == len(gold):
        pairs = [(p, by_id[p.id]) for p in pred]
    else:
        if len(pred) > len(gold):
            raise PmaskError(f"{pred_name} has {len(pred)} sentences but {gold_name} only {len(gold)}")
        pairs = list(zip(pred, gold))
    for p, g in pairs:
        if [w for w in p.words] != [w for w in g.words]:
            raise PmaskError(f"{p.where()} does not match gold {g.where()}: the words differ "
                             f"('{' '.join(p.words[:6])}' vs '{' '.join(g.words[:6])}')")
    return pairs


def _mask(gold: Sentence, punct: str):
    if punct == "include":
        return None
    if punct != "exclude":
        raise PmaskError(f"--punct must be include or exclude, not '{punct}'")
    return punct_mask(gold)


def score_dependencies(pairs: Sequence[tuple[Sentence, Sentence]], punct: str = "include") -> DependencyScore:
    """UAS/UUAS of the predicted heads of ``pairs`` (pred, gold)."""
    score = DependencyScore()
    for pred, gold in pairs:
        if pred.heads is None:
            raise PmaskError(f"{pred.where()} has no predicted heads")
        score.add(pred.heads, gold.heads, deprels=gold.deprels, punct_mask=_mask(gold, punct), sent_id=gold.id)
    return score


def dependency_baseline_scores(golds: Sequence[Sentence], *, punct: str = "include", root: str = "gold",
                               seed: int = 0, names: Sequence[str] = DEPENDENCY_BASELINES
                               ) -> dict[str, DependencyScore]:
    """Each baseline decoder run on ``golds`` (root="gold" hands it the gold root word)."""
    from pmask.trees.registry import decode_dependencies

    out: dict[str, DependencyScore] = {}
    for name in names:
        score = DependencyScore()
        for index, gold in enumerate(golds):
            heads = decode_dependencies(name, len(gold), root=gold.root if root == "gold" else None,
                                        seed=seed + index)
            score.add(heads, gold.heads, deprels=gold.deprels, punct_mask=_mask(gold, punct), sent_id=gold.id)
        out[name] = score
    return out


def score_brackets(pairs: Sequence[tuple[Any, Sentence]]) -> BracketScore:
    """Bracket scores of predicted trees against the gold trees of ``pairs`` (pred_tree, gold)."""
    score = BracketScore()
    for tree, gold in pairs:
        score.add(tree, gold.tree, sent_id=gold.id)
    return score


def constituency_baseline_scores(golds: Sequence[Sentence], *, seed: int = 0,
                                 names: Sequence[str] = CONSTITUENCY_BASELINES) -> dict[str, BracketScore]:
    from pmask.trees.registry import decode_constituency

    out: dict[str, BracketScore] = {}
    for name in names:
        score = BracketScore()
        for index, gold in enumerate(golds):
            score.add(decode_constituency(name, list(gold.words), seed=seed + index), gold.tree, sent_id=gold.id)
        out[name] = score
    return out


def comparison(task: str, predicted: Any, baselines: dict[str, Any], *, pred_name: str,
               meta: dict[str, Any] | None = None, settings: dict[str, Any] | None = None) -> Comparison:
    """A :class:`Comparison` with the prediction first and the baselines after it."""
    rows = [ComparisonRow(name=pred_name, kind="model", metrics=predicted.to_dict(), settings=settings or {})]
    rows += [ComparisonRow(name=name, kind="baseline", metrics=s.to_dict(), settings={}) for name, s in baselines.items()]
    return Comparison(rows=rows, task=task, meta=meta or {})
