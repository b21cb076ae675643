"""Score every layer of a model (one engine pass) against the gold trees of its corpus.

The library behind ``pmask sweep``: :func:`sweep_layers` decodes the impacts of each requested
layer, scores them, optionally scores the baselines on the same sentences, and returns a
:class:`SweepResult` holding a :class:`~pmask.eval.report.LayerSweep` table.

Example:
    >>> from pmask.corpora.spec import CorpusSpec
    >>> from pmask.perturb.impact_source import ImpactSource
    >>> from pmask.perturb.model_spec import ModelSpec
    >>> src = ImpactSource.open(CorpusSpec("pud.conllu", limit=50), model=ModelSpec("bert-base-uncased"))
    ... # doctest: +SKIP
    >>> print(sweep_layers(src, layers="all").sweep.to_markdown())  # doctest: +SKIP
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from pmask.common.labels import run_label
from pmask.eval import compare
from pmask.eval.report import LayerSweep, plot_layer_sweep
from pmask.eval.compare import score_against_gold
from pmask.trees.induce import ParseSettings
from pmask.trees.registry import decoder_task
from pmask.perturb.impact_source import ImpactSource

logger = logging.getLogger(__name__)

#: The score columns shown (and plotted) per task; the first one is the headline score.
SWEEP_KEYS = {"dependency": ["uas", "uuas"], "constituency": ["f1_sentence", "f1_corpus"]}


@dataclass
class SweepResult:
    """A scored layer sweep, the baselines' headline scores and a plot title."""

    sweep: LayerSweep
    task: str
    baselines: dict[str, float] = field(default_factory=dict)
    title: str = ""

    def plot(self, path: str | Path) -> Path:
        """Line plot of the scores against layer, the baselines as horizontal lines (PNG/SVG/PDF by suffix)."""
        return plot_layer_sweep(self.sweep, path, baselines=self.baselines or None, title=self.title,
                                baseline_key=SWEEP_KEYS[self.task][0])


def sweep_layers(source: ImpactSource, *, layers: Sequence[int] | str = "all", decoder: str | None = None,
                 root: str = "gold", faithful: bool = False, punct: str = "include", seed: int = 0,
                 baselines: bool = False, label: str | Path | None = None) -> SweepResult:
    """Decode and score the impacts of every layer in ``layers``.

    Args:
        source: gold sentences and their impacts (a store, or a corpus and a model).
        layers: layer indices (0 = embeddings, negative from the end) or "all".
        decoder: default ``eisner`` for dependency gold, ``mart`` for constituency gold.
        root, faithful, punct, seed: as for :class:`~pmask.trees.induce.ParseSettings` and the metrics.
        baselines: also score every baseline of the task on the scored sentences.
        label: the corpus name recorded in the table's metadata (default: the corpus path).

    Returns:
        A :class:`SweepResult`; ``result.sweep.rows`` hold one (layer, scores) pair per layer.
    """
    per_layer = source.impacts_by_layers(layers, include_cls=faithful)
    sentences = source.sentences
    dependency = sentences[0].heads is not None if sentences else True
    decoder = decoder or ("eisner" if dependency else "mart")
    task = decoder_task(decoder)
    rows: list[tuple[int, dict[str, Any]]] = []
    golds = sentences
    for layer, impacts in per_layer.items():
        settings = ParseSettings(decoder=decoder, layer=layer, root=root, faithful=faithful, seed=seed)
        score, golds = score_against_gold(sentences, impacts, settings, punct=punct)
        rows.append((layer, score.to_dict()))
    base: dict[str, float] = {}
    if baselines:
        if task == "dependency":
            scores = compare.dependency_baseline_scores(golds, punct=punct, root=root, seed=seed)
        else:
            scores = compare.constituency_baseline_scores(golds, seed=seed)
        key = SWEEP_KEYS[task][0]
        base = {name: s.to_dict()[key] for name, s in scores.items()}
    model, impact = source.describe_model(), source.impact_settings()
    sweep = LayerSweep(rows=rows, metric_keys=SWEEP_KEYS[task],
                       meta={"model": (model or {}).get("name"), "metric": impact.get("metric"), "decoder": decoder,
                             "corpus": str(label or source.corpus), **({"root": root} if task == "dependency" else {})})
    title = f"{run_label(model, impact)} · {decoder}" + (f" · root {root}" if task == "dependency" else "")
    return SweepResult(sweep=sweep, task=task, baselines=base, title=title)
