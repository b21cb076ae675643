"""Score every layer of a model (one engine pass) against the gold trees of its corpus.

The library behind ``pmask sweep`` (:mod:`pmask.cli.commands.sweep`): :func:`sweep_layers`
decodes the impacts of each requested layer, scores them, optionally scores the baselines on the
same sentences, and returns a :class:`SweepResult` holding a
:class:`~pmask.eval.comparison.tables.LayerSweep` table; :func:`sweep_probes` does it for several
probes (one column, one plotted line, per probe; the model loaded once), in two steps: :func:`plan_sweep`
reads the corpus once, resolves and checks every probe's request (before any model work) and says what it
will compute (:meth:`SweepPlan.computations`, the cost line), then :meth:`SweepPlan.run` computes.

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
from typing import Any, Sequence, cast

from pmask.common.display import RichDisplay
from pmask.common.errors import SettingError
from pmask.common.labels import either, probe_label, run_label
from pmask.corpora import FORMATS
from pmask.eval.comparison.compare import baseline_scores, faithful_baselines, score_against_gold
from pmask.eval.comparison.tables import LayerSweep, plot_layer_sweep
from pmask.eval.scores.columns import check_asked, headline_key, layer_keys
from pmask.perturb.fill.estimate import Computation, computation
from pmask.perturb.source import ImpactSource, is_store
from pmask.pipeline.request import (
    Decoding,
    Inputs,
    Request,
    check_request,
    model_family_of,
    prepare,
    probe_request,
    with_family,
)
from pmask.trees.registry import decoder_task
from pmask.trees.tasks import task_entry

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


def _check_gold(sentences: Sequence[Any], decoder: str) -> None:
    """Refuse, before any model work, a corpus without the gold trees the sweep scores against."""
    task = task_entry(decoder_task(decoder))
    lacking = next((s for s in sentences if task.tree_of(s) is None), None)
    if lacking is not None:
        raise SettingError(f"{lacking.where()}: no gold {task.field} to score the "
                           f"{decoder} trees against; a sweep needs a gold corpus "
                           f"({either([f.name for f in FORMATS.values() if f.task])})")


def sweep_layers(source: ImpactSource, *, layers: Sequence[int] | str = "all", decoder: str | None = None,
                 root: str | None = None, faithful: bool = False, punct: str = "include", seed: int = 0,
                 baselines: bool = False, label: str | Path | None = None, bias: float = 0.0,
                 symmetrize: str | None = None, absolute: bool = False, scores: Sequence[str] = ()) -> SweepResult:
    """Decode and score the impacts of every layer in ``layers``.

    Args:
        source: gold sentences and their impacts (a store, or a corpus and a model).
        layers: layer indices (0 = embeddings, negative from the end) or "all".
        decoder, root, faithful, seed, bias, symmetrize, absolute: as for :class:`~pmask.pipeline.request.Decoding`
            (None: :func:`~pmask.pipeline.request.resolve` chooses, as for ``pmask parse``: ``eisner`` for
            dependency gold, ``mart`` for constituency gold, ``cky`` for probe distortion; root gold).
        punct: score punctuation words ("include") or not ("exclude").
        baselines: also score every baseline of the task on the scored sentences.
        label: the corpus name recorded in the table's metadata (default: the corpus path).
        scores: optional scores added to every layer and baseline, by name (``hoover_uuas``: Hoover et al.'s
            UUAS, dependency decoders; :func:`pmask.eval.scores.columns.optional_scores`).

    Returns:
        A :class:`SweepResult`; ``result.sweep.rows`` hold one (layer, scores) pair per layer.
    """
    decoding = Decoding(decoder, layers, root, faithful, False, seed, bias, symmetrize, absolute)
    request = prepare(Request(source.model_spec, decoding), source)
    return _sweep(request, source, punct=punct, baselines=baselines, label=label, scores=scores)


def _sweep(request: Request, source: ImpactSource, *, punct: str, baselines: bool,
           label: str | Path | None, scores: Sequence[str] = ()) -> SweepResult:
    """The sweep of a resolved and checked ``request`` over ``source`` (see :func:`sweep_layers`)."""
    sentences, decoding = source.sentences, request.decoding
    decoder, root = str(decoding.decoder), str(decoding.root)
    task = decoder_task(decoder)
    rooted = "root" in task_entry(task).settings
    scores = check_asked(scores, task, f"decoder {decoder}")
    _check_gold(sentences, decoder)
    per_layer = source.impacts_by_layers(cast(Any, decoding.layers), include_cls=decoding.faithful)
    rows: list[tuple[int, dict[str, Any]]] = []
    golds = sentences
    for layer, impacts in per_layer.items():
        score, golds = score_against_gold(sentences, impacts, decoding.at(layer), punct=punct, scores=scores)
        rows.append((layer, score.to_dict()))
    base_scores: dict[str, dict[str, Any]] = {}
    if baselines:   # under Wu et al.'s discourse pipeline, their two chains (as eval shows them)
        faithful, names = faithful_baselines(task, bool(decoding.faithful), golds)
        base_scores = {name: {k: s.to_dict()[k] for k in layer_keys(task, scores)} for name, s in
                       baseline_scores(task, golds, punct=punct, root=root, seed=decoding.seed, scores=scores,
                                       faithful=faithful, names=names).items()}
    base = {name: figures[headline_key(task)] for name, figures in base_scores.items()}   # the plot's lines
    model, impact = source.describe_model(), source.impact_settings()
    sweep = LayerSweep(rows=rows, metric_keys=layer_keys(task, scores),
                       meta={"model": (model or {}).get("name"), "metric": impact.get("metric"),
                             "probe": probe_label(impact), "decoder": decoder,
                             "corpus": str(label or source.corpus), **({"root": root} if rooted else {}),
                             **_coverage(source)}, baselines=base_scores)
    title = f"{run_label(model, impact)} · {decoder}" + (f" · root {root}" if rooted else "")
    return SweepResult(sweep=sweep, task=task, baselines=base, title=title)


def _coverage(source: ImpactSource) -> dict[str, str]:
    """The table's note when an unfinished store was swept (its sentences are part of the corpus)."""
    part = getattr(source, "coverage", None)
    return {"sentences": f"{part['sentences']} of {part['of']} (unfinished store)"} if part else {}


