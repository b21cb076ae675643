"""Writing a store: :class:`StoreWriter` appends sentences shard by shard, every write atomic."""
from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import safetensors.numpy

from pmask.common.errors import OutputError, StoreError
from pmask.common.files import atomic_write
from pmask.common.output_checks import make_output_folder
from pmask.perturb.store.layout import (
    DEFAULT_SHARD_BYTES,
    DEFAULT_SHARD_SECONDS,
    DEFAULT_SHARD_SIZE,
    FORMAT,
    FORMAT_VERSION,
    PARTIAL,
    clean_unreferenced,
    now,
    our_files,
    read_manifest,
    shard_metadata,
    shard_name,
    shard_number,
    write_manifest,
)
from pmask.perturb.store.lock import DirLock, lock_dir, unlock
from pmask.perturb.store.parts import merge_parts, remove_parts, write_part
from pmask.perturb.store.plan import check_existing, remaining
from pmask.perturb.store.store_settings import CorpusInfo, StoreSettings

logger = logging.getLogger(__name__)


@dataclass
class _Pending:
    tensors: dict[str, np.ndarray] = field(default_factory=dict)
    records: list[dict[str, Any]] = field(default_factory=list)     # shard metadata per sentence
    entries: list[dict[str, Any]] = field(default_factory=list)     # manifest entries (incl. skips)
    nbytes: int = 0


def monotonic() -> float:
    """The clock that times a shard's work (a module attribute, so tests can replace it)."""
    return time.monotonic()


