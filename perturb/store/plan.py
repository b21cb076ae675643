"""Before writing: the check of an existing store and what is left to compute (the lock: :mod:`.lock`)."""
from __future__ import annotations

import contextlib
import heapq
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from pmask.common.errors import LayerError, StoreError, StoreSettingError
from pmask.perturb.store.layout import MANIFEST, PARTIAL, read_manifest
from pmask.perturb.store.lock import WRITER_NOTE
from pmask.perturb.store.store_settings import (
    CorpusInfo,
    StoreSettings,
    corpus_unit,
    settings_mismatches,
    unit_mismatch,
)


def _contents(path: Path) -> list[Path]:
    """The files in a store directory, leaving out a writer's note (see :mod:`.lock`)."""
    return [p for p in path.iterdir() if p.name != WRITER_NOTE]


def _holds_nothing(path: Path) -> bool:
    """A store that was created but never got a sentence (e.g. interrupted during model start-up)."""
    if not (path / MANIFEST).is_file() or any(p.name != MANIFEST for p in _contents(path)):
        return False
    try:
        manifest = read_manifest(path)
    except StoreError:
        return False
    return not manifest["sentences"] and not manifest["shards"]


def existing_manifest(path: Path, resume: bool, overwrite: bool) -> dict[str, Any] | None:
    """The manifest of the store at ``path`` to resume from, None to start afresh; StoreError when
    neither is allowed (a file there, or a store without ``resume``/``overwrite``)."""
    if path.exists() and not path.is_dir():
        raise StoreError(f"{path}: exists and is not a directory")
    if not path.exists() or not _contents(path) or overwrite or _holds_nothing(path):
        return None
    if not resume:
        raise StoreSettingError(f"{path}: a store is already there; give {{resume}} to continue it, {{overwrite}} to "
                                f"replace it, or choose another directory")
    return read_manifest(path)


def check_matches(path: Path, manifest: dict[str, Any], settings: StoreSettings, corpus: CorpusInfo,
                  more_layers: bool = False) -> None:
    """StoreError naming every setting, and the corpus, in which the store differs from the request.

    ``more_layers``: layers the store lacks are no mismatch (the caller adds them).
    """
    problems = settings_mismatches(StoreSettings.from_manifest(manifest), settings, more_layers=more_layers)
    stored_corpus = manifest["corpus"]
    unit = unit_mismatch(stored_corpus, corpus.unit)
    if unit is not None:
        problems.append(unit)
    if (stored_corpus.get("sentences_sha256") != corpus.sentences_sha256
            or stored_corpus.get("n_sentences") != corpus.n_sentences) and not _same_prefix(stored_corpus, corpus):
        theirs = CorpusInfo(stored_corpus.get("n_sentences", 0), stored_corpus.get("sentences_sha256", ""),
                            stored_corpus.get("path"))
        problems.append(f"corpus: store has {theirs.describe()}, requested {corpus.describe()}")
    if problems:
        raise StoreError(f"{path}: store was made with other settings: " + "; ".join(problems))


def check_unit(path: str | os.PathLike, manifest: dict[str, Any], sentences: Sequence[Any]) -> None:
    """StoreError when the store at ``path`` was made over other units than ``sentences`` hold (words read
    as documents of EDUs, or the reverse): its numbers mean something else for them.

    Raises:
        StoreError: "STORE: store was made with other settings: unit: store has 'word', requested 'edu'".
    """
    problem = unit_mismatch(manifest.get("corpus") or {}, corpus_unit(sentences))
    if problem is not None:
        raise StoreError(f"{path}: store was made with other settings: {problem}")


def check_existing(path: Path, settings: StoreSettings, corpus: CorpusInfo,
                   resume: bool, overwrite: bool, more_layers: bool = False) -> dict[str, Any] | None:
    """The manifest to resume from, None to start afresh; StoreError when neither is allowed or the
    store there differs from the request (see :func:`existing_manifest` and :func:`check_matches`)."""
    manifest = existing_manifest(path, resume, overwrite)
    if manifest is not None:
        check_matches(path, manifest, settings, corpus, more_layers)
    return manifest


