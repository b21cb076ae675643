"""Score every layer of a model (one engine pass) against the gold trees of its corpus.

The library behind ``pmask sweep`` (:mod:`pmask.cli.commands.sweep`): :func:`sweep_layers`
decodes the impacts of each requested layer, scores them, optionally scores the baselines on the
same sentences, and returns a :class:`SweepResult` holding a
:class:`~pmask.eval.comparison.tables.LayerSweep` table; :func:`sweep_probes` does it for several
probes (one column, one plotted line, per probe; the model loaded once).

Example:
    >>> from pmask.corpora.corpus_spec import CorpusSpec
    >>> from pmask.perturb.source import ImpactSource
    >>> from pmask.perturb.fill.model_spec import ModelSpec
    >>> src = ImpactSource.open(CorpusSpec("pud.conllu", limit=50), model=ModelSpec("bert-base-uncased"))
    >>> result = sweep_layers(src, layers="all")   # print(result.sweep.to_markdown()) shows the table
    >>> result.sweep.layers[:2], result.sweep.metric_keys
    ([1, 2], ('uas', 'uuas'))
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Sequence

from pmask.common.display import RichDisplay
from pmask.common.errors import SettingError
from pmask.common.labels import probe_label, run_label
from pmask.corpora.corpus_spec import CorpusSpec
from pmask.eval.comparison.compare import baseline_scores, score_against_gold
from pmask.eval.comparison.tables import LayerSweep, plot_layer_sweep
from pmask.eval.scores.columns import check_asked, headline_key, layer_keys
from pmask.perturb.fill.model_spec import ModelSpec
from pmask.perturb.source import ImpactSource, is_store
from pmask.pipeline.induce import ParseSettings, check_settings, refuse_layer_zero
from pmask.trees.registry import decoder_task
from pmask.trees.tasks import default_decoder

logger = logging.getLogger(__name__)


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
                                baseline_key=headline_key(self.task))

    def to_pandas(self) -> Any:
        """The sweep's rows, one per layer (see :meth:`LayerSweep.to_pandas`)."""
        return self.sweep.to_pandas()


def _check_before_work(sentences: Sequence[Any], layers: Sequence[int] | str, settings: ParseSettings,
                       probe: str) -> None:
    """Everything that would fail after the model pass: layer 0, settings, gold trees to score against."""
    refuse_layer_zero(layers, "layers", probe)
    check_settings(settings, sentences, probe)
    dependency = decoder_task(settings.decoder) == "dependency"
    lacking = next((s for s in sentences if (s.heads if dependency else s.tree) is None), None)
    if lacking is not None:
        raise SettingError(f"{lacking.where()}: no gold {'heads' if dependency else 'tree'} to score the "
                           f"{settings.decoder} trees against; a sweep needs a gold corpus (CoNLL-U, .dp or PTB)")


def sweep_layers(source: ImpactSource, *, layers: Sequence[int] | str = "all", decoder: str | None = None,
                 root: str = "gold", faithful: bool = False, punct: str = "include", seed: int = 0,
                 baselines: bool = False, label: str | Path | None = None, bias: float = 0.0,
                 symmetrize: str = "none", absolute: bool = False, hoover_uuas: bool = False) -> SweepResult:
    """Decode and score the impacts of every layer in ``layers``.

    Args:
        source: gold sentences and their impacts (a store, or a corpus and a model).
        layers: layer indices (0 = embeddings, negative from the end) or "all".
        decoder: default: :func:`~pmask.trees.tasks.default_decoder` (``eisner`` for dependency
            gold, ``mart`` for constituency gold).
        root, faithful, punct, seed, bias, symmetrize, absolute: as for :class:`~pmask.pipeline.induce.ParseSettings`
            and the metrics.
        baselines: also score every baseline of the task on the scored sentences.
        label: the corpus name recorded in the table's metadata (default: the corpus path).
        hoover_uuas: add Hoover et al.'s UUAS to every layer and baseline (dependency decoders).

    Returns:
        A :class:`SweepResult`; ``result.sweep.rows`` hold one (layer, scores) pair per layer.
    """
    sentences = source.sentences
    decoder = decoder or default_decoder(sentences, str(source.impact_settings().get("probe", "pair")))
    task = decoder_task(decoder)
    scores = check_asked(("hoover_uuas",) if hoover_uuas else (), task, f"decoder {decoder}")
    checked = ParseSettings(decoder=decoder, layer=1, root=root, faithful=faithful, seed=seed, bias=bias,
                            symmetrize=symmetrize, absolute=absolute)
    _check_before_work(sentences, layers, checked, str(source.impact_settings().get("probe", "pair")))
    per_layer = source.impacts_by_layers(layers, include_cls=faithful)
    probe = str(source.impact_settings().get("probe", "pair"))   # a cache store's own probe
    check_settings(checked, sentences, probe)
    rows: list[tuple[int, dict[str, Any]]] = []
    golds = sentences
    for layer, impacts in per_layer.items():
        settings = replace(checked, layer=layer)
        score, golds = score_against_gold(sentences, impacts, settings, punct=punct, scores=scores)
        rows.append((layer, score.to_dict()))
    base_scores: dict[str, dict[str, Any]] = {}
    if baselines:
        base_scores = {name: {k: s.to_dict()[k] for k in layer_keys(task, scores)} for name, s in
                       baseline_scores(task, golds, punct=punct, root=root, seed=seed, scores=scores).items()}
    base = {name: scores[headline_key(task)] for name, scores in base_scores.items()}   # the plot's lines
    model, impact = source.describe_model(), source.impact_settings()
    sweep = LayerSweep(rows=rows, metric_keys=layer_keys(task, scores),
                       meta={"model": (model or {}).get("name"), "metric": impact.get("metric"),
                             "probe": probe_label(impact), "decoder": decoder,
                             "corpus": str(label or source.corpus), **({"root": root} if task == "dependency" else {}),
                             **_coverage(source)}, baselines=base_scores)
    title = f"{run_label(model, impact)} · {decoder}" + (f" · root {root}" if task == "dependency" else "")
    return SweepResult(sweep=sweep, task=task, baselines=base, title=title)


