"""Reading a store: :class:`ImpactStore` (lazy, verified shards) yields :class:`StoredImpact` items."""
from __future__ import annotations

import json
import os
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import numpy as np
from safetensors import safe_open

from pmask.common.display import ImpactMap, RichDisplay
from pmask.common.errors import MissingSentenceError, StoreError
from pmask.common.files import sha256_file
from pmask.perturb.probes.attention_heads import select_head
from pmask.perturb.store.layout import MANIFEST, read_manifest
from pmask.perturb.store.store_settings import StoreSettings

__all__ = ["ImpactStore", "MissingSentenceError", "StoredImpact"]


@dataclass
class StoredImpact(RichDisplay):
    """One stored sentence. ``matrix[l, i, j]`` = impact of word j on word i (0-based words); a
    notebook shows the heatmap of its last stored layer (:meth:`impact_map` for another).

    ``cls_matrix`` is ``[L, n+1, n+1]`` with index 0 = [CLS] (None in a store written without
    it); ``matrix`` is its ``[:, 1:, 1:]`` view. ``layers`` are absolute hidden-state indices
    (0 = embeddings). ``input_ids``/``word_index``/``pieces`` describe the model input:
    ``word_index[t]`` is the word of piece t, -1 for special tokens.
    """

    index: int
    id: str
    words: list[str]
    matrix: np.ndarray
    cls_matrix: np.ndarray | None
    layers: tuple[int, ...]
    input_ids: np.ndarray
    word_index: np.ndarray
    pieces: list[str]
    num_layers: int | None = None
    heads: int | None = None        # stores that keep every attention head: matrices are [L, H, n, n]

    def __len__(self) -> int:
        return len(self.words)

    def layer_index(self, k: int) -> int:
        """Position in ``layers`` of layer ``k`` (absolute, or negative counted from the top)."""
        if k < 0 and self.num_layers is not None:
            k = k + self.num_layers + 1
        if k not in self.layers:
            raise StoreError(f"sentence {self.id}: layer {k} is not stored (stored: {list(self.layers)})")
        return self.layers.index(k)

    def layer(self, k: int = -1, *, cls: bool = False, head: str | int | None = None) -> np.ndarray:
        """``[n, n]`` word-level matrix of layer ``k`` (``[n+1, n+1]`` with ``cls=True``); in a store
        that keeps every head, ``head`` picks one (a number), or their ``mean`` (default) or ``max``."""
        pos = self.layer_index(k)
        if cls:
            if self.cls_matrix is None:
                raise StoreError(f"sentence {self.id}: store was written without the [CLS] row")
            return select_head(self.cls_matrix[pos], head)
        return select_head(self.matrix[pos], head)

    def word_pieces(self, k: int) -> list[str]:
        """The word pieces of word ``k`` (0-based)."""
        return [p for p, w in zip(self.pieces, self.word_index.tolist()) if w == k]

    def impact_map(self, layer: int | None = None, gold_heads: Any = None) -> ImpactMap:
        """Layer ``layer`` (default: the last one stored) as a displayable heatmap with the words."""
        k = self.layers[-1] if layer is None else layer
        return ImpactMap(words=list(self.words), F=self.layer(k), gold_heads=gold_heads,
                         title=f"sentence {self.id} · layer {self.layers[self.layer_index(k)]}")


