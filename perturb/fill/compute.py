"""Corpus -> impact store with a loaded model: one streaming pass of the engine, written shard by shard.

:func:`compute_store` fills the store a :class:`FillRequest` describes, in a short sequence of
steps: resolve the requested layers for the model (once), add the layers an existing store
lacks, then compute what is left, in this process or as one rank of many. It resumes
interrupted stores and does no model work on a finished one. :func:`pmask.perturb.fill.stores.fill_stores`
plans first and loads the model only when work is left; ``plan_store`` (re-exported from
:mod:`pmask.perturb.store`) answers "what is left to do" before a model is even loaded.
``iter_impacts`` streams matrices without storing them.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from pmask.common.errors import LayerError, StoreError
from pmask.common.options import check_attention_layers, probe_entry, resolve_layers
from pmask.common.units import unit_of
from pmask.perturb.alignment import align_sentence
from pmask.perturb.alignment.neighbours import add_context
from pmask.perturb.engine.impact_settings import UNSET, ImpactSettings
from pmask.perturb.engine.stats import ImpactStats
from pmask.perturb.fill.add_layers import extend_store
from pmask.perturb.fill.distributed import GlobalProgress, Group, RankInfo, rank_info
from pmask.perturb.fill.model_spec import ModelSpec
from pmask.perturb.fill.record import store_settings, versions
from pmask.perturb.fill.window import check_some_fit
from pmask.perturb.store import (
    DEFAULT_SHARD_SECONDS,
    DEFAULT_SHARD_SIZE,
    CorpusInfo,
    StoreSettings,
    StoreWriter,
    plan_store,
    read_manifest,
)
from pmask.perturb.store.plan import balance, check_existing, layers_to_add

logger = logging.getLogger(__name__)

__all__ = ["FillRequest", "StoreSummary", "compute_store", "describe_stats", "iter_impacts", "plan_store",
           "store_settings", "versions"]


@dataclass(frozen=True)
class FillRequest:
    """One fill of one store: which sentences go into which directory, at which layers, and how.

    Example:
        >>> FillRequest(read_corpus("pud.conllu"), Path("pud-store"), layers="all", resume=True)  # doctest: +SKIP
    """

    sentences: Sequence[Any]                   # pmask.corpora.Sentence objects (.id, .words)
    output: Path                               # the store directory
    layers: Sequence[int] | str = (-1,)        # as requested: 0 = embeddings, negative from the top, or "all" (1..L)
    impact: ImpactSettings = UNSET             # metric, subword policy, tokenisation mode, probe, context (resolved)
    corpus_path: Path | None = None            # the corpus file, recorded in the manifest
    batch_tokens: int | None = None            # padded tokens per forward batch (None: the engine's default)
    resume: bool = False                       # continue a store made with the same settings and corpus
    overwrite: bool = False                    # replace any store there
    shard_size: int = DEFAULT_SHARD_SIZE       # sentences per shard file (at most)
    shard_seconds: float | None = DEFAULT_SHARD_SECONDS   # a shard also closes after this much work (None: never)
    progress: bool = True                      # a progress bar (rank 0 only in a distributed run)
    selection: dict[str, Any] | None = None    # the corpus selection (format, limit, max_words), recorded

    def __post_init__(self) -> None:
        object.__setattr__(self, "output", Path(self.output))

    @classmethod
    def for_model(cls, spec: ModelSpec, sentences: Sequence[Any], output: str | Path, **options: Any) -> FillRequest:
        """A request that computes impacts as the resolved ``spec`` says (its impact settings and batch budget);
        ``options`` are the other fields."""
        return cls(sentences, Path(output), impact=spec.impact, batch_tokens=spec.batch_tokens, **options)


@dataclass
class StoreSummary:
    """What one ``compute_store`` call did. computed + reused + skipped_too_long = sentences."""

    path: Path
    computed: int          # matrices computed and stored by this call
    reused: int            # matrices already in the store before this call
    skipped_too_long: int  # sentences recorded as too long for the model (this call or earlier ones)
    seconds: float
    sentences: int = 0
    complete: bool = True
    stats: Any = None      # the engine's ImpactStats for this call, when it ran
    added_layers: tuple[int, ...] = ()   # layers this call added to the sentences already stored

    def describe(self) -> str:
        """One line: ``PATH: 3 computed, 1 reused, 0 skipped as too long, 2.1 s (57 sequences, ...)``."""
        added = f", layers {', '.join(map(str, self.added_layers))} added" if self.added_layers else ""
        engine = describe_stats(self.stats)
        return (f"{self.path}: {self.computed} computed, {self.reused} reused, {self.skipped_too_long} skipped as "
                f"too long{added}, {self.seconds:.1f} s" + (f" ({engine})" if engine else ""))


def describe_stats(stats: Any) -> str:
    """The engine's ``ImpactStats`` as a short readable phrase ("" when there are none).

    Example:
        >>> describe_stats(ImpactStats(forward_sequences=3971, tokens=139759, fast_path=True))  # doctest: +SKIP
        '3971 sequences, 139759 tokens, fast path'
    """
    if stats is None:
        return ""
    parts = [f"{getattr(stats, 'forward_sequences', 0)} sequences", f"{getattr(stats, 'tokens', 0)} tokens"]
    fast = getattr(stats, "fast_path", None)
    if fast is not None:
        parts.append("fast path" if fast else "full forward")
    if getattr(stats, "oom_retries", 0):
        parts.append(f"{stats.oom_retries} out-of-memory retries")
    if getattr(stats, "skipped", 0):
        parts.append(f"{stats.skipped} skipped")
    return ", ".join(parts)


def _new_stats() -> Any:
    try:
        return ImpactStats()
    except (ImportError, TypeError):
        return None


class _KeepUnderWay:
    """The engine's checkpoint in a one-process fill (``impact_matrices(checkpoint=...)``): between batches
    the writer closes a shard when one is due and keeps the sentence under way; a resumed fill continues
    that sentence from what was kept, so a hard kill loses at most ``shard_seconds`` of work (plus one
    batch) even when one sentence takes much longer."""

    def __init__(self, writer: StoreWriter, positions: Sequence[int], impact: ImpactSettings, layers: Sequence[int]):
        self.writer, self.positions = writer, list(positions)   # the corpus position of each engine input
        self.meta = {"metric": impact.metric, "subword": impact.subword, "tokenize": impact.tokenize,
                     "probe": impact.probe, "context": impact.context,
                     "layers": [int(k) for k in layers]}
        self.kept = writer.read_partial()
        if self.kept is not None and self.kept[2] != self.meta:
            self.kept = None   # made with other settings (e.g. before layers were added): recomputed

    def restore(self, job: Any) -> None:
        if self.kept is None or self.positions[job.index] != self.kept[0]:
            return
        if job.restore(self.kept[1]):
            logger.info("%s: continuing sentence %d from its %d kept sequences of %d", self.writer.path,
                        self.kept[0], job.done_sequences, job.n_sequences)
        self.kept = None

    def between_batches(self, jobs: Sequence[Any]) -> None:
        self.jobs = jobs   # the engine's queue of jobs in flight (the same object every time)
        self.writer.tick(self._under_way)

    def keep_now(self) -> None:
        """On an interruption (Ctrl-C): keep the sentence under way whether a shard is due or not."""
        self.writer.tick(self._under_way, now=True)

    def _under_way(self) -> tuple[int, dict[str, np.ndarray], dict[str, Any]] | None:
        for job in getattr(self, "jobs", ()):   # sequences run in order: at most one sentence is part done
            if not job.finished and getattr(job, "done_sequences", 0) > 0:
                return self.positions[job.index], job.state(), self.meta
        return None


def _fill(model: Any, request: FillRequest, writer: StoreWriter, todo: Sequence[int], *, progress: bool, stats: Any,
          on_done: Callable[[int], None] | None = None) -> int:
    """Compute the sentences at corpus positions ``todo`` into ``writer``; returns how many were stored."""
    from pmask.perturb.probes import probe_matrices  # lazy: the engine imports torch

    kwargs: dict[str, Any] = {"progress": progress, "stats": stats}
    if request.batch_tokens:
        kwargs["batch_tokens"] = request.batch_tokens
    impact, sentences, layers = request.impact, request.sentences, writer.settings.layers_resolved
    assert layers is not None and impact.tokenize is not None   # resolved and checked by compute_store
    todo = sorted(todo)
    # one process: every sentence from the first, the stored ones only planned, so that the batches are the
    # uninterrupted run's (pmask.perturb.engine.resume); a rank of many: its share
    positions = list(range(todo[-1] + 1)) if writer.world_size == 1 and todo else todo
    if len(positions) > len(todo):
        kwargs["done"] = sorted(set(positions) - set(todo))
    # the neighbours' words, if asked: added here, where the stored inputs need them too
    inputs = add_context([sentences[i] for i in positions], impact.context_words)
    keeper = None
    if probe_entry(impact.probe).checkpoint and writer.world_size == 1:
        kwargs["checkpoint"] = keeper = _KeepUnderWay(writer, positions, impact, layers)
    matrices = probe_matrices(model, inputs, replace(impact, context=0), layers=list(layers), include_cls=True,
                              **kwargs)
    computed = 0
    tokenizer = model.tokenizer
    wanted = set(todo)
    chosen = [inputs[k] for k, position in enumerate(positions) if position in wanted]
    try:
        for index, sent, matrix in zip(todo, chosen, matrices):
            if matrix is None:   # the engine has said which sentence, and why
                writer.skip(index, sent.id, len(sent.words))
            else:
                al = align_sentence(tokenizer, sent, str(impact.tokenize), warn=False)   # the engine already warned
                ids = [int(t) for t in al.input_ids]
                writer.add(index, sent.id, list(sent.words), matrix, input_ids=ids, word_index=list(al.word_index),
                           pieces=[str(p) for p in tokenizer.convert_ids_to_tokens(ids)])
                computed += 1
            if on_done is not None:
                on_done(1)
    except KeyboardInterrupt:
        if keeper is not None:   # a job's state is whole at its done_sequences whenever the interruption came
            try:
                keeper.keep_now()
            except Exception as err:  # noqa: BLE001 - the interruption matters more
                logger.warning("could not keep the sentence under way: %s", err)
        raise
    return computed


def _stored(manifest: dict[str, Any]) -> int:
    return sum(1 for e in manifest["sentences"] if "skipped" not in e)


def _summary(request: FillRequest, manifest: dict[str, Any], computed: int, reused: int, t0: float,
             stats: Any, added: Sequence[int] = ()) -> StoreSummary:
    entries, n_sentences = manifest["sentences"], len(request.sentences)
    # not logged: the caller owns the summary (the CLI says summary.describe() once, on stderr)
    return StoreSummary(path=request.output, computed=computed, reused=reused,
                        skipped_too_long=sum(1 for e in entries if "skipped" in e),
                        seconds=time.perf_counter() - t0, sentences=n_sentences,
                        complete=len(entries) == n_sentences, stats=stats, added_layers=tuple(added))


def _opening(model: Any, request: FillRequest) -> dict[str, Any]:
    """How :meth:`StoreWriter.open` treats an existing store, and what it records about this run."""
    return dict(resume=request.resume, overwrite=request.overwrite, versions=versions(),
                shard_size=request.shard_size, shard_seconds=request.shard_seconds,
                run_info={"device": str(getattr(model, "device", None)), "shard_size": request.shard_size,
                          "shard_seconds": request.shard_seconds})


def _open_distributed(group: Any, out: Path, settings: StoreSettings, corpus: CorpusInfo,
                      opening: dict[str, Any]) -> StoreWriter:
    """Rank 0 opens (checks, merges, cleans) the store; then every other rank joins it."""
    info = group.info
    group.gather(None)   # no rank may still be planning (reading the directory) once rank 0 writes
    writer, failure = None, None
    if info.is_main:
        run_info = {**opening.pop("run_info"), "world_size": info.world_size}
        try:
            writer = StoreWriter.open(out, settings, corpus, **opening, run_info=run_info, world_size=info.world_size)
        except Exception as err:   # every rank must hear of it, or the others would wait forever
            failure = err
    error = group.broadcast(None if failure is None else (type(failure).__name__, str(failure)))
    if failure is not None:
        raise failure
    if error is not None:
        raise (LayerError if error[0] == "LayerError" else StoreError)(error[1])
    if writer is None:
        writer = StoreWriter.join(out, rank=info.rank, world_size=info.world_size, shard_size=opening["shard_size"],
                                  shard_seconds=opening["shard_seconds"])
    return writer


def _compute_distributed(model: Any, request: FillRequest, settings: StoreSettings, corpus: CorpusInfo,
                         info: RankInfo, t0: float) -> StoreSummary:
    """One rank's part of :func:`compute_store` in a distributed run (every rank runs this)."""
    group = Group(info, getattr(model, "device", "auto"))
    stats, computed, out, sentences = None, 0, request.output, request.sentences
    with _open_distributed(group, out, settings, corpus, _opening(model, request)) as writer:
        todo = writer.remaining
        reused = _stored(writer.manifest)
        share = balance(todo, [len(sentences[i].words) for i in todo], info.world_size)[info.rank]
        assert writer.settings.layers_resolved is not None   # a writer's settings are resolved
        if info.is_main and todo:
            logger.info("%s: computing %d of %s (%d already stored) on %d ranks, layers %s", out,
                        len(todo), unit_of(sentences).records(len(sentences)), len(sentences) - len(todo),
                        info.world_size,
                        list(writer.settings.layers_resolved))
        logger.debug("%s: %s computes %d sentences", out, info, len(share))
        bar = GlobalProgress(group, len(todo), enabled=request.progress and bool(todo))
        try:
            if share:
                stats = _new_stats()
                computed = _fill(model, request, writer, share, progress=False, stats=stats, on_done=bar.update)
            writer.flush()
            counts = group.gather(computed)   # every rank's part is final
            bar.close(len(todo))
        finally:
            bar.close()
        if info.is_main:
            writer.merge_parts()
    group.broadcast(None)                      # the manifest is written before any rank returns
    return _summary(request, read_manifest(out), sum(counts), reused, t0, stats)


