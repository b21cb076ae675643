"""Corpus -> impact store: one streaming pass of the engine, written shard by shard.

``compute_store`` resumes interrupted stores and does no model work on a finished one;
``plan_store`` (re-exported from :mod:`pmask.perturb.store`) answers "what is left to do"
before a model is even loaded. ``iter_impacts`` streams matrices without storing them.
"""
from __future__ import annotations

import importlib.metadata
import logging
import os
import platform
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from pmask.perturb.store import (DEFAULT_SHARD_SIZE, CorpusInfo, StoreSettings, StoreWriter, _norm_model,
                                 plan_store, resolve_layers)

logger = logging.getLogger(__name__)

__all__ = ["StoreSummary", "compute_store", "iter_impacts", "plan_store", "store_settings", "versions"]


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


def versions() -> dict[str, str]:
    """Versions of the packages whose behaviour the numbers depend on (no imports needed)."""
    out = {"python": platform.python_version()}
    for dist in ("pmask", "torch", "transformers", "tokenizers", "numpy", "safetensors"):
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


def _dtype_name(dtype: Any) -> str | None:
    return None if dtype is None else str(dtype).removeprefix("torch.")


def store_settings(model: Any, *, layers: Sequence[int] | str = (-1,), metric: str = "dist",
                   subword: str = "avg", include_cls: bool = True, tokenize: str = "words") -> StoreSettings:
    """Full :class:`StoreSettings` of a loaded model (``pmask.perturb.LoadedModel``)."""
    describe = model.describe() if hasattr(model, "describe") else {}
    tokenizer = describe.get("tokenizer") if isinstance(describe, dict) else None
    return StoreSettings(
        model=_norm_model(str(model.name)), metric=metric, subword=subword,
        layers=layers if isinstance(layers, str) else tuple(int(k) for k in layers),
        include_cls=include_cls, revision=getattr(model, "revision", None), commit=getattr(model, "commit", None),
        random_init=bool(getattr(model, "random_init", False)), dtype=_dtype_name(getattr(model, "dtype", None)),
        tokenizer=tokenizer, layers_resolved=resolve_layers(layers, int(model.num_layers)),
        num_layers=int(model.num_layers), max_length=getattr(model, "max_length", None),
        model_info=describe if isinstance(describe, dict) else None, tokenize=tokenize)


def _engine_kwargs(batch_tokens: int | None, progress: bool, stats: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"progress": progress, "stats": stats}
    if batch_tokens:
        kwargs["batch_tokens"] = batch_tokens
    return kwargs


def _new_stats() -> Any:
    try:
        from pmask.perturb import ImpactStats
        return ImpactStats()
    except (ImportError, TypeError):
        return None


