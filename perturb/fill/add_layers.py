"""Adding layers to an existing store with a model: the torch side of :mod:`pmask.perturb.store.extend`."""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from pmask.common.errors import StoreError
from pmask.common.options import resolve_layers
from pmask.common.progress import progress_bar
from pmask.perturb.alignment import align
from pmask.perturb.engine.impact_settings import ImpactSettings
from pmask.perturb.fill.record import store_settings, versions
from pmask.perturb.store import StoreSettings, read_manifest, settings_mismatches
from pmask.perturb.store.extend import ComputeLayers, LayerExtension, extend_layers
from pmask.perturb.store.plan import missing_layers

logger = logging.getLogger(__name__)

#: The tokenisation mode of :func:`pmask.perturb.alignment.align`, the one added layers can be aligned with.
WORDS = "words"

__all__ = ["add_layers", "extend_store"]


def _computer(model: Any, path: Path, impact: ImpactSettings, batch_tokens: int | None) -> ComputeLayers:
    """The callback :func:`extend_layers` calls for each shard: the store's probe at the missing layers."""
    from pmask.perturb.probes import probe_matrices  # lazy: the engine imports torch

    def compute(items: list[tuple[list[str], np.ndarray]], layers: list[int]) -> list[np.ndarray]:
        for words, ids in items:   # the new rows must describe the stored model input
            if [int(t) for t in align(model.tokenizer, words).input_ids] != ids.tolist():
                raise StoreError(f"{path}: the model's tokenizer splits the stored sentence "
                                 f"'{' '.join(words[:6])} …' differently; it cannot add layers to this store")
        kwargs: dict[str, Any] = {"batch_tokens": batch_tokens} if batch_tokens else {}
        out = list(probe_matrices(model, [words for words, _ in items], impact, layers=layers, include_cls=True,
                                  progress=False, **kwargs))
        done = [m for m in out if m is not None]
        if len(done) < len(out):
            raise StoreError(f"{path}: a stored sentence is too long for the model; it cannot add layers")
        return done

    return compute


def add_layers(model: Any, out_dir: str | os.PathLike, layers: Sequence[int] | str, *,
               batch_tokens: int | None = None, progress: bool = True) -> LayerExtension:
    """Compute ``layers`` into the store ``out_dir`` for every stored sentence (resumable).

    Each shard is rewritten in turn to hold the sorted union of its layers and ``layers`` (see
    :mod:`pmask.perturb.store.extend`): an interrupted call leaves a readable store, and calling
    again finishes the job with the same result. Runs in this process only (under ``torchrun``,
    call it from one rank, before the others read the store).

    Args:
        model: a ``pmask.perturb.models.load.LoadedModel``: the store's model, tokenizer and dtype.
        out_dir: the store directory.
        layers: hidden-state indices (0 = embeddings, negative from the top) or "all" (1..L).

    Returns:
        A :class:`~pmask.perturb.store.extend.LayerExtension` (``added`` empty when nothing was missing).

    Raises:
        StoreError: the model differs from the store's (name, dtype, tokenizer...), or the store
            cannot be rewritten. LayerError: a layer outside the model.

    Example:
        >>> add_layers(load_model("bert-base-uncased"), "pud-store/", [6, 7])   # doctest: +SKIP
        LayerExtension(layers=(6, 7, 12), added=(6, 7), shards=16, sentences=1000)
    """
    return extend_store(model, Path(out_dir), resolve_layers(layers, int(model.num_layers)),
                        batch_tokens=batch_tokens, progress=progress)


def extend_store(model: Any, path: Path, wanted: Sequence[int], *, batch_tokens: int | None = None,
                 progress: bool = True) -> LayerExtension:
    """:func:`add_layers` for layers already resolved for ``model`` (absolute hidden-state indices)."""
    manifest = read_manifest(path)
    stored = StoreSettings.from_manifest(manifest)
    words = WORDS   # the mode added layers are aligned with (align): a store keeps only words
    if stored.impact.tokenize != words:
        raise StoreError(f"{path}: layers can be added only to stores made with tokenize {words!r}, this one used "
                         f"{stored.impact.tokenize!r}; compute a new store with every layer you need")
    if stored.impact.context:   # the neighbours' words are not kept either
        raise StoreError(f"{path}: layers cannot be added to a store made with context {stored.impact.context}; "
                         "compute a new store with every layer you need")
    wanted = tuple(wanted)
    mine = store_settings(model, stored.impact, list(wanted), resolved=wanted, include_cls=bool(stored.include_cls))
    problems = settings_mismatches(stored, mine, more_layers=True)
    if problems:
        raise StoreError(f"{path}: cannot add layers with this model: " + "; ".join(problems))
    if not missing_layers(manifest, wanted):
        return LayerExtension(layers=tuple(stored.layers_resolved or ()), added=())
    n_stored = sum(1 for e in manifest["sentences"] if "skipped" not in e)
    logger.info("%s: adding layers %s to %d stored sentences", path, missing_layers(manifest, wanted), n_stored)
    impact = stored.impact
    compute = _computer(model, path, impact, batch_tokens)
    with progress_bar(total=n_stored, desc="adding layers", unit="sent", enabled=progress) as bar:
        return extend_layers(path, wanted, compute, progress=bar.update,
                             run_info={"versions": versions(), "device": str(getattr(model, "device", None))})