def sweep_probes(request: Request, probes: Sequence[str] | None = None, *, store: str | Path | None = None,
                 corpus: str | Path | None = None, progress: bool = True, label: str | Path | None = None,
                 allow_incomplete: bool = False, punct: str = "include", baselines: bool = False,
                 scores: Sequence[str] = ()) -> SweepResult:
    """Sweep the layers of one probe, or of several with one line (one column) per probe.

    Args:
        request: the gold corpus (``request.corpus``: a corpus, or a store made from one, then one probe:
            the store's), the model and impact settings and the decoding, as given (each probe's defaults
            are resolved by :func:`~pmask.pipeline.request.resolve`; ``request.model.head`` applies to the
            probes with heads).
        probes: probe names (None: ``request``'s probe, or a store's own).
        store: with one probe, cache its impacts in this store directory.
        corpus: with a store ``request.corpus``: the corpus it was made from.
        progress: progress bars.
        label: the corpus name in the table (default: the corpus path).
        allow_incomplete: sweep an unfinished store's sentences (refused by default; the table says so).
        punct, baselines, scores: see :func:`sweep_layers`.

    Returns:
        A :class:`SweepResult`; with several probes its columns are ``"<probe> <score>"`` (the task's
        headline score: uas, or sentence-level F1), and the model is loaded once for all of them.
    """
    return plan_sweep(request, probes, store=store, corpus=corpus, progress=progress, label=label,
                      allow_incomplete=allow_incomplete, punct=punct, baselines=baselines,
                      scores=scores).run()


@dataclass
class SweepPlan:
    """A sweep read, resolved and checked, not run yet (:func:`plan_sweep`): one resolved request and impact
    source per probe, and how each is scored."""

    requests: list[Request]
    sources: list[ImpactSource]
    scoring: dict[str, Any]        # punct, baselines, label, scores
    store: str | Path | None = None

    def computations(self) -> list[Computation]:
        """What the run computes: each probe's records with its resolved model (none from a store, or from a
        cache store read without a model), into the cache store if given."""
        return [computation(one.model, source.sentences, store=self.store, faithful=one.decoding.faithful)
                for one, source in zip(self.requests, self.sources) if source.store is None and source.computes]

    def run(self) -> SweepResult:
        """Compute and score (the model loaded once for every probe)."""
        if len(self.requests) == 1:
            return _sweep(self.requests[0], self.sources[0], **self.scoring)
        from pmask.perturb.probes.support import check_support  # lazy: imports torch

        loaded = self.requests[0].model.load()
        for one in self.requests:
            impact = one.impact
            check_support(loaded, str(impact.probe), str(impact.metric), subword=str(impact.subword),
                          head=one.model.head)
        results = {}
        for one, source in zip(self.requests, self.sources):
            source.use_model(loaded)
            results[str(one.impact.probe)] = _sweep(one, source, **self.scoring)
        return merge_sweeps(results)


