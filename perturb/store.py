"""The on-disk impact store: a directory of safetensors shards plus ``manifest.json``.

Layout (format version 1)::

    out_dir/
      manifest.json              settings, versions, corpus fingerprint, shard list, sentence index
      shard-00000.safetensors    up to ``shard_size`` sentences each
      shard-00001.safetensors
      ...

Each stored sentence with corpus position ``p`` has key ``s{p}`` and three tensors in its shard:

- ``s{p}/impact``     float32 ``[L, n+1, n+1]`` (include_cls layout: index 0 = [CLS], so
  ``[:, 1:, 1:]`` is the word-level matrix; ``F[l, i, j]`` = impact of word j on word i),
  or ``[L, n, n]`` in a store written with ``include_cls=False``;
- ``s{p}/input_ids``  int64 ``[P]`` the model input, special tokens included;
- ``s{p}/word_index`` int64 ``[P]`` word of each piece, ``-1`` for special tokens.

Strings cannot be tensors, so each shard's safetensors metadata (a str -> str dict) holds
``"sentences"``: a JSON list (``ensure_ascii=True``, so any Unicode survives, even lone
surrogates) of ``{"key", "index", "id", "words", "pieces"}`` where ``pieces`` are the token
strings of ``input_ids``.

Writes are atomic: a shard is written to ``.<name>.tmp`` and ``os.replace``d, then the
manifest is rewritten the same way; anything not referenced by the manifest (temp files, a
shard written just before a crash) is removed on resume. Nothing is pickled.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import logging
import os
import re
from collections import OrderedDict
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import numpy as np
import safetensors.numpy
from safetensors import safe_open

from pmask.errors import StoreError
from pmask.files import atomic_write, sha256_file

try:
    import fcntl
except ImportError:   # Windows: writers take no lock
    fcntl = None  # type: ignore[assignment]

logger = logging.getLogger(__name__)

FORMAT = "pmask-impact-store"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
SHARD_RE = re.compile(r"^shard-(\d{5,})\.safetensors$")
TMP_PREFIX = "."
TMP_SUFFIX = ".tmp"
DEFAULT_SHARD_SIZE = 64
DEFAULT_SHARD_BYTES = 256 * 2**20   # a shard is also closed once its matrices pass this size
RANDOM_PREFIX = "random:"            # as in pmask.perturb.model (not imported: this module needs no torch)


# --------------------------------------------------------------------------- settings


# Written into every manifest so a store documents what its numbers mean.
METRIC_DEFINITIONS = {
    "dist": "Euclidean distance between H(x without word i)_p and H(x without words i, j)_p at each piece p of word i",
    "cos": "1 - cosine similarity between H(x without word i)_p and H(x without words i, j)_p at each piece p of word i",
    "prob": "p(original piece at p | x without word i) - p(original piece at p | x without words i, j) under the "
            "MLM head applied to the layer's state, at each piece p of word i",
}
SUBWORD_DEFINITIONS = {
    "avg": "mean over the pieces of word i of each piece's own value (not the value of averaged states)",
    "first": "the value at the first piece of word i",
    "sum": "sum over the pieces of word i",
    "max": "maximum over the pieces of word i",
}


@dataclass(frozen=True)
class StoreSettings:
    """What determines the numbers in a store; a resumed store must match on all of them.

    ``None`` means "not known yet" (e.g. before the model is loaded) and is not compared.
    ``layers`` are the layers as requested (ints, negative from the top, or ``"all"``);
    ``layers_resolved`` the absolute hidden-state indices (0 = embeddings, num_layers = last).
    """

    model: str
    metric: str = "dist"
    subword: str = "avg"
    layers: tuple[int, ...] | str = (-1,)
    include_cls: bool = True
    revision: str | None = None                # as requested
    commit: str | None = None                  # resolved commit hash of the weights, when known
    random_init: bool | None = None
    dtype: str | None = None
    tokenizer: dict[str, Any] | None = None
    layers_resolved: tuple[int, ...] | None = None
    num_layers: int | None = None
    max_length: int | None = None
    model_info: dict[str, Any] | None = None   # LoadedModel.describe(), recorded, not compared
    tokenize: str = "words"                    # pmask.perturb.surface.TOKENIZE_MODES

    def __post_init__(self) -> None:
        if self.model and self.model.startswith(RANDOM_PREFIX):   # the CLI's random:NAME
            object.__setattr__(self, "model", self.model[len(RANDOM_PREFIX):])
            object.__setattr__(self, "random_init", True)

    def manifest_fields(self) -> dict[str, Any]:
        """The top-level manifest entries ``model``, ``metric``, ``subword``, ``include_cls``, ``layers``."""
        return {
            "model": {"name": self.model, "revision": self.revision, "commit": self.commit,
                      "random_init": self.random_init,
                      "dtype": self.dtype, "num_layers": self.num_layers, "max_length": self.max_length,
                      "tokenizer": self.tokenizer, "describe": self.model_info},
            "metric": self.metric,
            "subword": self.subword,
            "definitions": {"metric": METRIC_DEFINITIONS.get(self.metric), "subword": SUBWORD_DEFINITIONS.get(self.subword),
                            "matrix": "matrix[l, i, j] = impact of word j on word i at layers.resolved[l] (0 = embeddings)"},
            "include_cls": self.include_cls,
            "tokenize": self.tokenize,
            "layers": {"requested": self.layers if isinstance(self.layers, str) else list(self.layers),
                       "resolved": None if self.layers_resolved is None else list(self.layers_resolved)},
        }

    @classmethod
    def from_manifest(cls, manifest: dict[str, Any]) -> "StoreSettings":
        model, layers = manifest["model"], manifest["layers"]
        requested = layers.get("requested")
        resolved = layers.get("resolved")
        return cls(model=model.get("name"), metric=manifest.get("metric"), subword=manifest.get("subword"),
                   layers=requested if isinstance(requested, str) or requested is None else tuple(requested),
                   include_cls=manifest.get("include_cls", True), revision=model.get("revision"),
                   commit=model.get("commit"),
                   random_init=model.get("random_init"), dtype=model.get("dtype"),
                   tokenizer=model.get("tokenizer"), num_layers=model.get("num_layers"),
                   layers_resolved=None if resolved is None else tuple(resolved),
                   max_length=model.get("max_length"), model_info=model.get("describe"),
                   tokenize=manifest.get("tokenize", "words"))


@dataclass(frozen=True)
class CorpusInfo:
    """Identity of the sentence list: ``sentences_sha256`` hashes every (id, words) pair in order,
    ``digests`` holds a short hash of each pair.

    On resume the sentences are compared (impacts depend on the words alone, so re-exporting a
    corpus with other annotations keeps a store valid). A longer list whose first sentences are the
    stored ones extends the store (e.g. a larger ``--limit``); a shorter prefix needs nothing new.
    The file ``path`` and its ``sha256`` are recorded for provenance.
    """

    n_sentences: int
    sentences_sha256: str
    path: str | None = None
    sha256: str | None = None
    digests: tuple[str, ...] = ()

    @classmethod
    def of(cls, sentences: Sequence[Any], path: str | os.PathLike | None = None) -> "CorpusInfo":
        """Fingerprint ``sentences`` (objects with ``.id`` and ``.words``), hashing ``path`` if given."""
        h = hashlib.sha256()
        digests = []
        for s in sentences:
            item = json.dumps([str(s.id), list(s.words)], ensure_ascii=True).encode("ascii")
            h.update(item)
            h.update(b"\n")
            digests.append(hashlib.sha256(item).hexdigest()[:16])
        file_sha = None
        if path is not None:
            path = Path(path)
            if path.is_file():
                file_sha = sha256_file(path)
            path = str(path.resolve())
        return cls(len(sentences), h.hexdigest(), path, file_sha, tuple(digests))

    def describe(self) -> str:
        where = f" from {self.path}" if self.path else ""
        return f"{self.n_sentences} sentences{where} (sha256 {self.sentences_sha256[:12]})"


def resolve_layers(layers: Iterable[int] | str, num_layers: int) -> tuple[int, ...]:
    """Absolute hidden-state indices: 0 = embeddings, 1..num_layers = layer outputs, -1 = last.

    ``"all"`` means ``0..num_layers``. StoreError for an index outside the model.
    """
    if isinstance(layers, str):
        if layers != "all":
            raise StoreError(f"layers must be integers or 'all', not {layers!r}")
        return tuple(range(num_layers + 1))
    out = []
    for k in layers:
        a = int(k) + num_layers + 1 if k < 0 else int(k)
        if not 0 <= a <= num_layers:
            raise StoreError(f"layer {k} out of range for a model with {num_layers} layers "
                             f"(0 = embeddings ... {num_layers} = last)")
        out.append(a)
    return tuple(out)


def _norm_model(name: str) -> str:
    """Local model directories as absolute paths (so ``./m`` and ``/x/m`` compare equal); hub names as given."""
    p = Path(name).expanduser()
    return str(p.resolve()) if p.exists() else name


def _jsonable(x: Any) -> Any:
    return json.loads(json.dumps(x, default=str))


def settings_mismatches(stored: StoreSettings, requested: StoreSettings) -> list[str]:
    """One ``"field: store has X, requested Y"`` string per compared field that differs.

    Requested layers that are a subset of the stored ones are accepted (a resumed run keeps
    computing the stored layers, so every sentence in a store has the same layers).
    """
    out: list[str] = []

    def differ(name: str, a: Any, b: Any) -> None:
        if a is None or b is None:
            return
        if _jsonable(a) != _jsonable(b):
            out.append(f"{name}: store has {a!r}, requested {b!r}")

    differ("model", _norm_model(stored.model) if stored.model else None, _norm_model(requested.model))
    for name in ("revision", "commit", "random_init", "dtype", "metric", "subword", "include_cls", "tokenizer",
                 "tokenize"):
        differ(name, getattr(stored, name), getattr(requested, name))
    # Layers: compare absolute indices when both sides know them or can work them out from the
    # stored model's depth, else the requested form.
    mine = requested.layers_resolved
    num_layers = requested.num_layers or stored.num_layers
    if mine is None and num_layers is not None:
        try:
            mine = resolve_layers(requested.layers, int(num_layers))
        except StoreError as err:
            out.append(f"layers: {err}")
            return out
    theirs = stored.layers_resolved
    if mine is not None and theirs is not None:
        if not set(mine) <= set(theirs):
            out.append(f"layers: store has {list(theirs)}, requested {list(mine)}")
    else:
        differ("layers", stored.layers, requested.layers)
    return out


# --------------------------------------------------------------------------- file helpers


def _lock_dir(path: Path) -> int | None:
    """Exclusive advisory lock on the store directory (released by the OS if the process dies)."""
    if fcntl is None:
        return None
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise StoreError(f"{path}: another process is writing this store") from None
    return fd


def _unlock(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)   # closing the descriptor releases the flock


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def read_manifest(path: str | os.PathLike) -> dict[str, Any]:
    """The parsed ``manifest.json`` of store ``path``; StoreError if absent or not a store."""
    mf = Path(path) / MANIFEST
    try:
        text = mf.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise StoreError(f"{path}: not an impact store (no {MANIFEST})") from None
    except OSError as err:
        raise StoreError(f"{mf}: cannot read: {err.strerror or err}") from None
    try:
        manifest = json.loads(text)
    except json.JSONDecodeError as err:
        raise StoreError(f"{mf}:{err.lineno}: corrupt manifest: {err.msg}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise StoreError(f"{mf}: not a pmask impact store manifest")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise StoreError(f"{mf}: store format version {manifest.get('format_version')!r} "
                         f"is not supported (this pmask reads version {FORMAT_VERSION})")
    for key in ("model", "layers", "corpus", "shards", "sentences"):
        if key not in manifest:
            raise StoreError(f"{mf}: corrupt manifest: no {key!r} field")
    return manifest


def _our_files(path: Path) -> list[Path]:
    return [p for p in path.iterdir()
            if p.name == MANIFEST or SHARD_RE.match(p.name)
            or (p.name.startswith(TMP_PREFIX) and p.name.endswith(TMP_SUFFIX))]


def _holds_nothing(path: Path) -> bool:
    """A store that was created but never got a sentence (e.g. interrupted during model start-up)."""
    if not (path / MANIFEST).is_file() or any(p.name != MANIFEST for p in path.iterdir()):
        return False
    try:
        manifest = read_manifest(path)
    except StoreError:
        return False
    return not manifest["sentences"] and not manifest["shards"]


def _check_existing(path: Path, settings: StoreSettings, corpus: CorpusInfo,
                    resume: bool, overwrite: bool) -> dict[str, Any] | None:
    """The manifest to resume from, None to start afresh; StoreError when neither is allowed."""
    if path.exists() and not path.is_dir():
        raise StoreError(f"{path}: exists and is not a directory")
    if not path.exists() or not any(path.iterdir()) or overwrite or _holds_nothing(path):
        return None
    if not resume:
        raise StoreError(f"{path} exists; use --resume or choose another directory "
                         f"(or --overwrite to replace it)")
    manifest = read_manifest(path)
    problems = settings_mismatches(StoreSettings.from_manifest(manifest), settings)
    stored_corpus = manifest["corpus"]
    if (stored_corpus.get("sentences_sha256") != corpus.sentences_sha256
            or stored_corpus.get("n_sentences") != corpus.n_sentences) and not _same_prefix(stored_corpus, corpus):
        theirs = CorpusInfo(stored_corpus.get("n_sentences", 0), stored_corpus.get("sentences_sha256", ""),
                            stored_corpus.get("path"))
        problems.append(f"corpus: store has {theirs.describe()}, requested {corpus.describe()}")
    if problems:
        raise StoreError(f"{path}: store was made with other settings: " + "; ".join(problems))
    return manifest


def _same_prefix(stored_corpus: dict[str, Any], corpus: CorpusInfo) -> bool:
    """True when one sentence list is a prefix of the other (a larger or smaller ``--limit``)."""
    stored = tuple(stored_corpus.get("digests") or ())
    if len(stored) != stored_corpus.get("n_sentences") or not corpus.digests:
        return False
    k = min(len(stored), len(corpus.digests))
    return stored[:k] == corpus.digests[:k]


def _remaining(manifest: dict[str, Any] | None, n_sentences: int) -> list[int]:
    done = {e["index"] for e in manifest["sentences"]} if manifest else set()
    return [i for i in range(n_sentences) if i not in done]


def plan_store(out_dir: str | os.PathLike, sentences: Sequence[Any], settings: StoreSettings, *,
               corpus_path: str | os.PathLike | None = None, resume: bool = False,
               overwrite: bool = False) -> list[int]:
    """Corpus positions still to compute in ``out_dir``; writes nothing, needs no model.

    Raises StoreError when the directory is in use and neither ``resume`` nor ``overwrite``
    is set, or when the store there was made with other settings or another corpus.
    An empty list means a finished store: the caller need not even load the model.
    """
    corpus = CorpusInfo.of(sentences, corpus_path)
    manifest = _check_existing(Path(out_dir), settings, corpus, resume, overwrite)
    return _remaining(manifest, corpus.n_sentences)


# --------------------------------------------------------------------------- writing


@dataclass
class _Pending:
    tensors: dict[str, np.ndarray] = field(default_factory=dict)
    records: list[dict[str, Any]] = field(default_factory=list)     # shard metadata per sentence
    entries: list[dict[str, Any]] = field(default_factory=list)     # manifest entries (incl. skips)
    nbytes: int = 0


class StoreWriter:
    """Appends sentences to a store shard by shard; every file write is atomic.

    Use as a context manager: on leaving (also by an exception such as KeyboardInterrupt) the
    sentences finished so far are flushed, so a resumed run starts after them.
    """

    def __init__(self, path: Path, manifest: dict[str, Any], *, shard_size: int = DEFAULT_SHARD_SIZE,
                 shard_bytes: int = DEFAULT_SHARD_BYTES):
        if shard_size < 1:
            raise ValueError("shard_size must be >= 1")
        self.path = path
        self.manifest = manifest
        self.shard_size = shard_size
        self.shard_bytes = shard_bytes
        self._pending = _Pending()
        self._done = {e["index"] for e in manifest["sentences"]}
        self.settings = StoreSettings.from_manifest(manifest)
        seqs = [int(SHARD_RE.match(s["file"]).group(1)) for s in manifest["shards"]]
        self._next_shard = max(seqs) + 1 if seqs else 0
        self._lock: int | None = None

    # -- opening

    @classmethod
    def open(cls, out_dir: str | os.PathLike, settings: StoreSettings, corpus: CorpusInfo, *,
             resume: bool = False, overwrite: bool = False, versions: dict[str, str] | None = None,
             run_info: dict[str, Any] | None = None, shard_size: int = DEFAULT_SHARD_SIZE,
             shard_bytes: int = DEFAULT_SHARD_BYTES) -> "StoreWriter":
        """Create, replace (``overwrite``) or resume (``resume``) the store at ``out_dir``."""
        path = Path(out_dir)
        if settings.layers_resolved is None:
            raise ValueError("StoreWriter needs settings.layers_resolved")
        if path.exists() and not path.is_dir():
            raise StoreError(f"{path}: exists and is not a directory")
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise StoreError(f"{path}: cannot create store directory: {err.strerror or err}") from None
        lock = _lock_dir(path)
        try:
            writer = cls._open_locked(path, settings, corpus, resume, overwrite, versions, run_info,
                                      shard_size, shard_bytes)
        except BaseException:
            _unlock(lock)
            raise
        writer._lock = lock
        return writer

    @classmethod
    def _open_locked(cls, path: Path, settings: StoreSettings, corpus: CorpusInfo, resume: bool,
                     overwrite: bool, versions: dict[str, str] | None, run_info: dict[str, Any] | None,
                     shard_size: int, shard_bytes: int) -> "StoreWriter":
        manifest = _check_existing(path, settings, corpus, resume, overwrite)
        run = {"started": _now(), "versions": versions or {}, **(run_info or {})}
        try:
            if manifest is None:
                for p in _our_files(path):         # overwrite: only files a store consists of
                    p.unlink()
                manifest = {
                    "format": FORMAT,
                    "format_version": FORMAT_VERSION,
                    "created": _now(),
                    "updated": _now(),
                    "complete": corpus.n_sentences == 0,
                    **settings.manifest_fields(),
                    "versions": versions or {},
                    "corpus": asdict(corpus),
                    "runs": [run],
                    "shards": [],
                    "sentences": [],
                }
            else:
                cls._clean(path, manifest)
                if corpus.n_sentences > manifest["corpus"]["n_sentences"]:   # extended (e.g. larger --limit)
                    manifest["corpus"] = asdict(corpus)
                    manifest["complete"] = False
                stored = StoreSettings.from_manifest(manifest)
                # fill in what the store did not know yet; the stored layers stay (a subset may be requested)
                known = {k: v for k, v in asdict(settings).items()
                         if getattr(stored, k) is None and v is not None and k not in ("layers", "layers_resolved")}
                if stored.layers_resolved is None:
                    known["layers_resolved"] = settings.layers_resolved
                before = json.dumps(manifest, sort_keys=True)
                manifest.update(replace(stored, **known).manifest_fields())
                if _remaining(manifest, corpus.n_sentences):   # a finished store stays untouched
                    manifest.setdefault("runs", []).append(run)
                if json.dumps(manifest, sort_keys=True) == before:
                    return cls(path, manifest, shard_size=shard_size, shard_bytes=shard_bytes)
            writer = cls(path, manifest, shard_size=shard_size, shard_bytes=shard_bytes)
            writer._write_manifest()
        except OSError as err:
            raise StoreError(f"{path}: cannot write store: {err.strerror or err}") from None
        return writer

    @staticmethod
    def _clean(path: Path, manifest: dict[str, Any]) -> None:
        """Remove temp files and shards the manifest does not reference; check the others exist."""
        referenced = {s["file"] for s in manifest["shards"]}
        for p in _our_files(path):
            if p.name != MANIFEST and p.name not in referenced:
                logger.info("removing unfinished %s", p)
                p.unlink()
        for name in referenced:
            if not (path / name).is_file():
                raise StoreError(f"{path / name}: shard listed in the manifest is missing")

    # -- state

    @property
    def remaining(self) -> list[int]:
        """Corpus positions not yet stored or recorded as skipped (pending ones count as done)."""
        return [i for i in range(self.manifest["corpus"]["n_sentences"]) if i not in self._done]

    # -- adding

    def add(self, index: int, sentence_id: str, words: Sequence[str], matrix: np.ndarray, *,
            input_ids: Sequence[int], word_index: Sequence[int], pieces: Sequence[str]) -> None:
        """Queue sentence ``index``; ``matrix`` is ``[L, n+1, n+1]`` (``[L, n, n]`` without CLS)."""
        self._check_new(index)
        n = len(words)
        side = n + 1 if self.settings.include_cls else n
        n_layers = len(self.settings.layers_resolved)
        matrix = np.ascontiguousarray(matrix, dtype=np.float32)
        if matrix.shape != (n_layers, side, side):
            raise StoreError(f"sentence {sentence_id}: impact matrix has shape {matrix.shape}, "
                             f"expected {(n_layers, side, side)}")
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

    def skip(self, index: int, sentence_id: str, n_words: int, reason: str = "too_long") -> None:
        """Record that sentence ``index`` was not computed (e.g. longer than the model's limit)."""
        self._check_new(index)
        self._pending.entries.append({"index": index, "id": str(sentence_id), "n": n_words,
                                      "skipped": reason})
        self._done.add(index)

    def _check_new(self, index: int) -> None:
        if index in self._done:
            raise StoreError(f"{self.path}: sentence at position {index} is already stored")
        if not 0 <= index < self.manifest["corpus"]["n_sentences"]:
            raise StoreError(f"{self.path}: sentence position {index} is outside the corpus")

    # -- writing

    def flush(self) -> None:
        """Write the queued sentences as one shard (if any) and rewrite the manifest."""
        p = self._pending
        if not p.entries:
            return
        try:
            if p.records:
                name = f"shard-{self._next_shard:05d}.safetensors"
                meta = {"format": f"{FORMAT}-shard", "format_version": str(FORMAT_VERSION),
                        "sentences": json.dumps(p.records, ensure_ascii=True)}
                data = safetensors.numpy.save(p.tensors, metadata=meta)
                atomic_write(self.path / name, data)
                self._next_shard += 1
                self.manifest["shards"].append({"file": name, "sha256": hashlib.sha256(data).hexdigest(),
                                                "bytes": len(data), "n_sentences": len(p.records)})
                for e in p.entries:
                    if "key" in e:
                        e["shard"] = name
            self.manifest["sentences"].extend(p.entries)
            self.manifest["sentences"].sort(key=lambda e: e["index"])
            self._pending = _Pending()
            self._write_manifest()
        except OSError as err:
            raise StoreError(f"{self.path}: cannot write store: {err.strerror or err}") from None
        logger.debug("%s: flushed %d sentences", self.path, len(p.entries))

    def _write_manifest(self) -> None:
        m = self.manifest
        m["updated"] = _now()
        m["complete"] = len(m["sentences"]) == m["corpus"]["n_sentences"]
        atomic_write(self.path / MANIFEST,
                      (json.dumps(m, indent=1, ensure_ascii=True) + "\n").encode("ascii"))

    def close(self) -> None:
        """Flush and release the store (idempotent)."""
        try:
            self.flush()
        finally:
            _unlock(self._lock)
            self._lock = None

    def __enter__(self) -> "StoreWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
            return
        try:          # keep the finished sentences of an interrupted run
            self.close()
        except Exception as err:   # the original exception matters more
            logger.warning("could not save finished sentences after %s: %s", exc_type.__name__, err)


# --------------------------------------------------------------------------- reading


@dataclass
class StoredImpact:
    """One stored sentence. ``matrix[l, i, j]`` = impact of word j on word i (0-based words).

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

    def __len__(self) -> int:
        return len(self.words)

    def layer_index(self, k: int) -> int:
        """Position in ``layers`` of layer ``k`` (absolute, or negative counted from the top)."""
        if k < 0 and self.num_layers is not None:
            k = k + self.num_layers + 1
        if k not in self.layers:
            raise StoreError(f"sentence {self.id}: layer {k} is not stored (stored: {list(self.layers)})")
        return self.layers.index(k)

    def layer(self, k: int = -1, *, cls: bool = False) -> np.ndarray:
        """``[n, n]`` word-level matrix of layer ``k`` (``[n+1, n+1]`` with ``cls=True``)."""
        pos = self.layer_index(k)
        if cls:
            if self.cls_matrix is None:
                raise StoreError(f"sentence {self.id}: store was written without the [CLS] row")
            return self.cls_matrix[pos]
        return self.matrix[pos]

    def word_pieces(self, k: int) -> list[str]:
        """The word pieces of word ``k`` (0-based)."""
        return [p for p, w in zip(self.pieces, self.word_index.tolist()) if w == k]


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

    @classmethod
    def open(cls, path: str | os.PathLike, *, verify: bool = True, cache_shards: int = 2) -> "ImpactStore":
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
        if (full.dtype != np.float32 or full.shape != (len(self.layers), side, side) or n != entry["n"]
                or input_ids.shape != word_index.shape or len(rec["pieces"]) != len(input_ids)):
            raise StoreError(f"{where}: corrupt shard: sentence {entry['id']} has impact shape "
                             f"{full.shape} {full.dtype} for {n} words")
        return StoredImpact(
            index=entry["index"], id=entry["id"], words=list(rec["words"]),
            matrix=full[:, 1:, 1:] if self.include_cls else full,
            cls_matrix=full if self.include_cls else None,
            layers=self.layers, input_ids=input_ids, word_index=word_index,
            pieces=list(rec["pieces"]), num_layers=self.num_layers)

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
                f"metric={s.metric!r}, layers={list(self.layers)})")


class MissingSentenceError(StoreError, KeyError):
    """No stored sentence under that key (also a KeyError, so ``in``/``dict`` idioms work)."""

    def __str__(self) -> str:   # KeyError would quote the message
        return str(self.args[0]) if self.args else ""