def compute_store(model: Any, sentences: Sequence[Any], out_dir: str | os.PathLike, *,
                  layers: Sequence[int] | str = (-1,), metric: str = "dist", subword: str = "avg",
                  batch_tokens: int | None = None, corpus_path: str | os.PathLike | None = None,
                  resume: bool = False, overwrite: bool = False, shard_size: int = DEFAULT_SHARD_SIZE,
                  progress: bool = True, tokenize: str = "words") -> StoreSummary:
    """Compute the impact matrices of ``sentences`` (``pmask.corpora.Sentence``) into ``out_dir``.

    Always stores the include_cls layout ``[L, n+1, n+1]`` (index 0 = [CLS]). ``layers`` are
    hidden-state indices (0 = embeddings, negative from the top) or ``"all"``. With ``resume``
    an existing store made with the same settings and corpus is continued (requested layers
    may be a subset of the stored ones; the stored layers are computed); a finished one costs
    no model work. Raises StoreError for a non-empty ``out_dir`` without ``resume``/``overwrite``
    or a store made with other settings. ``tokenize``: ``"words"`` or ``"text"`` (recorded in the store).
    """
    from pmask.perturb import METRICS, SUBWORD_POLICIES, impact_matrices
    from pmask.perturb.surface import align_sentence

    if metric not in METRICS:   # before anything is written
        raise ValueError(f"unknown metric {metric!r} (choose from {', '.join(METRICS)})")
    if subword not in SUBWORD_POLICIES:
        raise ValueError(f"unknown subword policy {subword!r} (choose from {', '.join(SUBWORD_POLICIES)})")
    t0 = time.perf_counter()
    out = Path(out_dir)
    settings = store_settings(model, layers=layers, metric=metric, subword=subword, include_cls=True,
                              tokenize=tokenize)
    corpus = CorpusInfo.of(sentences, corpus_path)
    run_info = {"device": str(getattr(model, "device", None))}
    stats = None
    computed = 0
    with StoreWriter.open(out, settings, corpus, resume=resume, overwrite=overwrite, versions=versions(),
                          run_info=run_info, shard_size=shard_size) as writer:
        todo = writer.remaining
        before = {e["index"] for e in writer.manifest["sentences"] if "skipped" not in e}
        if todo:
            stored_layers = list(writer.settings.layers_resolved)
            logger.info("%s: computing %d of %d sentences (%d already stored), layers %s",
                        out, len(todo), len(sentences), len(sentences) - len(todo), stored_layers)
            stats = _new_stats()
            words = [sentences[i] if tokenize == "text" else list(sentences[i].words) for i in todo]
            matrices = impact_matrices(model, words, layers=stored_layers, metric=metric, subword=subword,
                                       include_cls=True, tokenize=tokenize,
                                       **_engine_kwargs(batch_tokens, progress, stats))
            for index, matrix in zip(todo, matrices):
                sent = sentences[index]
                if matrix is None:
                    logger.info("%s: too long for the model, skipped", sent.where() if hasattr(sent, "where")
                                else f"sentence {sent.id}")
                    writer.skip(index, sent.id, len(sent.words))
                    continue
                al = align_sentence(model.tokenizer, sent if tokenize == "text" else list(sent.words), tokenize,
                                    warn=False)
                ids = [int(t) for t in al.input_ids]
                writer.add(index, sent.id, list(sent.words), matrix, input_ids=ids,
                           word_index=list(al.word_index),
                           pieces=[str(p) for p in model.tokenizer.convert_ids_to_tokens(ids)])
                computed += 1
    entries = writer.manifest["sentences"]  # everything is flushed on leaving the block
    skipped = sum(1 for e in entries if "skipped" in e)
    summary = StoreSummary(path=out, computed=computed, reused=len(before), skipped_too_long=skipped,
                           seconds=time.perf_counter() - t0, sentences=len(sentences),
                           complete=len(entries) == len(sentences), stats=stats)
    logger.info("%s: %d computed, %d reused, %d skipped as too long, %.1f s%s", out, summary.computed,
                summary.reused, summary.skipped_too_long, summary.seconds, f" ({stats})" if stats else "")
    return summary


def iter_impacts(model: Any, sentences: Sequence[Any], *, layers: Sequence[int] | str = (-1,),
                 metric: str = "dist", subword: str = "avg", include_cls: bool = False,
                 batch_tokens: int | None = None, progress: bool = True,
                 stats: Any = None, tokenize: str = "words") -> Iterator[tuple[Any, np.ndarray | None]]:
    """``(sentence, matrix or None)`` in input order, computed without storing.

    ``matrix`` is float32 ``[L, n, n]`` (``[L, n+1, n+1]`` with ``include_cls``); None for a
    sentence too long for the model.
    """
    from pmask.perturb import impact_matrices

    absolute = list(resolve_layers(layers, int(model.num_layers)))
    items = list(sentences) if tokenize == "text" else [list(s.words) for s in sentences]
    matrices = impact_matrices(model, items, layers=absolute, metric=metric, tokenize=tokenize,
                               subword=subword, include_cls=include_cls,
                               **_engine_kwargs(batch_tokens, progress, stats))
    yield from zip(sentences, matrices)
