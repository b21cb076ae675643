"""The one place where ``pmask bench`` calls the scoring library (``pmask.eval.comparison.compare``).

Everything here takes gold sentences and impacts and returns score sets
(:class:`pmask.eval.scores.score_set.ScoreSet`: every score of the task that
:data:`pmask.eval.scores.columns.SCORES` lists, optional ones when asked) or plain dicts, so the rest of
``pmask.eval.studies.bench.run`` does not depend on how induction and scoring are organised.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

from pmask.eval.comparison.compare import baseline_scores, score_against_gold
from pmask.eval.scores.dependency_score import DependencyScore
from pmask.eval.scores.score_set import ScoreSet
from pmask.pipeline.decoding import Decoding
from pmask.trees.registry import decoder_task, get_decoder
from pmask.trees.tasks import task_entry


def task_of(decoder: str) -> str:
    """The task of a decoder (PmaskError for an unknown one)."""
    return decoder_task(decoder)


def score_decoder(sentences: Sequence[Any], impacts: Sequence[Any], decoding: Decoding, *, punct: str,
                  scores: Sequence[str] = ()) -> tuple[ScoreSet, list[Any]]:
    """(scores, scored gold sentences) of one layer's ``impacts`` decoded as the resolved ``decoding`` says (its
    decoder, root, seed, faithful: the authors' decoding on impacts read with their [CLS] row; symmetrize and
    absolute; distance-split's bias, given to the decoders that read it); ``scores``: the optional scores asked."""
    bias = decoding.bias if "bias" in get_decoder(str(decoding.decoder)).settings else 0.0
    return score_against_gold(sentences, impacts, replace(decoding, bias=bias), punct=punct, scores=scores)


def score_baselines(golds: Sequence[Any], task: str, *, root: str, punct: str, seed: int,
                    scores: Sequence[str] = (), undirected: bool = False) -> dict[str, ScoreSet]:
    """``{baseline name: scores}`` of the task's short baselines (the registry's) on exactly ``golds``, and its
    undirected ones (connect-adjacent) with ``undirected`` (undirected decoders are benched)."""
    info = task_entry(task)
    names = (*info.short_baselines, *(info.undirected_baselines if undirected else ()))
    return baseline_scores(task, golds, punct=punct, root=root, seed=seed, names=names, scores=scores)


def summary(score: Any, golds: Sequence[Any]) -> dict[str, Any]:
    """Flat figures of a score or score set: its per-layer columns (uas/uuas for dependencies,
    f1_sentence/f1_corpus for brackets, and those of any optional score asked: ``score.layer_keys()``),
    ``sentences`` and ``words`` = scored words (dependencies) or words of the scored ``golds`` (brackets)."""
    data = score.to_dict()
    main = score.main if isinstance(score, ScoreSet) else score
    words = data["total"] if isinstance(main, DependencyScore) else sum(len(g.words) for g in golds)
    return {**{key: data.get(key) for key in score.layer_keys()}, "sentences": data.get("sentences"), "words": words}


def breakdown(score: Any) -> dict[str, Any] | None:
    """The score's breakdowns (dependencies: by gold universal relation, gold arc length and sentence length;
    brackets: by span length and gold label); None for a score without any."""
    return score.breakdowns() or None