def _same_prefix(stored_corpus: dict[str, Any], corpus: CorpusInfo) -> bool:
    """True when one sentence list is a prefix of the other (a larger or smaller ``--limit``)."""
    stored = tuple(stored_corpus.get("digests") or ())
    if len(stored) != stored_corpus.get("n_sentences") or not corpus.digests:
        return False
    k = min(len(stored), len(corpus.digests))
    return stored[:k] == corpus.digests[:k]


def remaining(manifest: dict[str, Any] | None, n_sentences: int) -> list[int]:
    """Corpus positions below ``n_sentences`` that ``manifest`` neither stores nor records as skipped."""
    done = {e["index"] for e in manifest["sentences"]} if manifest else set()
    return [i for i in range(n_sentences) if i not in done]


def todo_of(store: str | os.PathLike, n_sentences: int, resume: bool = True) -> tuple[list[int], int]:
    """What a fill of the store at ``store`` still computes for a corpus of ``n_sentences``: the positions it
    neither stores nor records as skipped (every one without a store, or without ``resume``), and the sequences
    of the first of them that a killed run kept (``partial.safetensors``; 0: none), which it will not run again.

    Example:
        >>> todo_of("no-such-store", 3)
        ([0, 1, 2], 0)
    """
    path = Path(store)
    if not resume or not (path / MANIFEST).is_file():
        return list(range(n_sentences)), 0
    left = remaining(read_manifest(path), n_sentences)
    return left, partial_sequences(path, left[0] if left else None)


def partial_sequences(store: str | os.PathLike, first: int | None) -> int:
    """Sequences a store's ``partial.safetensors`` holds of the record at position ``first`` (0: none, or a part of
    another record, or a damaged file, which the run recomputes whole)."""
    part = Path(store) / PARTIAL
    if first is None or not part.is_file():
        return 0
    try:
        import safetensors

        with safetensors.safe_open(str(part), framework="numpy") as f:
            index = json.loads((f.metadata() or {})["pmask_partial"])["index"]
            done = int(f.get_tensor("done_sequences")[0])
    except Exception:  # noqa: BLE001 - a damaged file is only recomputed by the run: count it whole
        return 0
    return done if index == first else 0


def missing_layers(manifest: dict[str, Any], layers: Sequence[int]) -> list[int]:
    """Absolute ``layers`` that some stored shard lacks (sorted; see :mod:`.extend`)."""
    stored = manifest["layers"].get("resolved") or []
    held = [set(s.get("layers", stored)) for s in manifest["shards"]] or [set(stored)]
    return sorted({int(k) for k in layers if any(int(k) not in h for h in held)})


def _resolved(settings: StoreSettings, manifest: dict[str, Any]) -> StoreSettings:
    """``settings`` with its layers resolved for the stored model's depth (unless the request knows its own)."""
    return settings.resolved(settings.num_layers or manifest["model"].get("num_layers"))


def layers_to_add(out_dir: str | os.PathLike, settings: StoreSettings) -> list[int]:
    """Absolute layers of ``settings`` that the store at ``out_dir`` lacks ([] when there is no store).

    Negative layers are resolved with ``settings.num_layers`` or else the store's own model depth.
    """
    path = Path(out_dir)
    if not (path / MANIFEST).is_file():
        return []
    manifest = read_manifest(path)
    wanted = _resolved(settings, manifest).layers_resolved
    return [] if wanted is None else missing_layers(manifest, wanted)


@dataclass(frozen=True)
class StorePlan:
    """What a fill of a store has left to do, known before any model is loaded."""

    todo: list[int]                 # corpus positions to compute, sorted
    missing_layers: list[int]       # absolute layers the stored sentences lack (added before the rest)

    @property
    def done(self) -> bool:
        """Nothing to compute and no layer to add: a resumed fill needs no model."""
        return not self.todo and not self.missing_layers