class StoreWriter:
    """Appends sentences to a store shard by shard; every file write is atomic.

    Use as a context manager: on leaving (also by an exception such as KeyboardInterrupt) the
    sentences finished so far are flushed, so a resumed run starts after them.

    A shard is closed (written, then listed) once it holds ``shard_size`` sentences, its matrices
    reach ``shard_bytes``, or ``shard_seconds`` of work have passed since the last shard was closed
    (None: no time bound). A sentence can take longer than that (a long one, a big model): the
    engine calls :meth:`tick` between its batches, which closes the shard when it is due and keeps
    the sentence under way (``partial.safetensors``, continued by a resumed run), so a hard kill
    (SIGKILL, power loss), which flushes nothing, loses at most ``shard_seconds`` of work plus one
    batch. ``clock`` (seconds, monotonic) times it.

    With ``world_size > 1`` (one writer per rank of a distributed run) shard numbers are
    ``base + rank + k * world_size`` and each flush rewrites this rank's index part instead of
    the manifest; rank 0 merges the parts with :meth:`merge_parts` (see :mod:`.parts`).
    """

    def __init__(self, path: Path, manifest: dict[str, Any], *, shard_size: int = DEFAULT_SHARD_SIZE,
                 shard_bytes: int = DEFAULT_SHARD_BYTES, shard_seconds: float | None = DEFAULT_SHARD_SECONDS,
                 rank: int = 0, world_size: int = 1, clock: Callable[[], float] | None = None):
        if shard_size < 1:
            raise ValueError("shard_size must be >= 1")
        if shard_seconds is not None and not shard_seconds >= 0:
            raise ValueError("shard_seconds must be >= 0 (or None: no time bound)")
        if not 0 <= rank < world_size:
            raise ValueError(f"rank {rank} outside 0..{world_size - 1}")
        self.path = path
        self.manifest = manifest
        self.shard_size = shard_size
        self.shard_bytes = shard_bytes
        self.shard_seconds = shard_seconds
        self._clock = clock or monotonic
        self._shard_started = self._clock()
        self._pending = _Pending()
        self._done = {e["index"] for e in manifest["sentences"]}
        self.settings = StoreSettings.from_manifest(manifest)
        seqs = [shard_number(s["file"]) for s in manifest["shards"]]
        self.rank, self.world_size = rank, world_size
        self._next_shard = (max(seqs) + 1 if seqs else 0) + rank
        self._part: tuple[list[dict[str, Any]], list[dict[str, Any]]] | None = ([], []) if world_size > 1 else None
        self._lock: DirLock | None = None
        self._partial: int | None = None   # the corpus position whose unfinished work PARTIAL holds

    # -- opening

    @classmethod
    def open(cls, out_dir: str | os.PathLike, settings: StoreSettings, corpus: CorpusInfo, *,
             resume: bool = False, overwrite: bool = False, versions: dict[str, str] | None = None,
             run_info: dict[str, Any] | None = None, shard_size: int = DEFAULT_SHARD_SIZE,
             shard_bytes: int = DEFAULT_SHARD_BYTES, shard_seconds: float | None = DEFAULT_SHARD_SECONDS,
             world_size: int = 1, clock: Callable[[], float] | None = None) -> StoreWriter:
        """Create, replace (``overwrite``) or resume (``resume``) the store at ``out_dir``.

        Takes the directory's lock until :meth:`close` (see :mod:`.lock`). On resume, index parts left by an
        interrupted distributed run are merged (verified) and unfinished files removed. With
        ``world_size > 1`` this is rank 0's writer; the other ranks :meth:`join` afterwards.
        """
        path = Path(out_dir)
        if settings.layers_resolved is None:
            raise ValueError("StoreWriter needs settings.layers_resolved")
        if path.exists() and not path.is_dir():
            raise StoreError(f"{path}: exists and is not a directory")
        try:
            make_output_folder(path)   # the store folder only, never its parents (like any output)
        except OutputError as err:
            raise StoreError(str(err)) from None
        lock = lock_dir(path)
        try:
            manifest, changed, parts = cls._prepare(path, settings, corpus, resume, overwrite, versions, run_info)
            writer = cls(path, manifest, shard_size=shard_size, shard_bytes=shard_bytes, shard_seconds=shard_seconds,
                         world_size=world_size, clock=clock)
            if changed:
                writer._write_manifest()
            remove_parts(parts)
        except OSError as err:
            unlock(lock)
            raise StoreError(f"{path}: cannot write store: {err.strerror or err}") from None
        except BaseException:
            unlock(lock)
            raise
        writer._lock = lock
        return writer

    @classmethod
    def join(cls, out_dir: str | os.PathLike, *, rank: int, world_size: int, shard_size: int = DEFAULT_SHARD_SIZE,
             shard_bytes: int = DEFAULT_SHARD_BYTES, shard_seconds: float | None = DEFAULT_SHARD_SECONDS,
             clock: Callable[[], float] | None = None) -> StoreWriter:
        """Rank ``rank``'s writer (rank > 0) once rank 0 has opened the store: no lock, no manifest writes."""
        path = Path(out_dir)
        return cls(path, read_manifest(path), shard_size=shard_size, shard_bytes=shard_bytes,
                   shard_seconds=shard_seconds, rank=rank, world_size=world_size, clock=clock)

    @classmethod
    def _prepare(cls, path: Path, settings: StoreSettings, corpus: CorpusInfo, resume: bool, overwrite: bool,
                 versions: dict[str, str] | None,
                 run_info: dict[str, Any] | None) -> tuple[dict[str, Any], bool, list[Path]]:
        """The manifest to write into, whether it differs from the one on disk, and the merged
        index parts (to delete once the manifest is written)."""
        manifest = check_existing(path, settings, corpus, resume, overwrite)
        run = {"started": now(), "versions": versions or {}, **(run_info or {})}
        if manifest is None:
            for p in our_files(path):         # overwrite: only files a store consists of
                p.unlink()
            return {
                "format": FORMAT,
                "format_version": FORMAT_VERSION,
                "created": now(),
                "updated": now(),
                "complete": corpus.n_sentences == 0,
                **settings.manifest_fields(),
                "versions": versions or {},
                "corpus": asdict(corpus),
                "runs": [run],
                "shards": [],
                "sentences": [],
            }, True, []
        before = json.dumps(manifest, sort_keys=True)
        parts = merge_parts(path, manifest)   # what the ranks of an interrupted distributed run finished
        clean_unreferenced(path, manifest)
        if corpus.n_sentences > manifest["corpus"]["n_sentences"]:   # extended (e.g. larger --limit)
            manifest["corpus"] = asdict(corpus)
            manifest["complete"] = False
        stored = StoreSettings.from_manifest(manifest)
        # fill in what the store did not know yet; the stored layers stay (a subset may be requested)
        known: dict[str, Any] = {k: getattr(settings, k) for k in (f.name for f in fields(settings))
                                 if getattr(stored, k) is None and getattr(settings, k) is not None
                                 and k not in ("layers", "layers_resolved")}
        missing: dict[str, Any] = {k: v for k, v in settings.impact.as_dict().items()
                                   if getattr(stored.impact, k) is None and v is not None}
        known["impact"] = replace(stored.impact, **missing)
        if stored.layers_resolved is None:
            known["layers_resolved"] = settings.layers_resolved
        manifest.update(replace(stored, **known).manifest_fields())
        if remaining(manifest, corpus.n_sentences):   # a finished store stays untouched
            manifest.setdefault("runs", []).append(run)
        return manifest, json.dumps(manifest, sort_keys=True) != before, parts

    # -- state

    @property
    def remaining(self) -> list[int]:
        """Corpus positions not yet stored or recorded as skipped (pending ones count as done)."""
        return [i for i in range(self.manifest["corpus"]["n_sentences"]) if i not in self._done]

    # -- adding

    def add(self, index: int, sentence_id: str, words: Sequence[str], matrix: np.ndarray, *,
            input_ids: Sequence[int], word_index: Sequence[int], pieces: Sequence[str]) -> None:
        """Queue sentence ``index``; ``matrix`` is ``[L, n+1, n+1]`` (``[L, n, n]`` without CLS; ``[L, H, ...]``
        in a store that keeps every attention head)."""
        self._check_new(index)
        n = len(words)
        side = n + 1 if self.settings.include_cls else n
        assert self.settings.layers_resolved is not None   # a writer's settings are resolved
        heads = (self.settings.heads,) if self.settings.heads else ()
        expected = (len(self.settings.layers_resolved), *heads, side, side)
        matrix = np.ascontiguousarray(matrix, dtype=np.float32)
        if matrix.shape != expected:
            raise StoreError(f"sentence {sentence_id}: impact matrix has shape {matrix.shape}, expected {expected}")
        if len(input_ids) != len(word_index) or len(pieces) != len(input_ids):
            raise StoreError(f"sentence {sentence_id}: alignment lengths differ "
                             f"({len(input_ids)} ids, {len(word_index)} word indices, {len(pieces)} pieces)")
        key = f"s{index}"
        p = self._pending
        p.tensors[f"{key}/impact"] = matrix
        p.tensors[f"{key}/input_ids"] = np.asarray(input_ids, dtype=np.int64)
        p.tensors[f"{key}/word_index"] = np.asarray(word_index, dtype=np.int64)
        p.records.append({"key": key, "index": index, "id": str(sentence_id),
                          "words": list(words), "pieces": list(pieces)})
        p.entries.append({"index": index, "id": str(sentence_id), "n": n, "key": key})
        p.nbytes += matrix.nbytes
        self._done.add(index)
        if len(p.records) >= self.shard_size or p.nbytes >= self.shard_bytes:
            self.flush()
        else:
            self._flush_if_due()

    def skip(self, index: int, sentence_id: str, n_words: int, reason: str = "too_long") -> None:
        """Record that sentence ``index`` was not computed (e.g. longer than the model's limit)."""
        self._check_new(index)
        self._pending.entries.append({"index": index, "id": str(sentence_id), "n": n_words,
                                      "skipped": reason})
        self._done.add(index)
        self._flush_if_due()

    def tick(self, under_way: Callable[[], tuple[int, dict[str, np.ndarray], dict[str, Any]] | None] | None = None,
             *, now: bool = False) -> None:
        """Between two batches of model work: once ``shard_seconds`` have passed since the last shard was
        closed, close one and keep the sentence under way, ``under_way()``: its corpus position, its arrays
        and what must match to continue it (None: no sentence is under way), in ``partial.safetensors``
        (one process only: a distributed run's ranks keep finished sentences). ``now``: whether due or not
        (an interrupted run keeps its work).

        Example:
            >>> writer.tick(lambda: (7, {"values": values}, {"layers": [12]}))   # doctest: +SKIP
        """
        if not now and (self.shard_seconds is None or self._clock() - self._shard_started < self.shard_seconds):
            return
        self.flush()
        state = under_way() if under_way is not None and self._part is None else None
        if state is None:
            return
        index, arrays, meta = state
        data = safetensors.numpy.save(dict(arrays), metadata={"pmask_partial": json.dumps({**meta, "index": index})})
        try:
            atomic_write(self.path / PARTIAL, data)
        except (OSError, OutputError) as err:
            raise StoreError(f"{self.path}: cannot write store: {getattr(err, 'strerror', None) or err}") from None
        self._partial = index

    def read_partial(self) -> tuple[int, dict[str, np.ndarray], dict[str, Any]] | None:
        """What :meth:`tick` kept of a sentence under way, for a sentence not stored yet: ``(position,
        arrays, meta)``; None when there is none (or it cannot be read: it is then only recomputed)."""
        path = self.path / PARTIAL
        if self._part is not None or not path.is_file():
            return None
        try:
            with safetensors.safe_open(str(path), framework="numpy") as f:
                meta = json.loads((f.metadata() or {})["pmask_partial"])
                arrays = {k: f.get_tensor(k) for k in f.keys()}  # noqa: SIM118 - safe_open is no dict
            index = int(meta.pop("index"))
        except Exception as err:  # noqa: BLE001 - a damaged partial file costs only its recomputation
            logger.warning("%s: ignoring %s (%s)", self.path, PARTIAL, err)
            return None
        if index in self._done:
            return None
        self._partial = index
        return index, arrays, meta

    def _flush_if_due(self) -> None:
        """Close the shard once ``shard_seconds`` of work have passed since the last one was closed."""
        if self.shard_seconds is not None and self._clock() - self._shard_started >= self.shard_seconds:
            self.flush()

    def _check_new(self, index: int) -> None:
        if index in self._done:
            raise StoreError(f"{self.path}: sentence at position {index} is already stored")
        if not 0 <= index < self.manifest["corpus"]["n_sentences"]:
            raise StoreError(f"{self.path}: sentence position {index} is outside the corpus")

    # -- writing

    def flush(self) -> None:
        """Write the queued sentences as one shard (if any), then rewrite the manifest (this rank's
        index part in a distributed run), so the shard is listed only once it is complete."""
        p = self._pending
        self._shard_started = self._clock()   # the next shard's work starts now
        if not p.entries:
            return
        try:
            shards = []
            if p.records:
                name = shard_name(self._next_shard)
                metadata = shard_metadata(json.dumps(p.records, ensure_ascii=True))
                data = safetensors.numpy.save(p.tensors, metadata=metadata)
                atomic_write(self.path / name, data)
                self._next_shard += self.world_size
                shards.append({"file": name, "sha256": hashlib.sha256(data).hexdigest(),
                               "bytes": len(data), "n_sentences": len(p.records)})
                for e in p.entries:
                    if "key" in e:
                        e["shard"] = name
            self._pending = _Pending()
            if self._part is None:
                self.manifest["shards"].extend(shards)
                self.manifest["sentences"].extend(p.entries)
                self.manifest["sentences"].sort(key=lambda e: e["index"])
                self._write_manifest()
            else:
                self._part[0].extend(shards)
                self._part[1].extend(p.entries)
                write_part(self.path, self.rank, *self._part)
        except (OSError, OutputError) as err:   # atomic_write reports OS errors as OutputError
            raise StoreError(f"{self.path}: cannot write store: {getattr(err, 'strerror', None) or err}") from None
        if self._partial is not None and self._partial in self._done and self._part is None:
            (self.path / PARTIAL).unlink(missing_ok=True)   # its sentence is listed now
            self._partial = None
        logger.debug("%s: flushed %d sentences", self.path, len(p.entries))

    def merge_parts(self) -> None:
        """Rank 0, after every rank has flushed: merge all index parts into the manifest and write it."""
        parts = merge_parts(self.path, self.manifest)
        self._done |= {e["index"] for e in self.manifest["sentences"]}
        self._part = ([], []) if self._part is not None else None
        self._write_manifest()
        remove_parts(parts)

    def _write_manifest(self) -> None:
        m = self.manifest
        m["complete"] = len(m["sentences"]) == m["corpus"]["n_sentences"]
        write_manifest(self.path, m)

    def close(self) -> None:
        """Flush and release the store (idempotent)."""
        try:
            self.flush()
        finally:
            unlock(self._lock)
            self._lock = None

    def __enter__(self) -> StoreWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
            return
        try:          # keep the finished sentences of an interrupted run
            self.close()
        except Exception as err:   # the original exception matters more
            logger.warning("could not save finished sentences after %s: %s", exc_type.__name__, err)
