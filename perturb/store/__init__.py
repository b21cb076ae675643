"""The on-disk impact store: a directory of safetensors shards plus ``manifest.json``.

Modules: :mod:`.layout` (file names, the manifest), :mod:`.store_settings` (what the numbers depend on),
:mod:`.plan` (resume checks, what is left), :mod:`.lock` (the writer's lock and note), :mod:`.writer`,
:mod:`.reader`, :mod:`.export`, :mod:`.state` (finished or not, who writes it, how to finish it),
:mod:`.info` (what a store holds, for ``pmask info``).
Nothing here imports torch: reading a store needs numpy and safetensors only.

Layout (format version 1)::

    out_dir/
      manifest.json              settings, versions, corpus fingerprint and selection, shard list, sentence index
      shard-00000.safetensors    up to ``shard_size`` sentences or ``shard_seconds`` of work each
      shard-00001.safetensors
      ...
      .writer.json               while a process writes the store: its pid, host and start (see .lock)

Each stored sentence with corpus position ``p`` has key ``s{p}`` and three tensors in its shard:

- ``s{p}/impact``     float32 ``[L, n+1, n+1]`` (include_cls layout: index 0 = [CLS], so
  ``[:, 1:, 1:]`` is the word-level matrix; ``F[l, i, j]`` = impact of word j on word i),
  or ``[L, n, n]`` in a store written with ``include_cls=False``; a store of a probe that keeps
  every attention head (manifest ``"heads": H``) holds ``[L, H, n+1, n+1]``;
- ``s{p}/input_ids``  int64 ``[P]`` the model input, special tokens included;
- ``s{p}/word_index`` int64 ``[P]`` word of each piece, ``-1`` for special tokens.

The manifest's ``"probe"`` names how the numbers were read out of the model
(:data:`pmask.common.options.PROBES`); a manifest without it (stores written before probes
existed) holds ``pair``, perturbed masking.

Strings cannot be tensors, so each shard's safetensors metadata (a str -> str dict) holds
``"sentences"``: a JSON list (``ensure_ascii=True``, so any Unicode survives, even lone
surrogates) of ``{"key", "index", "id", "words", "pieces"}`` where ``pieces`` are the token
strings of ``input_ids``.

Writes are atomic: a shard is written to ``.<name>.tmp`` and ``os.replace``d, then the
manifest is rewritten the same way; anything not referenced by the manifest (temp files, a
shard written just before a crash) is removed on resume. Nothing is pickled.
"""
from __future__ import annotations

from pmask.common.errors import MissingSentenceError
from pmask.common.options import RANDOM_PREFIX, resolve_layers
from pmask.perturb.store.export import EXPORT_FORMATS, export_store
from pmask.perturb.store.layout import (
    DEFAULT_SHARD_BYTES,
    DEFAULT_SHARD_SECONDS,
    DEFAULT_SHARD_SIZE,
    FORMAT,
    FORMAT_VERSION,
    MANIFEST,
    SHARD_RE,
    TMP_PREFIX,
    TMP_SUFFIX,
    read_manifest,
)
from pmask.perturb.store.plan import plan_store
from pmask.perturb.store.reader import ImpactStore, StoredImpact
from pmask.perturb.store.store_settings import (
    METRIC_DEFINITIONS,
    SUBWORD_DEFINITIONS,
    CorpusInfo,
    StoreSettings,
    settings_mismatches,
)
from pmask.perturb.store.writer import StoreWriter

__all__ = [
    "DEFAULT_SHARD_BYTES", "DEFAULT_SHARD_SECONDS", "DEFAULT_SHARD_SIZE", "FORMAT", "FORMAT_VERSION", "MANIFEST",
    "METRIC_DEFINITIONS", "RANDOM_PREFIX", "SHARD_RE", "SUBWORD_DEFINITIONS", "TMP_PREFIX", "TMP_SUFFIX",
    "EXPORT_FORMATS", "CorpusInfo", "ImpactStore", "MissingSentenceError", "StoreSettings", "StoreWriter",
    "StoredImpact",
    "export_store", "plan_store", "read_manifest", "resolve_layers", "settings_mismatches",
]
