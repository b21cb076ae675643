"""Matrices out of a store: NumPy ``.npy`` files, CSV tables or one JSON document (no torch).

The library behind ``pmask export`` (:mod:`pmask.cli.commands.export`).
"""
from __future__ import annotations

import csv
import io
import json
import logging
import os
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from pmask.common.errors import StoreError
from pmask.common.files import atomic_write
from pmask.common.output_checks import make_output_folder
from pmask.perturb.store.reader import ImpactStore, StoredImpact
from pmask.perturb.store.state import check_finished

logger = logging.getLogger(__name__)

#: Export formats and what each writes.
EXPORT_FORMATS: dict[str, str] = {
    "npy": "a folder: one float32 [n, n] .npy file per sentence and layer, plus index.json",
    "csv": "a folder: one CSV table per sentence and layer (words as row and column labels), plus index.json",
    "json": "one JSON file: settings, and per sentence its id, words and one n x n matrix per layer",
}
INDEX = "index.json"
MATRIX_NOTE = "matrix[i][j] = impact of word j on word i (0-based words; the [CLS] row is not exported)"


def _stem(item: StoredImpact, layer: int) -> str:
    return f"{item.index:05d}-layer{layer:02d}"


def _csv_table(item: StoredImpact, matrix: np.ndarray) -> bytes:
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow(["", *item.words])
    for word, row in zip(item.words, matrix):
        out.writerow([word, *(format(float(v), ".9g") for v in row)])   # 9 digits: float32 round-trips
    return buf.getvalue().encode("utf-8", "backslashreplace")   # a lone surrogate in a word: as \udXXX


def _npy_bytes(matrix: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(matrix, dtype=np.float32))
    return buf.getvalue()


def _header(store: ImpactStore, layers: Sequence[int]) -> dict[str, Any]:
    s = store.settings
    heads = {"heads": f"the mean over the {s.heads} heads of each layer (the store keeps every head)"} \
        if s.heads else {}
    return {"store": str(store.path), "model": s.model, "probe": s.impact.probe, "metric": s.impact.metric,
            "subword": s.impact.subword, "layers": list(layers), "matrix": MATRIX_NOTE, **heads,
            "complete": store.complete, "corpus_sentences": store.manifest["corpus"].get("n_sentences"),
            "skipped": store.skipped}


def _check_layers(store: ImpactStore, layers: Sequence[int] | None) -> list[int]:
    """Absolute stored layers to export (all stored ones for None); StoreError for one not stored."""
    if not layers:
        return list(store.layers)
    out = []
    for k in layers:
        a = k + store.num_layers + 1 if k < 0 and store.num_layers is not None else k
        if a not in store.layers:
            raise StoreError(f"{store.path}: layer {k} is not stored (stored: {list(store.layers)})")
        out.append(a)
    return out


def _export_files(store: ImpactStore, out: Path, layers: list[int], suffix: str,
                  render: Callable[[StoredImpact, np.ndarray], bytes | str]) -> list[Path]:
    make_output_folder(out)
    written, index = [], []
    for item in store:
        files = {}
        for layer in layers:
            path = out / f"{_stem(item, layer)}{suffix}"
            atomic_write(path, render(item, item.layer(layer)))
            written.append(path)
            files[str(layer)] = path.name
        index.append({"index": item.index, "id": item.id, "words": item.words, "files": files})
    atomic_write(out / INDEX, json.dumps({**_header(store, layers), "sentences": index},
                                         indent=1, ensure_ascii=True) + "\n")
    return [*written, out / INDEX]


def _export_json(store: ImpactStore, out: Path, layers: list[int]) -> list[Path]:
    sentences = [{"index": item.index, "id": item.id, "words": item.words,
                  "matrices": {str(layer): item.layer(layer).tolist() for layer in layers}} for item in store]
    atomic_write(out, json.dumps({**_header(store, layers), "sentences": sentences}, ensure_ascii=True) + "\n")
    return [out]


def export_store(store_dir: str | os.PathLike, out_path: str | os.PathLike, fmt: str = "npy", *,
                 layers: Sequence[int] | None = None) -> list[Path]:
    """Write the word-level impact matrices of a store as ``.npy``, CSV or JSON.

    Args:
        store_dir: an impact store directory.
        out_path: a folder for ``npy`` and ``csv`` (created; files in it are replaced), a file for ``json``.
        fmt: one of :data:`EXPORT_FORMATS` (``npy``, ``csv``, ``json``).
        layers: layers to export (absolute, or negative from the top); None = every stored layer.

    Returns:
        The paths written. Folder formats name each file ``<position>-layer<LL>.npy|.csv``
        (position = 5-digit corpus position) and list them in ``index.json`` with ids and words;
        each matrix is ``[n, n]`` float32 with ``matrix[i, j]`` = impact of word j on word i.
        Sentences skipped as too long are listed under ``"skipped"``; ``"complete"`` and
        ``"corpus_sentences"`` say whether the store held its whole corpus (an unfinished store is
        exported with a warning).

    Raises:
        StoreError: not a store, an unknown format, a layer that is not stored, or an output
            inside the store.

    Example:
        >>> export_store("pud-store/", "pud-csv/", "csv", layers=[-1])   # doctest: +SKIP
        [PosixPath('pud-csv/00000-layer12.csv'), ..., PosixPath('pud-csv/index.json')]
    """
    if fmt not in EXPORT_FORMATS:
        raise StoreError(f"unknown export format {fmt!r} (choose from {', '.join(EXPORT_FORMATS)})")
    store = ImpactStore.open(store_dir)
    check_finished(store.path, store.manifest, allow_incomplete=True)   # warns when unfinished
    out = Path(out_path)
    if out.resolve() == store.path.resolve() or store.path.resolve() in out.resolve().parents:
        raise StoreError(f"{out}: the export would be written into the store {store.path}; choose another path")
    if fmt == "json" and out.is_dir():
        raise StoreError(f"{out}: is a directory; the json format writes one file, give its name")
    if fmt != "json" and out.exists() and not out.is_dir():
        raise StoreError(f"{out}: exists and is not a directory; the {fmt} format writes a folder")
    chosen = _check_layers(store, layers)
    if fmt == "json":
        written = _export_json(store, out, chosen)
    elif fmt == "csv":
        written = _export_files(store, out, chosen, ".csv", _csv_table)
    else:
        written = _export_files(store, out, chosen, ".npy", lambda item, m: _npy_bytes(m))
    logger.debug("%s: exported %d sentences, layers %s, as %s to %s", store.path, len(store), chosen, fmt, out)
    return written
