"""Corpus -> impact store: one streaming pass of the engine, written shard by shard.

``compute_store`` resumes interrupted stores and does no model work on a finished one;
``plan_store`` (re-exported from :mod:`pmask.perturb.store`) answers "what is left to do"
before a model is even loaded. ``iter_impacts`` streams matrices without storing them.
"""
from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from pmask.common.errors import LayerError, StoreError
from pmask.common.options import check_probe, default_metric, resolve_layers
from pmask.perturb.store import DEFAULT_SHARD_SIZE, CorpusInfo, StoreSettings, StoreWriter, plan_store, read_manifest
from pmask.perturb.store.plan import balance, check_existing, layers_to_add
from pmask.perturb.add_layers import add_layers
from pmask.perturb.store_record import store_settings, versions

logger = logging.getLogger(__name__)

__all__ = ["StoreSummary", "compute_store", "describe_stats", "iter_impacts", "plan_store", "store_settings",
           "versions"]


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


@dataclass(frozen=True)
class _Job:
    """What every rank needs to fill its share of a store."""

    model: Any
    sentences: Sequence[Any]
    metric: str
    subword: str
    batch_tokens: int | None
    tokenize: str = "words"
    probe: str = "pair"


def _new_stats() -> Any:
    try:
        from pmask.perturb import ImpactStats
        return ImpactStats()
    except (ImportError, TypeError):
        return None


def _fill(job: _Job, writer: StoreWriter, todo: Sequence[int], *, progress: bool, stats: Any,
          on_done: Callable[[int], None] | None = None) -> int:
    """Compute the sentences at corpus positions ``todo`` into ``writer``; returns how many were stored."""
    from pmask.perturb.alignment import align_sentence
    from pmask.perturb.probes import probe_matrices

    kwargs: dict[str, Any] = {"progress": progress, "stats": stats}
    if job.batch_tokens:
        kwargs["batch_tokens"] = job.batch_tokens
    matrices = probe_matrices(job.model, [job.sentences[i] for i in todo], job.probe,
                              layers=list(writer.settings.layers_resolved), metric=job.metric, subword=job.subword,
                              include_cls=True, tokenize=job.tokenize, **kwargs)
    computed = 0
    tokenizer = job.model.tokenizer
    for index, matrix in zip(todo, matrices):
        sent = job.sentences[index]
        if matrix is None:
            logger.info("%s: too long for the model, skipped", sent.where() if hasattr(sent, "where")
                        else f"sentence {sent.id}")
            writer.skip(index, sent.id, len(sent.words))
        else:
            al = align_sentence(tokenizer, sent, job.tokenize, warn=False)   # the engine already warned
            ids = [int(t) for t in al.input_ids]
            writer.add(index, sent.id, list(sent.words), matrix, input_ids=ids, word_index=list(al.word_index),
                       pieces=[str(p) for p in tokenizer.convert_ids_to_tokens(ids)])
            computed += 1
        if on_done is not None:
            on_done(1)
    return computed


def _stored(manifest: dict[str, Any]) -> int:
    return sum(1 for e in manifest["sentences"] if "skipped" not in e)


def _summary(out: Path, manifest: dict[str, Any], n_sentences: int, computed: int, reused: int, t0: float,
             stats: Any, added: Sequence[int] = ()) -> StoreSummary:
    entries = manifest["sentences"]
    summary = StoreSummary(path=out, computed=computed, reused=reused,
                           skipped_too_long=sum(1 for e in entries if "skipped" in e),
                           seconds=time.perf_counter() - t0, sentences=n_sentences,
                           complete=len(entries) == n_sentences, stats=stats, added_layers=tuple(added))
    # not logged: the caller owns the summary (the CLI prints summary.describe() once, on stdout)
    return summary


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
        writer = StoreWriter.join(out, rank=info.rank, world_size=info.world_size, shard_size=opening["shard_size"])
    return writer


