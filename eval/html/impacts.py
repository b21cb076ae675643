"""Impact matrices for ``pmask report``, quantised to one byte per cell.

Each ``[n, n]`` matrix of each layer is stored as ``uint8`` codes 0..254 on a linear scale of its
own (``value = lo + code * step``, ``step = (hi - lo) / 254``), code 255 marking NaN (e.g. the
diagonal, where a word's impact on itself is undefined). All layers of a sentence are base64 of
``L * n * n`` bytes. Why one byte: a colour map shows no more than 256 levels, a hover shows the
value to within ``step / 2`` (0.2 % of the matrix's range), and 1000 PUD sentences with 12 layers
stay below 10 MB of page (two bytes would double that for precision nobody can see).
"""
from __future__ import annotations

import base64
import logging
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from pmask.common.errors import PmaskError
from pmask.common.labels import plural, probe_label
from pmask.common.options import SPAN_PROBES
from pmask.common.units import unit_of

logger = logging.getLogger(__name__)

LEVELS = 254
NAN_CODE = 255


def quantise(matrix: np.ndarray) -> tuple[bytes, float, float]:
    """``(codes, lo, step)`` of a float matrix: uint8 codes, NaN → 255.

    Example:
        >>> codes, lo, step = quantise(np.array([[0.0, 1.0], [np.nan, 0.5]]))
        >>> list(codes), lo, step
        ([0, 254, 255, 127], 0.0, 0.003937007874015748)
    """
    arr = np.asarray(matrix, dtype=np.float64)
    finite = np.isfinite(arr)
    lo = float(arr[finite].min()) if finite.any() else 0.0
    hi = float(arr[finite].max()) if finite.any() else 0.0
    step = (hi - lo) / LEVELS if hi > lo else 0.0
    codes = np.full(arr.shape, NAN_CODE, dtype=np.uint8)
    if step:
        codes[finite] = np.rint((arr[finite] - lo) / step).astype(np.uint8)
    else:
        codes[finite] = 0
    return codes.tobytes(), lo, step


def dequantise(data: str, lo: Sequence[float], step: Sequence[float], n: int) -> np.ndarray:
    """Inverse of the page encoding (for tests): ``[L, n, n]`` floats, NaN where code 255."""
    codes = np.frombuffer(base64.b64decode(data), dtype=np.uint8).reshape(len(lo), n, n)
    out = codes.astype(np.float64) * np.asarray(step)[:, None, None] + np.asarray(lo)[:, None, None]
    out[codes == NAN_CODE] = np.nan
    return out


def _sig(x: float) -> float:
    return float(f"{x:.6g}")


def encode_item(matrix: np.ndarray) -> dict[str, Any]:
    """``{"lo": [L], "step": [L], "data": base64}`` for a ``[L, n, n]`` stack of matrices."""
    chunks, los, steps = [], [], []
    for layer in matrix:
        codes, lo, step = quantise(layer)
        chunks.append(codes)
        los.append(_sig(lo))
        steps.append(_sig(step))
    return {"lo": los, "step": steps, "data": base64.b64encode(b"".join(chunks)).decode("ascii")}


def _absolute(layer: Any, num_layers: int | None) -> int | None:
    if not isinstance(layer, int):
        return None
    return layer + num_layers + 1 if layer < 0 and num_layers is not None else layer


def impacts_for(store_dir: Path, sentences: Sequence[dict[str, Any]], *, chosen_layer: Any = None
                ) -> dict[str, Any]:
    """Every stored layer's matrix for each report sentence, matched by sentence id.

    Args:
        store_dir: an impact store (``pmask impact`` / ``parse --store``).
        sentences: the report's sentences (``{"id", "words", ...}``), in page order.
        chosen_layer: the prediction's layer (absolute or negative); the page shows it first.
    Returns:
        ``{"layers": [absolute layer numbers], "default": layer, "metric", "label" (the probe, e.g.
        "attention (head mean)"), "items": {page index: encoded}}``;
        sentences whose words differ from the store's, or that it skipped, have no item.
    """
    from pmask.perturb.store import ImpactStore
    from pmask.perturb.store.state import check_finished

    store = ImpactStore.open(store_dir)
    check_finished(store.path, store.manifest, allow_incomplete=True)   # maps only: warn when unfinished
    layers = list(store.manifest["layers"]["resolved"])
    spans = store.settings.impact.probe in SPAN_PROBES
    items: dict[str, Any] = {}
    mismatched, absent = [], []
    for k, sent in enumerate(sentences):
        item = store.get(sent["id"])
        if item is None:
            absent.append(sent["id"])
            continue
        if list(item.words) != list(sent["words"]):
            mismatched.append(sent["id"])
            continue
        matrix = select_heads(np.asarray(item.matrix))
        items[str(k)] = encode_item(np.stack([span_rows(m) for m in matrix]) if spans else matrix)
    if mismatched:
        logger.warning("%s: %s with other words in the store, shown without impacts: %s",
                       store_dir, plural(len(mismatched), "sentence"), ", ".join(mismatched[:5]))
    if absent and items:   # e.g. a store made with --limit 200 for a prediction of 1000 sentences
        logger.warning("%s: the store holds no impacts for %d of the report's %s, shown without impact maps: %s",
                       store_dir, len(absent), unit_of(sentences).records(len(sentences)),
                       ", ".join(absent[:5]) + (" …" if len(absent) > 5 else ""))
    if not items:
        raise PmaskError(f"{store_dir}: the store holds none of the report's sentences (matched by sentence id)")
    default = _absolute(chosen_layer, store.num_layers)
    settings = store.settings
    label = probe_label({"probe": settings.impact.probe, "metric": settings.impact.metric,
                         "head": "mean" if store.heads else None})
    return {"layers": layers, "default": default if default in layers else layers[-1],
            "metric": store.manifest.get("metric"), "label": label, "items": items,
            "chart": "span" if spans else "pair"}


def span_rows(chart: np.ndarray) -> np.ndarray:
    """A span chart as the page draws it: row r = spans of n - r words (the longest on top), column =
    first word; scores normalised per length as ``cky`` reads them, NaN where no span is.

    Example:
        >>> span_rows(np.array([[3.0, 1.0], [0.0, 4.0]])).round(2).tolist()
        [[nan, nan], [0.6, 0.8]]
    """
    from pmask.eval.figures.span_chart import start_length_grid

    return start_length_grid(chart)[::-1]


def select_heads(matrix: np.ndarray) -> np.ndarray:
    """``[L, n, n]`` for the page: a store that keeps every head ([L, H, n, n]) is shown as the heads' mean."""
    return matrix.mean(axis=1) if matrix.ndim == 4 else matrix