class ImpactStore:
    """Read access to a store: ``store.get(position or id)``, ``len(store)``, iteration in
    corpus order (skipped sentences left out). Shards load lazily, at most ``cache_shards``
    open at a time; with ``verify`` each shard's sha256 is checked the first time it is used.
    """

    def __init__(self, path: Path, manifest: dict[str, Any], *, verify: bool = True, cache_shards: int = 2):
        self.path = path
        self.manifest = manifest
        self.verify = verify
        self._cache: OrderedDict[str, tuple[Any, dict[str, dict[str, Any]]]] = OrderedDict()
        self._cache_size = max(1, cache_shards)
        self._verified: set[str] = set()
        self._shards = {s["file"]: s for s in manifest["shards"]}
        self._entries = [e for e in manifest["sentences"] if "skipped" not in e]
        self._by_index = {e["index"]: e for e in self._entries}
        self._by_id: dict[str, dict[str, Any]] = {}
        for e in self._entries:
            self._by_id.setdefault(e["id"], e)   # duplicate ids: the first one wins
        self.settings = StoreSettings.from_manifest(manifest)
        if self.settings.layers_resolved is None:
            raise StoreError(f"{path / MANIFEST}: corrupt manifest: no resolved layers")
        self.layers: tuple[int, ...] = self.settings.layers_resolved
        self.num_layers: int | None = self.settings.num_layers
        self.include_cls: bool = bool(self.settings.include_cls)
        self.probe: str = str(self.settings.impact.probe)
        self.heads: int | None = self.settings.heads

    @classmethod
    def open(cls, path: str | os.PathLike, *, verify: bool = True, cache_shards: int = 2) -> ImpactStore:
        """Open the store at ``path`` for reading (no torch needed).

        Args:
            path: the store directory.
            verify: check each shard's sha256 against the manifest the first time it is read.
            cache_shards: how many shards to keep open.

        Returns:
            The store; sentences load lazily.

        Raises:
            StoreError: not a store directory, or an unreadable or unsupported manifest.

        Example:
            >>> store = ImpactStore.open("pud-store/")                 # doctest: +SKIP
            >>> store.get("n01001011").layer(-1).shape                 # doctest: +SKIP
            (19, 19)
        """
        path = Path(path)
        if not path.is_dir():
            why = "not a directory" if path.exists() else "no such directory"
            raise StoreError(f"{path}: not an impact store ({why})")
        return cls(path, read_manifest(path), verify=verify, cache_shards=cache_shards)

    # -- index

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def ids(self) -> list[str]:
        return [e["id"] for e in self._entries]

    @property
    def indices(self) -> list[int]:
        return [e["index"] for e in self._entries]

    @property
    def skipped(self) -> list[dict[str, Any]]:
        """Manifest entries (index, id, n, skipped=reason) of sentences not computed."""
        return [e for e in self.manifest["sentences"] if "skipped" in e]

    @property
    def complete(self) -> bool:
        return bool(self.manifest.get("complete"))

    def _entry(self, key: int | str) -> dict[str, Any]:
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            entry = self._by_index.get(int(key))
        elif isinstance(key, str):
            entry = self._by_id.get(key)
        else:
            raise TypeError(f"store keys are corpus positions (int) or sentence ids (str), not {type(key).__name__}")
        if entry is None:
            skipped = [e for e in self.skipped if e["index"] == key or e["id"] == key]
            why = f" (skipped: {skipped[0]['skipped']})" if skipped else ""
            raise MissingSentenceError(f"{self.path}: no stored sentence {key!r}{why}")
        return entry

    def has(self, key: int | str) -> bool:
        """Whether a matrix is stored for corpus position (int) or sentence id (str) ``key``."""
        try:
            self._entry(key)
        except (MissingSentenceError, TypeError):
            return False
        return True

    __contains__ = has

    # -- data

    def get(self, key: int | str, default: Any = None) -> StoredImpact | Any:
        """The sentence at corpus position ``key`` (int) or with sentence id ``key`` (str).

        Like ``dict.get``: ``default`` (None) when nothing is stored under ``key`` (a sentence
        skipped as too long, or not computed yet); ``store[key]`` raises instead.
        """
        try:
            entry = self._entry(key)
        except MissingSentenceError:
            return default
        return self._load(entry)

    def __getitem__(self, key: int | str) -> StoredImpact:
        """Like :meth:`get` but raises MissingSentenceError (a StoreError and KeyError)."""
        return self._load(self._entry(key))

    def _load(self, entry: dict[str, Any]) -> StoredImpact:
        handle, records = self._shard(entry["shard"])
        where = f"{self.path / entry['shard']}"
        rec = records.get(entry["key"])
        if rec is None:
            raise StoreError(f"{where}: corrupt shard: sentence {entry['id']} ({entry['key']}) missing")
        try:
            full = handle.get_tensor(f"{entry['key']}/impact")
            input_ids = handle.get_tensor(f"{entry['key']}/input_ids")
            word_index = handle.get_tensor(f"{entry['key']}/word_index")
        except Exception as err:   # SafetensorError has no public base class
            raise StoreError(f"{where}: corrupt shard: sentence {entry['id']}: {err}") from None
        n = len(rec["words"])
        side = n + 1 if self.include_cls else n
        heads = (self.heads,) if self.heads else ()
        held = self._shards[entry["shard"]].get("layers")   # a shard rewritten by an unfinished layer extension
        if held is not None and full.shape[:1] == (len(held),) and set(self.layers) <= set(held):
            full = full[[list(held).index(k) for k in self.layers]]
        if (full.dtype != np.float32 or full.shape != (len(self.layers), *heads, side, side) or n != entry["n"]
                or input_ids.shape != word_index.shape or len(rec["pieces"]) != len(input_ids)):
            raise StoreError(f"{where}: corrupt shard: sentence {entry['id']} has impact shape "
                             f"{full.shape} {full.dtype} for {n} words")
        return StoredImpact(
            index=entry["index"], id=entry["id"], words=list(rec["words"]),
            matrix=full[..., 1:, 1:] if self.include_cls else full,
            cls_matrix=full if self.include_cls else None,
            layers=self.layers, input_ids=input_ids, word_index=word_index,
            pieces=list(rec["pieces"]), num_layers=self.num_layers, heads=self.heads)

    def __iter__(self) -> Iterator[StoredImpact]:
        """Stored sentences in corpus order (skipped ones left out)."""
        for e in self._entries:
            yield self._load(e)

    def _shard(self, name: str) -> tuple[Any, dict[str, dict[str, Any]]]:
        if name in self._cache:
            self._cache.move_to_end(name)
            return self._cache[name]
        path = self.path / name
        info = self._shards.get(name)
        if info is None:
            raise StoreError(f"{self.path / MANIFEST}: corrupt manifest: shard {name} is not listed")
        if not path.is_file():
            raise StoreError(f"{path}: shard missing")
        if self.verify and name not in self._verified:
            if sha256_file(path) != info["sha256"]:
                raise StoreError(f"{path}: corrupt shard (sha256 differs from the manifest)")
            self._verified.add(name)
        try:
            handle = safe_open(str(path), framework="numpy")
            meta = handle.metadata() or {}
            records = {r["key"]: r for r in json.loads(meta["sentences"])}
        except Exception as err:   # SafetensorError, KeyError, JSONDecodeError
            raise StoreError(f"{path}: corrupt shard: {err}") from None
        self._cache[name] = (handle, records)
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return handle, records

    def __repr__(self) -> str:
        s = self.settings
        return (f"ImpactStore({str(self.path)!r}, {len(self)} sentences, model={s.model!r}, "
                f"probe={s.impact.probe!r}, metric={s.impact.metric!r}, layers={list(self.layers)})")