def _compute_distributed(job: _Job, out: Path, settings: StoreSettings, corpus: CorpusInfo, info: Any,
                         opening: dict[str, Any], progress: bool, t0: float) -> StoreSummary:
    """One rank's part of :func:`compute_store` in a distributed run (every rank runs this)."""
    from pmask.perturb.distributed import GlobalProgress, Group

    group = Group(info, getattr(job.model, "device", "auto"))
    stats, computed = None, 0
    with _open_distributed(group, out, settings, corpus, opening) as writer:
        todo = writer.remaining
        reused = _stored(writer.manifest)
        share = balance(todo, [len(job.sentences[i].words) for i in todo], info.world_size)[info.rank]
        if info.is_main and todo:
            logger.info("%s: computing %d of %d sentences (%d already stored) on %d ranks, layers %s", out,
                        len(todo), len(job.sentences), len(job.sentences) - len(todo), info.world_size,
                        list(writer.settings.layers_resolved))
        logger.debug("%s: %s computes %d sentences", out, info, len(share))
        bar = GlobalProgress(group, len(todo), enabled=progress and bool(todo))
        try:
            if share:
                stats = _new_stats()
                computed = _fill(job, writer, share, progress=False, stats=stats, on_done=bar.update)
            writer.flush()
            counts = group.gather(computed)   # every rank's part is final
            bar.close(len(todo))
        finally:
            bar.close()
        if info.is_main:
            writer.merge_parts()
    group.broadcast(None)                      # the manifest is written before any rank returns
    return _summary(out, read_manifest(out), len(job.sentences), sum(counts), reused, t0, stats)


def compute_store(model: Any, sentences: Sequence[Any], out_dir: str | os.PathLike, *,
                  layers: Sequence[int] | str = (-1,), metric: str | None = None, subword: str = "avg",
                  batch_tokens: int | None = None, corpus_path: str | os.PathLike | None = None,
                  resume: bool = False, overwrite: bool = False, shard_size: int = DEFAULT_SHARD_SIZE,
                  progress: bool = True, rank: int | None = None, world_size: int | None = None,
                  tokenize: str = "words", probe: str = "pair") -> StoreSummary:
    """Compute the impact matrices of ``sentences`` into the store ``out_dir``.

    Always stores the include_cls layout ``[L, n+1, n+1]`` (index 0 = [CLS]). With ``resume``
    an existing store made with the same settings and corpus is continued (requested layers
    may be a subset of the stored ones; the stored layers are computed; layers the store lacks
    are first added to every stored sentence, in this process only: see
    :func:`pmask.perturb.add_layers.add_layers`); a finished store holding every requested
    layer costs no model work. Under ``torchrun`` (or with ``rank``/``world_size``) every rank calls this
    with the same arguments and computes its cost-balanced share (see
    :mod:`pmask.perturb.distributed`); the store equals a single-process one.

    Args:
        model: a ``pmask.perturb.LoadedModel`` (in a distributed run, on this rank's device).
        sentences: ``pmask.corpora.Sentence`` objects (``.id``, ``.words``).
        out_dir: the store directory.
        layers: hidden-state indices (0 = embeddings, negative from the top) or ``"all"`` (1..L).
        metric, subword: see :data:`pmask.common.options.METRICS` and :data:`pmask.common.options.SUBWORD_POLICIES`.
        batch_tokens: padded tokens per forward batch (None: the engine's default for the device).
        corpus_path: the corpus file, recorded in the manifest.
        resume, overwrite: continue or replace an existing store.
        shard_size: sentences per shard file.
        progress: show a progress bar (rank 0 only in a distributed run).
        tokenize: how sentences become model input (:data:`pmask.common.options.TOKENIZE_MODES`),
            recorded in the store.
        probe: how impacts are read out of the model (:data:`pmask.common.options.PROBES`), recorded
            in the store; metric None = the probe's default. Probes with a head axis store every head.
        rank, world_size: this process's place in a distributed run; None reads them from the
            initialised process group or torchrun's environment (one process without either).

    Returns:
        A :class:`StoreSummary` (in a distributed run: counts of the whole job, on every rank).

    Raises:
        StoreError: a non-empty ``out_dir`` without ``resume``/``overwrite``, or a store made
            with other settings. LayerError: a layer outside the model.

    Example:
        >>> compute_store(load_model("bert-base-uncased"), read_corpus("pud.conllu"), "pud-store/",
        ...               layers="all")   # doctest: +SKIP
        StoreSummary(path=PosixPath('pud-store'), computed=1000, reused=0, ...)
    """
    metric = metric or default_metric(probe)
    check_probe(probe, metric, subword)   # before anything is written
    t0 = time.perf_counter()
    job = _Job(model, sentences, metric, subword, batch_tokens, tokenize, probe)
    settings = store_settings(model, layers=layers, metric=metric, subword=subword, include_cls=True,
                              tokenize=tokenize, probe=probe)
    if settings.heads is not None and 0 in (settings.layers_resolved or ()):
        raise LayerError(f"layer 0 (the embeddings) has no attention, which probe {probe} with metric {metric} "
                         f"reads; choose layers 1..{settings.num_layers}")
    corpus = CorpusInfo.of(sentences, corpus_path)
    opening = dict(resume=resume, overwrite=overwrite, versions=versions(), shard_size=shard_size,
                   run_info={"device": str(getattr(model, "device", None))})
    info = _rank_info(rank, world_size)
    out = Path(out_dir)
    added: tuple[int, ...] = ()
    if resume and not overwrite and layers_to_add(out, settings):
        added = _add_missing_layers(job, out, settings, corpus, info, progress)
    if info is not None and info.distributed:
        return _compute_distributed(job, out, settings, corpus, info, opening, progress, t0)
    return _compute_here(job, out, settings, corpus, opening, progress, t0, added)


