"""Score every layer of a model (one engine pass) against the gold trees of its corpus.

The library behind ``pmask sweep``: :func:`sweep_layers` decodes the impacts of each requested
layer, scores them, optionally scores the baselines on the same sentences, and returns a
:class:`SweepResult` holding a :class:`~pmask.eval.report.LayerSweep` table.

Example:
    >>> from pmask.corpora.spec import CorpusSpec
    >>> from pmask.perturb.impact_source import ImpactSource
    >>> from pmask.perturb.model_spec import ModelSpec
    >>> src = ImpactSource.open(CorpusSpec("pud.conllu", limit=50), model=ModelSpec("bert-base-uncased"))
    >>> result = sweep_layers(src, layers="all")   # print(result.sweep.to_markdown()) shows the table
    >>> result.sweep.layers[:2], result.sweep.metric_keys
    ([1, 2], ('uas', 'uuas'))
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from pmask.common.display import RichDisplay
from pmask.common.errors import SettingError
from pmask.common.labels import run_label
from pmask.eval.compare import baseline_scores, score_against_gold
from pmask.eval.report import LayerSweep, plot_layer_sweep
from pmask.perturb.impact_source import ImpactSource
from pmask.trees.induce import ParseSettings, check_settings, refuse_layer_zero
from pmask.trees.registry import decoder_task, task_info

logger = logging.getLogger(__name__)

#: The score columns shown (and plotted) per task; the first one is the headline score.
SWEEP_KEYS = {"dependency": ["uas", "uuas"], "constituency": ["f1_sentence", "f1_corpus"]}


@dataclass
class SweepResult(RichDisplay):
    """A scored layer sweep, the baselines' headline scores and a plot title (a notebook shows the
    table and the plot)."""

    sweep: LayerSweep
    task: str
    baselines: dict[str, float] = field(default_factory=dict)
    title: str = ""

    def plot(self, path: str | Path) -> Path:
        """Line plot of the scores against layer, the baselines as horizontal lines (PNG/SVG/PDF by suffix)."""
        return plot_layer_sweep(self.sweep, path, baselines=self.baselines or None, title=self.title,
                                baseline_key=SWEEP_KEYS[self.task][0])

    def to_pandas(self) -> Any:
        """The sweep's rows, one per layer (see :meth:`LayerSweep.to_pandas`)."""
        return self.sweep.to_pandas()


def _check_before_work(sentences: Sequence[Any], layers: Sequence[int] | str, settings: ParseSettings) -> None:
    """Everything that would fail after the model pass: layer 0, settings, gold trees to score against."""
    refuse_layer_zero(layers, "layers")
    check_settings(settings, sentences)
    dependency = decoder_task(settings.decoder) == "dependency"
    lacking = next((s for s in sentences if (s.heads if dependency else s.tree) is None), None)
    if lacking is not None:
        raise SettingError(f"{lacking.where()}: no gold {'heads' if dependency else 'tree'} to score the "
                           f"{settings.decoder} trees against; a sweep needs a gold corpus (CoNLL-U, .dp or PTB)")


def sweep_layers(source: ImpactSource, *, layers: Sequence[int] | str = "all", decoder: str | None = None,
                 root: str = "gold", faithful: bool = False, punct: str = "include", seed: int = 0,
                 baselines: bool = False, label: str | Path | None = None) -> SweepResult:
    """Decode and score the impacts of every layer in ``layers``.

    Args:
        source: gold sentences and their impacts (a store, or a corpus and a model).
        layers: layer indices (0 = embeddings, negative from the end) or "all".
        decoder: default: the gold task's default decoder in the registry (``eisner`` for
            dependency gold, ``mart`` for constituency gold).
        root, faithful, punct, seed: as for :class:`~pmask.trees.induce.ParseSettings` and the metrics.
        baselines: also score every baseline of the task on the scored sentences.
        label: the corpus name recorded in the table's metadata (default: the corpus path).

    Returns:
        A :class:`SweepResult`; ``result.sweep.rows`` hold one (layer, scores) pair per layer.
    """
    sentences = source.sentences
    gold_task = "dependency" if not sentences or sentences[0].heads is not None else "constituency"
    decoder = decoder or task_info(gold_task).default_decoder
    task = decoder_task(decoder)
    _check_before_work(sentences, layers, ParseSettings(decoder=decoder, layer=1, root=root, faithful=faithful,
                                                        seed=seed))
    per_layer = source.impacts_by_layers(layers, include_cls=faithful)
    rows: list[tuple[int, dict[str, Any]]] = []
    golds = sentences
    for layer, impacts in per_layer.items():
        settings = ParseSettings(decoder=decoder, layer=layer, root=root, faithful=faithful, seed=seed)
        score, golds = score_against_gold(sentences, impacts, settings, punct=punct)
        rows.append((layer, score.to_dict()))
    base: dict[str, float] = {}
    if baselines:
        key = SWEEP_KEYS[task][0]
        base = {name: s.to_dict()[key]
                for name, s in baseline_scores(task, golds, punct=punct, root=root, seed=seed).items()}
    model, impact = source.describe_model(), source.impact_settings()
    sweep = LayerSweep(rows=rows, metric_keys=tuple(SWEEP_KEYS[task]),
                       meta={"model": (model or {}).get("name"), "metric": impact.get("metric"), "decoder": decoder,
                             "corpus": str(label or source.corpus), **({"root": root} if task == "dependency" else {})})
    title = f"{run_label(model, impact)} · {decoder}" + (f" · root {root}" if task == "dependency" else "")
    return SweepResult(sweep=sweep, task=task, baselines=base, title=title)