def _coverage(source: ImpactSource) -> dict[str, str]:
    """The table's note when an unfinished store was swept (its sentences are part of the corpus)."""
    part = getattr(source, "coverage", None)
    return {"sentences": f"{part['sentences']} of {part['of']} (unfinished store)"} if part else {}


def sweep_probes(source: CorpusSpec, model: ModelSpec, probes: Sequence[str] | None = None, *,
                 store: str | Path | None = None, corpus: str | Path | None = None, progress: bool = True,
                 label: str | Path | None = None, allow_incomplete: bool = False, **options: Any) -> SweepResult:
    """Sweep the layers of one probe, or of several with one line (one column) per probe.

    Args:
        source: the gold corpus, or a store made from one (then one probe: the store's).
        model: the model and impact settings; ``model.head`` applies to the probes with heads.
        probes: probe names (None: ``model.impact.probe``, or a store's own).
        store: with one probe, cache its impacts in this store directory.
        corpus: with a store ``source``: the corpus it was made from.
        progress: progress bars.
        label: the corpus name in the table (default: ``source.path``).
        allow_incomplete: sweep an unfinished store's sentences (refused by default; the table says so).
        options: ``layers``, ``decoder``, ``root``, ``faithful``, ``punct``, ``seed``, ``baselines``, ``bias``,
            ``symmetrize``, ``absolute``, ``hoover_uuas`` (see :func:`sweep_layers`).

    Returns:
        A :class:`SweepResult`; with several probes its columns are ``"<probe> <score>"`` (the task's
        headline score: uas, or sentence-level F1), and the model is loaded once for all of them.
    """
    label = label or source.path
    chosen_probes: list[str | None] = list(probes) if probes else [model.impact.probe]   # None: a store's own
    if len(chosen_probes) == 1:
        chosen = replace(model, impact=replace(model.impact, probe=chosen_probes[0]))
        opened = ImpactSource.open(source, model=chosen, store=store, corpus=corpus, progress=progress,
                                   allow_incomplete=allow_incomplete)
        return sweep_layers(opened, label=label, **options)
    if store is not None or is_store(source.path):
        raise SettingError("a store holds one probe; sweep several {probe} values from a corpus, without {store}")
    model = model.named()
    specs = [model.for_probe(str(p)) for p in chosen_probes]   # every setting checked before the model loads
    if model.head is not None and all(spec.head is None for spec in specs):
        raise SettingError("{head} applies to probe attention and to probe distance with {metric} jsd or hellinger, "
                           "and none of them is swept")
    from pmask.perturb.probes.support import check_support  # lazy: imports torch

    loaded = model.load()
    for spec in specs:
        impact = spec.impact
        check_support(loaded, str(impact.probe), impact.metric, subword=str(impact.subword), head=spec.head)
    results, sentences = {}, source.read()
    for spec in specs:
        opened = ImpactSource(list(sentences), source.path, model=spec, progress=progress, loaded_model=loaded,
                              selection=source)
        results[str(spec.impact.probe)] = sweep_layers(opened, label=label, **options)
    return merge_sweeps(results)


def merge_sweeps(results: dict[str, SweepResult]) -> SweepResult:
    """One :class:`SweepResult` with a ``"<probe> <headline score>"`` column per probe's sweep."""
    first = next(iter(results.values()))
    key = headline_key(first.task)
    rows: dict[int, dict[str, Any]] = {}
    for probe, result in results.items():
        for layer, scores in result.sweep.rows:
            rows.setdefault(layer, {})[f"{probe} {key}"] = scores.get(key)
    meta = {k: v for k, v in first.sweep.meta.items() if k not in ("probe", "metric")}
    keys = tuple(f"{p} {key}" for p in results)
    sweep = LayerSweep(rows=sorted(rows.items()), metric_keys=keys,
                       meta={**meta, "probes": ", ".join(r.sweep.meta.get("probe", p) for p, r in results.items())},
                       baselines={name: dict.fromkeys(keys, value) for name, value in first.baselines.items()})
    model_part = first.title.split(" · ")[0].rsplit(", ", 1)[0]   # "model, probe label": the probe goes
    rest = first.title.split(" · ")[1:]
    title = " · ".join([model_part, *rest, "one line per probe"])
    return SweepResult(sweep=sweep, task=first.task, baselines=first.baselines, title=title)