def compute_store(model: Any, request: FillRequest, *, rank: int | None = None,
                  world_size: int | None = None) -> StoreSummary:
    """Compute the impact matrices of ``request.sentences`` into the store ``request.output``.

    Always stores the include_cls layout ``[L, n+1, n+1]`` (index 0 = [CLS]). With ``resume``
    an existing store made with the same settings and corpus is continued (requested layers
    may be a subset of the stored ones; the stored layers are computed; layers the store lacks
    are first added to every stored sentence, in this process only: see
    :func:`pmask.perturb.fill.add_layers.add_layers`); a finished store holding every requested
    layer costs no model work. Under ``torchrun`` (or with ``rank``/``world_size``) every rank calls this
    with the same arguments and computes its cost-balanced share (see
    :mod:`pmask.perturb.fill.distributed`); the store equals a single-process one.

    Args:
        model: a ``pmask.perturb.models.load.LoadedModel`` (in a distributed run, on this rank's device).
        request: the sentences, the store directory, layers, impact settings and how to treat an
            existing store (see :class:`FillRequest`).
        rank, world_size: this process's place in a distributed run; None reads them from the
            initialised process group or torchrun's environment (one process without either).
        selection: how ``sentences`` were selected from the corpus (``CorpusSpec.record()``:
            format, limit, max_words), recorded so that readers of the store select the same ones.

    Returns:
        A :class:`StoreSummary` (in a distributed run: counts of the whole job, on every rank).

    Raises:
        StoreError: a non-empty ``output`` without ``resume``/``overwrite``, or a store made
            with other settings. LayerError: a layer outside the model. OptionError: an unknown
            impact setting.

    Example:
        >>> compute_store(load_model("bert-base-uncased"),
        ...               FillRequest(read_corpus("pud.conllu"), Path("pud-store"), layers="all"))  # doctest: +SKIP
        StoreSummary(path=PosixPath('pud-store'), computed=1000, reused=0, ...)
    """
    impact = request.impact.check()   # before anything is written
    if hasattr(model, "check_metric"):   # e.g. prob with a checkpoint that has no trained head
        model.check_metric(impact.metric)
    # before any forward pass: never a store of nothing but sentences skipped as too long
    check_some_fit(model, request.sentences, str(impact.tokenize), impact.context_words)
    t0 = time.perf_counter()
    settings = store_settings(model, impact, request.layers)   # the requested layers resolved, once
    check_attention_layers(impact.probe, impact.metric, settings.layers_resolved or (), settings.num_layers)
    corpus = CorpusInfo.of(request.sentences, request.corpus_path, request.selection)
    info = rank_info(rank, world_size)
    added = _add_missing_layers(model, request, settings, corpus, info)
    if info.distributed:
        return _compute_distributed(model, request, settings, corpus, info, t0)
    return _compute_here(model, request, settings, corpus, t0, added)


