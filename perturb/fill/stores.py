"""Filling stores from a model that is loaded only if needed: the one code path of ``pmask impact``,
``parse``/``sweep``/``heatmap --store`` and ``pmask bench``.

:func:`fill_stores` plans every store first (no model: :func:`pmask.perturb.store.plan.plan_fill`),
then, only if some store has work left, joins the ``torchrun`` process group, loads the model
once and fills each such store with :func:`pmask.perturb.fill.compute.compute_store`. :func:`build_store`
is the same for one corpus.

Example:
    >>> run = build_store(CorpusSpec("pud.conllu"), ModelSpec("bert-base-uncased"), "pud-store/",
    ...                   layers="all", resume=True)   # doctest: +SKIP
    >>> run.describe()                                 # doctest: +SKIP
    'pud-store: 0 computed, 1000 reused (store complete)'
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from pmask.common.errors import SettingError
from pmask.common.output_checks import Output, check_output
from pmask.common.progress import progress_bar
from pmask.corpora import Sentence
from pmask.corpora.corpus_spec import CorpusSpec
from pmask.perturb.fill.compute import FillRequest, StoreSummary, compute_store
from pmask.perturb.fill.distributed import init_distributed, is_main_rank
from pmask.perturb.fill.model_spec import ModelSpec
from pmask.perturb.store import DEFAULT_SHARD_SECONDS, StoreSettings
from pmask.perturb.store.plan import StorePlan, plan_fill

__all__ = ["StoreRun", "build_store", "fill_stores", "wanted_settings"]


@dataclass
class StoreRun:
    """What one store's fill did: the fill's summary, or None when a complete store was reused."""

    output: Path
    sentences: int
    summary: StoreSummary | None = None
    is_main: bool = True        # False on the ranks other than 0 of a torchrun job (they print nothing)
    todo: int = 0               # sentences the plan found still to compute

    def describe(self) -> str:
        """One line: computed / reused / skipped counts and seconds."""
        if self.summary is None:
            return f"{self.output}: 0 computed, {self.sentences} reused (store complete)"
        return self.summary.describe()


def wanted_settings(spec: ModelSpec, request: FillRequest) -> StoreSettings:
    """The store settings known before the model is loaded (the rest are filled in by ``compute_store``)."""
    layers = request.layers
    return StoreSettings(model=spec.name, impact=request.impact,
                         layers=layers if isinstance(layers, str) else tuple(layers),
                         random_init=True if spec.random_init else None)


def _plan(spec: ModelSpec, request: FillRequest) -> StorePlan:
    return plan_fill(request.output, request.sentences, wanted_settings(spec, request),
                     corpus_path=request.corpus_path, resume=request.resume, overwrite=request.overwrite)


def fill_stores(requests: Sequence[FillRequest], spec: ModelSpec,
                load: Callable[[], Any] | None = None, *, overall: str | None = None) -> list[StoreRun]:
    """Fill each request's store with the model of ``spec``; plan all of them before any model work.

    Args:
        requests: one per store (see :meth:`FillRequest.for_model` for one built from ``spec``).
        spec: the model: its name and random-init flag are checked against existing stores, its
            device is joined under ``torchrun``.
        load: returns the loaded model; called at most once, and only when some store has work
            left (default: ``spec.load``).
        overall: with several stores to fill, the label of one more bar over all of them, counted
            in sentences, with the remaining time (``pmask bench``: "treebanks"); each store's own
            bar runs below it. None: only the stores' bars.

    Returns:
        One :class:`StoreRun` per request, in order.

    Raises:
        StoreError, LayerError, OptionError: as :func:`pmask.perturb.store.plan_store` and
            :func:`pmask.perturb.fill.compute.compute_store`, every planning error before the model is loaded.
    """
    for request in requests:
        request.impact.check()
        if not request.output.is_dir():   # a new store folder can be made, before any planning
            check_output(Output(request.output, folder=True))
    plans = [_plan(spec, request) for request in requests]
    runs = [StoreRun(r.output, len(r.sentences), todo=len(p.todo)) for r, p in zip(requests, plans)]
    work = [k for k, (r, p) in enumerate(zip(requests, plans)) if not (r.resume and p.done)]
    for k in work:   # a store with work left can be written, before any model work (a finished one is only read)
        check_output(Output(requests[k].output, folder=True))
    if work:
        init_distributed(spec.device)   # under torchrun: this rank's device and process group; else a no-op
        model = (load or spec.load)()
        shown = (overall is not None and len(work) > 1 and any(requests[k].progress for k in work)
                 and is_main_rank())   # under torchrun, rank 0 alone draws it
        with progress_bar(total=sum(runs[k].todo for k in work), desc=overall, unit="sentence", enabled=shown,
                          position=0) as bar:
            for n, k in enumerate(work, start=1):
                bar.set_postfix_str(f"{n}/{len(work)}: {requests[k].output.name}", refresh=True)
                runs[k].summary = compute_store(model, requests[k])
                bar.update(runs[k].todo)
    is_main = is_main_rank()   # under torchrun every rank gets here; rank 0 alone reports
    for run in runs:
        run.is_main = is_main
    return runs


def build_store(corpus: CorpusSpec, model: ModelSpec, output: str | Path, *, layers: Sequence[int] | str = (-1,),
                resume: bool = False, overwrite: bool = False, progress: bool = True,
                shard_seconds: float | None = DEFAULT_SHARD_SECONDS,
                sentences: Sequence[Sentence] | None = None) -> StoreRun:
    """Compute the impact matrices of ``corpus`` into the store directory ``output``.

    A complete store resumed with the same settings costs nothing (not even loading the model);
    resumed with layers it lacks, they are first added to every stored sentence.

    Args:
        corpus: the corpus and its filters.
        model: the model, probe, metric, subword policy, device, dtype and batch budget, resolved
            (:func:`pmask.pipeline.request.resolve`; no head: a store keeps every head, the reader picks one).
        output: the store directory.
        layers: layers kept (0 = embeddings, negative from the end) or "all".
        resume: continue a store made with the same settings; overwrite: replace any store there.
        shard_seconds: a shard is closed (saved) after this much work at the latest, so a hard kill loses
            at most that much (None: only after 64 sentences).
        sentences: the corpus's sentences when they were read already (a command reads its corpus once);
            None: read now.

    Returns:
        A :class:`StoreRun`.
    """
    if model.head is not None:
        raise SettingError("{head} is chosen when a store is read (it keeps every head); leave it out here")
    model.impact.check(model.head)
    request = FillRequest.for_model(model, corpus.read() if sentences is None else list(sentences), output,
                                    corpus_path=corpus.path, layers=layers,
                                    resume=resume, overwrite=overwrite, progress=progress,
                                    selection=corpus.record(), shard_seconds=shard_seconds)
    return fill_stores([request], model)[0]