def _rank_info(rank: int | None, world_size: int | None) -> Any:
    """This process's place in a distributed run, or None outside one."""
    if rank is None and world_size is None and "WORLD_SIZE" not in os.environ:
        return None
    from pmask.perturb.distributed import rank_info   # lazy: imports torch.distributed

    return rank_info(rank, world_size)


def _add_missing_layers(job: _Job, out: Path, settings: StoreSettings, corpus: CorpusInfo, info: Any,
                        progress: bool) -> tuple[int, ...]:
    """Add the requested layers an existing store lacks to every stored sentence (one process only)."""
    if info is not None and info.distributed:
        raise StoreError(f"{out}: lacks layers {layers_to_add(out, settings)}; adding layers to a store runs "
                         f"in one process: resume it once without torchrun")
    check_existing(out, settings, corpus, resume=True, overwrite=False, more_layers=True)  # before any change
    return add_layers(job.model, out, settings.layers_resolved, batch_tokens=job.batch_tokens,
                      progress=progress).added


def _compute_here(job: _Job, out: Path, settings: StoreSettings, corpus: CorpusInfo, opening: dict[str, Any],
                  progress: bool, t0: float, added: tuple[int, ...]) -> StoreSummary:
    """Fill the store in this one process."""
    stats = None
    computed = 0
    with StoreWriter.open(out, settings, corpus, **opening) as writer:
        todo = writer.remaining
        reused = _stored(writer.manifest)
        if todo:
            logger.info("%s: computing %d of %d sentences (%d already stored), layers %s", out, len(todo),
                        len(job.sentences), len(job.sentences) - len(todo), list(writer.settings.layers_resolved))
            stats = _new_stats()
            computed = _fill(job, writer, todo, progress=progress, stats=stats)
    return _summary(out, writer.manifest, len(job.sentences), computed, reused, t0, stats, added)


def iter_impacts(model: Any, sentences: Sequence[Any], *, layers: Sequence[int] | str = (-1,),
                 metric: str | None = None, subword: str = "avg", include_cls: bool = False,
                 batch_tokens: int | None = None, progress: bool = True,
                 stats: Any = None, tokenize: str = "words", probe: str = "pair"
                 ) -> Iterator[tuple[Any, np.ndarray | None]]:
    """``(sentence, matrix or None)`` in input order, computed without storing.

    ``tokenize``: how sentences become model input (:data:`pmask.common.options.TOKENIZE_MODES`);
    ``probe``: :data:`pmask.common.options.PROBES` (its arrays have a head axis for the attention-based ones).

    ``matrix`` is float32 ``[L, n, n]`` (``[L, n+1, n+1]`` with ``include_cls``); None for a
    sentence too long for the model.
    """
    from pmask.perturb.probes import probe_matrices

    absolute = list(resolve_layers(layers, int(model.num_layers)))
    kwargs: dict[str, Any] = {"batch_tokens": batch_tokens} if batch_tokens else {}
    matrices = probe_matrices(model, list(sentences), probe, layers=absolute, metric=metric, subword=subword,
                              include_cls=include_cls, progress=progress, stats=stats, tokenize=tokenize, **kwargs)
    yield from zip(sentences, matrices)