def _add_missing_layers(model: Any, request: FillRequest, settings: StoreSettings, corpus: CorpusInfo,
                        info: RankInfo) -> tuple[int, ...]:
    """Add the requested layers a resumed store lacks to every stored sentence (one process only)."""
    out = request.output
    missing = layers_to_add(out, settings) if request.resume and not request.overwrite else []
    if not missing:
        return ()
    if info.distributed:
        raise StoreError(f"{out}: lacks layers {missing}; adding layers to a store runs "
                         f"in one process: resume it once without torchrun")
    check_existing(out, settings, corpus, resume=True, overwrite=False, more_layers=True)  # before any change
    assert settings.layers_resolved is not None   # resolved by compute_store
    return extend_store(model, out, settings.layers_resolved, batch_tokens=request.batch_tokens,
                        progress=request.progress).added


def _compute_here(model: Any, request: FillRequest, settings: StoreSettings, corpus: CorpusInfo, t0: float,
                  added: tuple[int, ...]) -> StoreSummary:
    """Fill the store in this one process."""
    stats, computed, out, n = None, 0, request.output, len(request.sentences)
    with StoreWriter.open(out, settings, corpus, **_opening(model, request)) as writer:
        todo = writer.remaining
        reused = _stored(writer.manifest)
        assert writer.settings.layers_resolved is not None   # a writer's settings are resolved
        if todo:
            logger.info("%s: computing %d of %s (%d already stored), layers %s", out, len(todo),
                        unit_of(request.sentences).records(n), n - len(todo), list(writer.settings.layers_resolved))
            stats = _new_stats()
            computed = _fill(model, request, writer, todo, progress=request.progress, stats=stats)
    return _summary(request, writer.manifest, computed, reused, t0, stats, added)