def plan_fill(out_dir: str | os.PathLike, sentences: Sequence[Any], settings: StoreSettings, *,
              corpus_path: str | os.PathLike | None = None, resume: bool = False,
              overwrite: bool = False) -> StorePlan:
    """What is left to do in ``out_dir``: the positions to compute and (with ``resume``) the layers to
    add; reads the manifest once, writes nothing, needs no model. Arguments and errors as for
    :func:`plan_store`.

    The requested layers are resolved once, here, for the stored model's depth; a request whose
    layers do not fit that model is refused by the settings check (StoreError naming the layer).
    """
    path = Path(out_dir)
    corpus = CorpusInfo.of(sentences, corpus_path)
    manifest = existing_manifest(path, resume, overwrite)
    if manifest is None:
        return StorePlan(remaining(None, corpus.n_sentences), [])
    with contextlib.suppress(LayerError):   # the check below names the layer among the other differences
        settings = _resolved(settings, manifest)
    check_matches(path, manifest, settings, corpus, more_layers=resume)
    wanted = settings.layers_resolved
    missing = missing_layers(manifest, wanted) if resume and wanted is not None else []
    return StorePlan(remaining(manifest, corpus.n_sentences), missing)


def plan_store(out_dir: str | os.PathLike, sentences: Sequence[Any], settings: StoreSettings, *,
               corpus_path: str | os.PathLike | None = None, resume: bool = False,
               overwrite: bool = False) -> list[int]:
    """Corpus positions still to compute in ``out_dir``; writes nothing, needs no model.

    Args:
        out_dir: the store directory (need not exist).
        sentences: the corpus, objects with ``.id`` and ``.words``.
        settings: the requested settings (fields not known before the model is loaded may be None).
        corpus_path: the corpus file, recorded for provenance.
        resume: continue a store made with the same settings and corpus (layers it lacks are
            accepted: :func:`plan_fill` names them, and ``compute_store`` adds them).
        overwrite: replace whatever store is there.

    Returns:
        Sorted corpus positions to compute; an empty list means every sentence is stored (see
        :func:`plan_fill` for the layers a resumed store lacks).

    Raises:
        StoreError: the directory is in use and neither ``resume`` nor ``overwrite`` is set, or
            the store there was made with other settings or another corpus.

    Example:
        >>> plan_store("impacts/", sentences, StoreSettings(model="bert-base-uncased"), resume=True)  # doctest: +SKIP
        [17, 18, 19]
    """
    return plan_fill(out_dir, sentences, settings, corpus_path=corpus_path, resume=resume, overwrite=overwrite).todo


def sequence_cost(n_words: int) -> int:
    """Forward sequences the engine runs for a sentence of ``n_words`` words (include_cls layout):
    one unmasked input, ``n`` with one word masked and ``n(n-1)/2`` with two."""
    return 1 + n_words + n_words * (n_words - 1) // 2


def balance(positions: Sequence[int], n_words: Sequence[int], world_size: int) -> list[list[int]]:
    """Share sentences among ``world_size`` ranks by cost (greedy longest-processing-time first).

    Args:
        positions: corpus positions to share out.
        n_words: the word count of each of ``positions``.
        world_size: the number of ranks.

    Returns:
        One list of positions per rank, each in corpus order. The most expensive sentence goes
        to the least loaded rank first, so the largest share exceeds the mean by less than one
        sentence's cost. Deterministic: every rank computes the same split.

    Example:
        >>> balance([0, 1, 2, 3], [10, 3, 3, 9], 2)
        [[0], [1, 2, 3]]
    """
    if world_size < 1:
        raise ValueError(f"world_size must be >= 1, got {world_size}")
    loads = [(0, rank) for rank in range(world_size)]
    shares: list[list[int]] = [[] for _ in range(world_size)]
    order = sorted(zip(positions, n_words), key=lambda pn: (-sequence_cost(pn[1]), pn[0]))
    for position, n in order:
        load, rank = heapq.heappop(loads)
        shares[rank].append(position)
        heapq.heappush(loads, (load + sequence_cost(n), rank))
    return [sorted(share) for share in shares]