def plan_sweep(request: Request, probes: Sequence[str] | None = None, *, store: str | Path | None = None,
               corpus: str | Path | None = None, progress: bool = True, label: str | Path | None = None,
               allow_incomplete: bool = False, punct: str = "include", baselines: bool = False,
               scores: Sequence[str] = ()) -> SweepPlan:
    """Read the gold corpus once, resolve and check each probe's request (every refusal before any model
    work): the :class:`SweepPlan` of :func:`sweep_probes` (whose arguments these are)."""
    if request.corpus is None:
        raise SettingError("a sweep needs a gold corpus (request.corpus)")
    source, label = request.corpus, label or request.corpus.path
    scoring = {"punct": punct, "baselines": baselines, "label": label, "scores": tuple(scores)}
    chosen_probes: list[str | None] = list(probes) if probes else [request.impact.probe]   # None: a store's own
    if len(chosen_probes) == 1:
        one = replace(request, model=replace(request.model, impact=replace(request.impact, probe=chosen_probes[0])))
        opened = ImpactSource.open(source, model=one.model, store=store, corpus=corpus, progress=progress,
                                   allow_incomplete=allow_incomplete)
        done = prepare(one, opened)
        _check_gold(opened.sentences, str(done.decoding.decoder))
        return SweepPlan([done], [opened], scoring, store)
    if store is not None or is_store(source.path):
        raise SettingError("a store holds one probe; sweep several {probe} values from a corpus, without {store}")
    sentences = source.read()
    inputs = Inputs.of(sentences)
    requests = [probe_request(request, str(p), inputs) for p in chosen_probes]
    for one in requests:   # every setting checked before the model loads
        check_request(one, sentences)
    family = replace(inputs, family=model_family_of(request.model))   # read from its config: no weights load
    requests = [with_family(one, probe_request(request, str(p), family), sentences)
                for one, p in zip(requests, chosen_probes)]
    for one in requests:
        _check_gold(sentences, str(one.decoding.decoder))
    if request.model.head is not None and all(one.model.head is None for one in requests):
        raise SettingError("{head} applies to probe attention and to probe distance with {metric} jsd or hellinger, "
                           "and none of them is swept")
    sources = [ImpactSource(list(sentences), source.path, model=one.model, progress=progress, selection=source)
               for one in requests]
    return SweepPlan(requests, sources, scoring)


def merge_sweeps(results: dict[str, SweepResult]) -> SweepResult:
    """One :class:`SweepResult` with a ``"<probe> <headline score>"`` column per probe's sweep."""
    first = next(iter(results.values()))
    key = headline_key(first.task)
    rows: dict[int, dict[str, Any]] = {}
    for probe, result in results.items():
        for layer, scores in result.sweep.rows:
            rows.setdefault(layer, {})[f"{probe} {key}"] = scores.get(key)
    decoders = {probe: result.sweep.meta.get("decoder") for probe, result in results.items()}
    differ = len(set(decoders.values())) > 1   # e.g. mart for pair, cky for distortion: each probe's is named
    each = ", ".join(f"{probe} {decoder}" for probe, decoder in decoders.items())
    meta: dict[str, Any] = {}
    for k, v in first.sweep.meta.items():
        if k == "decoder" and differ:
            meta["decoders"] = each
        elif k not in ("probe", "metric"):
            meta[k] = v
    keys = tuple(f"{p} {key}" for p in results)
    sweep = LayerSweep(rows=sorted(rows.items()), metric_keys=keys,
                       meta={**meta, "probes": ", ".join(r.sweep.meta.get("probe", p) for p, r in results.items())},
                       baselines={name: dict.fromkeys(keys, value) for name, value in first.baselines.items()})
    model_part = first.title.split(" · ")[0].rsplit(", ", 1)[0]   # "model, probe label": the probe goes
    rest = first.title.split(" · ")[1:]
    if differ:   # the title's decoder is the first probe's
        rest = [f"decoders: {each}", *rest[1:]]
    title = " · ".join([model_part, *rest, "one line per probe"])
    return SweepResult(sweep=sweep, task=first.task, baselines=first.baselines, title=title)