def iter_impacts(model: Any, sentences: Sequence[Any], *, layers: Sequence[int] | str = (-1,),
                 impact: ImpactSettings, include_cls: bool = False,
                 batch_tokens: int | None = None, progress: bool = True,
                 stats: Any = None) -> Iterator[tuple[Any, np.ndarray | None]]:
    """``(sentence, matrix or None)`` in input order, computed without storing.

    ``impact``: metric, subword policy, tokenisation mode and probe (see :class:`ImpactSettings`;
    the attention-based probes' arrays have a head axis).

    ``matrix`` is float32 ``[L, n, n]`` (``[L, n+1, n+1]`` with ``include_cls``); None for a
    sentence too long for the model.
    """
    from pmask.perturb.probes import probe_matrices  # lazy: the engine imports torch

    absolute = list(resolve_layers(layers, int(model.num_layers)))
    kwargs: dict[str, Any] = {"batch_tokens": batch_tokens} if batch_tokens else {}
    check_some_fit(model, sentences, str(impact.tokenize), impact.context_words)   # before any forward pass
    inputs = add_context(list(sentences), impact.context_words)   # the neighbours' words, if asked
    matrices = probe_matrices(model, inputs, replace(impact, context=0), layers=absolute, include_cls=include_cls,
                              progress=progress, stats=stats, **kwargs)
    yield from zip(sentences, matrices)
