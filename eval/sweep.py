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
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Sequence

from pmask.common.errors import SettingError
from pmask.common.options import default_metric, has_heads
from pmask.corpora.spec import CorpusSpec
from pmask.perturb.model_spec import ModelSpec

from pmask.eval import compare
from pmask.eval.report import LayerSweep, plot_layer_sweep
from pmask.eval.compare import score_against_gold
from pmask.trees.induce import ParseSettings, check_settings
from pmask.trees.registry import decoder_task
from pmask.perturb.impact_source import ImpactSource
from pmask.eval.probes import probe_label

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
                 baselines: bool = False, label: str | Path | None = None, bias: float = 0.0) -> SweepResult:
    """Decode and score the impacts of every layer in ``layers``.

    Args:
        source: gold sentences and their impacts (a store, or a corpus and a model).
        layers: layer indices (0 = embeddings, negative from the end) or "all".
        decoder: default ``eisner`` for dependency gold, ``mart`` for constituency gold.
        root, faithful, punct, seed, bias: as for :class:`~pmask.trees.induce.ParseSettings` and the metrics.
        baselines: also score every baseline of the task on the scored sentences.
        label: the corpus name recorded in the table's metadata (default: the corpus path).

    Returns:
        A :class:`SweepResult`; ``result.sweep.rows`` hold one (layer, scores) pair per layer.
    """
    sentences = source.sentences
    dependency = sentences[0].heads is not None if sentences else True
    decoder = decoder or ("eisner" if dependency else "mart")
    task = decoder_task(decoder)
    probe = source.impact_settings().get("probe", "pair")
    check_settings(ParseSettings(decoder=decoder, root=root, faithful=faithful, bias=bias), [], probe)
    per_layer = source.impacts_by_layers(layers, include_cls=faithful)
    probe = source.impact_settings().get("probe", "pair")   # a cache store's own
    check_settings(ParseSettings(decoder=decoder, root=root, faithful=faithful, bias=bias), [], probe)
    rows: list[tuple[int, dict[str, Any]]] = []
    golds = sentences
    for layer, impacts in per_layer.items():
        settings = ParseSettings(decoder=decoder, layer=layer, root=root, faithful=faithful, seed=seed, bias=bias)
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
    model_name = source.model_name()
    impact = source.impact_settings()
    sweep = LayerSweep(rows=rows, metric_keys=SWEEP_KEYS[task],
                       meta={"model": model_name, "probe": probe_label(impact), "decoder": decoder,
                             "corpus": str(label or source.corpus), **({"root": root} if task == "dependency" else {})})
    title = f"{Path(str(model_name)).name or model_name} · {probe_label(impact)} · {decoder}" + (
        f" · root {root}" if task == "dependency" else "")
    return SweepResult(sweep=sweep, task=task, baselines=base, title=title)


def sweep_probes(source: CorpusSpec, model: ModelSpec, probes: Sequence[str] | None = None, *,
                 store: str | Path | None = None, corpus: str | Path | None = None, progress: bool = True,
                 label: str | Path | None = None, **options: Any) -> SweepResult:
    """Sweep the layers of one probe, or of several with one line (one column) per probe.

    Args:
        source: the gold corpus, or a store made from one (then one probe: the store's).
        model: the model and impact settings; ``model.head`` applies to the probes with heads.
        probes: probe names (None: ``model.probe``, or a store's own).
        store: with one probe, cache its impacts in this store directory.
        corpus: with a store ``source``: the corpus it was made from.
        progress: progress bars.
        label: the corpus name in the table (default: ``source.path``).
        options: ``layers``, ``decoder``, ``root``, ``faithful``, ``punct``, ``seed``, ``baselines``, ``bias``
            (see :func:`sweep_layers`).

    Returns:
        A :class:`SweepResult`; with several probes its columns are ``"<probe> <score>"`` (the task's
        headline score: uas, or sentence-level F1), and the model is loaded once for all of them.
    """
    label = label or source.path
    probes = list(probes or [model.probe])
    if len(probes) == 1:
        opened = ImpactSource.open(source, model=replace(model, probe=probes[0]), store=store, corpus=corpus,
                                   progress=progress)
        return sweep_layers(opened, label=label, **options)
    if store is not None or source.path.is_dir():
        raise SettingError("a store holds one probe; sweep several {probe} values from a corpus, without {store}")
    if model.head is not None and not any(_takes_head(p, model) for p in probes):
        raise SettingError("{head} applies to probe attention and to probe distance with {metric} jsd or hellinger, "
                           "and none of them is swept")
    specs = [replace(model, probe=p, head=model.head if _takes_head(p, model) else None).with_defaults()
             for p in probes]                                    # every setting checked before the model loads
    from pmask.perturb.probes.support import check_support   # lazy: imports torch

    loaded = model.load()
    for spec in specs:
        check_support(loaded, str(spec.probe), spec.metric, subword=str(spec.subword), head=spec.head)
    results = {}
    for spec in specs:
        opened = ImpactSource.open(source, model=spec, progress=progress, loaded_model=loaded)
        results[str(spec.probe)] = sweep_layers(opened, label=label, **options)
    return merge_sweeps(results)


def _takes_head(probe: str | None, model: ModelSpec) -> bool:
    return has_heads(probe, model.metric or default_metric(probe))


def merge_sweeps(results: dict[str, SweepResult]) -> SweepResult:
    """One :class:`SweepResult` with a ``"<probe> <headline score>"`` column per probe's sweep."""
    first = next(iter(results.values()))
    key = SWEEP_KEYS[first.task][0]
    rows: dict[int, dict[str, Any]] = {}
    for probe, result in results.items():
        for layer, scores in result.sweep.rows:
            rows.setdefault(layer, {})[f"{probe} {key}"] = scores.get(key)
    meta = {k: v for k, v in first.sweep.meta.items() if k != "probe"}
    sweep = LayerSweep(rows=sorted(rows.items()), metric_keys=[f"{p} {key}" for p in results],
                       meta={**meta, "probes": ", ".join(r.sweep.meta.get("probe", p) for p, r in results.items())})
    parts = first.title.split(" · ")   # model · probe · decoder [· root]: the probe goes, one line per probe
    title = " · ".join([parts[0], *parts[2:], "one line per probe"])
    return SweepResult(sweep=sweep, task=first.task, baselines=first.baselines, title=title)
