"""Adding layers to a store: every shard is rewritten, one at a time, to hold the union of layers.

Crash safety: a rewritten shard is written under a new number (atomically), then the manifest
is rewritten to list it instead of the old one, then the old file is deleted. A shard entry
whose layers differ from ``layers.resolved`` carries its own ``"layers"`` list; the reader
takes the store's layers out of it, so an interrupted extension leaves a readable store with
the old layers, and running the extension again continues with the shards not yet rewritten
(files written just before a crash are unreferenced and removed). ``layers.resolved`` becomes
the sorted union only once every shard holds it. Nothing here imports torch: the caller
computes the missing layers through a callback.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import safetensors.numpy
from safetensors import safe_open

from pmask.common.errors import StoreError
from pmask.common.files import atomic_write
from pmask.perturb.store.layout import (
    clean_unreferenced,
    now,
    read_manifest,
    shard_metadata,
    shard_name,
    shard_number,
    write_manifest,
)
from pmask.perturb.store.lock import lock_dir, unlock
from pmask.perturb.store.parts import part_files

logger = logging.getLogger(__name__)

# (sentences of one shard as (words, input_ids), absolute layers) -> one float32 [len(layers), n+1, n+1] each
ComputeLayers = Callable[[list[tuple[list[str], np.ndarray]], list[int]], Sequence[np.ndarray]]


@dataclass
class LayerExtension:
    """What :func:`extend_layers` did: ``layers`` the store holds now, ``added`` the new ones,
    ``shards``/``sentences`` rewritten by this call (0 when nothing was missing)."""

    layers: tuple[int, ...]
    added: tuple[int, ...]
    shards: int = 0
    sentences: int = 0


def extend_layers(out_dir: str | os.PathLike, layers: Sequence[int], compute: ComputeLayers, *,
                  progress: Callable[[int], None] | None = None,
                  run_info: dict[str, Any] | None = None) -> LayerExtension:
    """Make every sentence of the store ``out_dir`` hold ``layers`` as well as its own.

    Args:
        out_dir: the store directory (complete or not; skipped sentences are left as they are).
        layers: absolute hidden-state indices wanted (those already stored cost nothing).
        compute: the impacts of one shard's sentences at the missing layers, include_cls layout
            ``[len(layers), n+1, n+1]`` per sentence (the caller checks its tokenizer gives the
            stored ``input_ids``).
        progress: called with the number of sentences after each rewritten shard.
        run_info: recorded (with the start time and the added layers) in the manifest's ``runs``.

    Returns:
        A :class:`LayerExtension`; the manifest's ``layers.resolved`` is the sorted union.

    Raises:
        StoreError: the store is in use, holds unmerged index parts of a distributed run, or a
            shard is unreadable.

    Example:
        >>> extend_layers("store/", [1, 2], compute)   # doctest: +SKIP
        LayerExtension(layers=(1, 2, 3), added=(1, 2), shards=4, sentences=250)
    """
    path = Path(out_dir)
    started = now()
    lock = lock_dir(path)
    try:
        manifest = read_manifest(path)
        if not manifest.get("include_cls", True):
            raise StoreError(f"{path}: layers can only be added to a store in the include_cls layout")
        if part_files(path):
            raise StoreError(f"{path}: an interrupted distributed run left index parts; resume its computation "
                             f"before adding layers")
        clean_unreferenced(path, manifest)   # what a crash left unreferenced
        stored = tuple(manifest["layers"]["resolved"])
        every = [tuple(s.get("layers", stored)) for s in manifest["shards"]]
        target = tuple(sorted({*stored, *(int(k) for k in layers), *(k for held in every for k in held)}))
        done = LayerExtension(layers=target, added=tuple(k for k in target if k not in stored))
        for entry in list(manifest["shards"]):
            held = tuple(entry.get("layers", stored))
            if held != target:
                done.sentences += _rewrite_shard(path, manifest, entry, held, target, compute)
                done.shards += 1
                if progress is not None:
                    progress(entry["n_sentences"])
        if stored != target or any("layers" in s for s in manifest["shards"]):
            manifest["layers"] = {"requested": list(target), "resolved": list(target)}
            manifest.setdefault("runs", []).append({"started": started, "added_layers": list(done.added),
                                                    **(run_info or {})})
            for s in manifest["shards"]:
                s.pop("layers", None)
            write_manifest(path, manifest)
        return done
    finally:
        unlock(lock)


def _rewrite_shard(path: Path, manifest: dict[str, Any], entry: dict[str, Any], held: tuple[int, ...],
                   target: tuple[int, ...], compute: ComputeLayers) -> int:
    """Write shard ``entry`` again with ``target`` layers under a new name; returns its sentence count."""
    old = path / entry["file"]
    try:
        with safe_open(str(old), framework="numpy") as handle:
            meta = handle.metadata() or {}
            records = json.loads(meta["sentences"])
            tensors = {k: handle.get_tensor(k) for k in handle.keys()}  # noqa: SIM118 (safe_open is not a dict: no __iter__)
    except Exception as err:   # SafetensorError, KeyError, JSONDecodeError
        raise StoreError(f"{old}: corrupt shard: {err}") from None
    missing = [k for k in target if k not in held]
    items = [(list(r["words"]), tensors[f"{r['key']}/input_ids"]) for r in records]
    computed = compute(items, missing)
    for record, extra in zip(records, computed, strict=True):
        key = f"{record['key']}/impact"
        have = tensors[key]
        if extra.shape[1:] != have.shape[1:] or len(extra) != len(missing):
            raise StoreError(f"{old}: sentence {record['id']}: computed impacts of shape {extra.shape} do not fit "
                             f"the stored {have.shape}")
        rows = {**dict(zip(held, have)), **dict(zip(missing, np.asarray(extra, dtype=np.float32)))}
        tensors[key] = np.stack([rows[k] for k in target])   # every row is float32 already
    meta = shard_metadata(meta["sentences"])
    data = safetensors.numpy.save(tensors, metadata=meta)
    name = shard_name(max(shard_number(s["file"]) for s in manifest["shards"]) + 1)
    atomic_write(path / name, data)
    new = {"file": name, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data),
           "n_sentences": entry["n_sentences"], "layers": list(target)}
    manifest["shards"] = [new if s is entry else s for s in manifest["shards"]]
    for e in manifest["sentences"]:
        if e.get("shard") == entry["file"]:
            e["shard"] = name
    write_manifest(path, manifest)   # the new shard is listed only now; then the old one goes
    old.unlink()
    return len(records)
