"""Shared output helpers of the reports: JSON-safe values, number formatting, Markdown and CSV
text, and figure files (PNG/SVG/PDF, written atomically and reproducibly).

Percentages are 0-100; a missing or non-finite value prints as ``-``. The score columns, their
labels and which hold percentages are the score classes' (:mod:`pmask.eval.scores.columns`; this module's
``PERCENT_KEYS``, ``ALL_PERCENT_KEYS``, ``LABELS``, ``score_key`` and ``is_percent_key`` moved there).

Example:
    >>> fmt_value(41.666, percent=True)
    '41.67'
"""
from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
from pathlib import Path
from typing import Any, Iterable, Literal, Mapping, Sequence

from pmask.common.errors import PmaskError
from pmask.common.files import atomic_write
from pmask.common.options import FIGURE_FORMATS

Kind = Literal["model", "baseline"]

KINDS = ("model", "baseline")

FIGURE_DPI = 150


class ReportError(PmaskError, ValueError):
    """A report was built from inconsistent input (unknown task or kind, duplicate layer, ...)."""


# --------------------------------------------------------------------------- file output

def figure_format(path: str | os.PathLike, allowed: Sequence[str] = FIGURE_FORMATS) -> str:
    """The output format named by ``path``'s suffix; ReportError (a ValueError) if unsupported."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in allowed:
        shown = ", ".join(f".{s}" for s in allowed)
        raise ReportError(f"{path}: unsupported output format {Path(path).suffix or '(no suffix)'!r}; "
                          f"use one of {shown}")
    return suffix


def save_figure(fig: Any, path: str | os.PathLike, *, dpi: int = FIGURE_DPI) -> Path:
    """Save a matplotlib ``Figure`` as PNG/SVG/PDF (from the suffix), atomically and reproducibly.

    SVG keeps text as ``<text>`` (searchable, words stay words); dates are left out of
    SVG/PDF metadata so identical input gives identical files.
    """
    import matplotlib

    fmt = figure_format(path)
    metadata = {"svg": {"Date": None}, "pdf": {"CreationDate": None}}.get(fmt)
    buf = io.BytesIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "pmask", "pdf.fonttype": 42}):
        fig.savefig(buf, format=fmt, dpi=dpi, metadata=metadata)
    return atomic_write(path, buf.getvalue())


def new_figure(figsize: tuple[float, float], dpi: int = FIGURE_DPI) -> Any:
    """A pyplot-free ``Figure`` on an Agg canvas (never touches the global backend)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, dpi=dpi)
    FigureCanvasAgg(fig)
    return fig


class TableFile:
    """Base of the report tables: one JSON text from ``to_dict()`` and atomic writers for it, the
    CSV and the Markdown (``write`` picks by suffix). Subclasses give ``to_dict``, ``to_csv`` and
    ``to_markdown``.
    """

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    def to_csv(self) -> str:
        raise NotImplementedError

    def to_markdown(self) -> str:
        raise NotImplementedError

    def to_json(self, *, indent: int = 2) -> str:
        """``to_dict()`` as JSON text (no NaN: missing values are null), ending in a newline."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, allow_nan=False, default=str) + "\n"

    def write_json(self, path: str | os.PathLike) -> Path:
        return atomic_write(path, self.to_json())

    def write_csv(self, path: str | os.PathLike) -> Path:
        return atomic_write(path, self.to_csv())

    def write(self, path: str | os.PathLike) -> Path:
        """Write Markdown, JSON or CSV chosen by the suffix (.md, .json, .csv)."""
        fmt = figure_format(path, ("md", "json", "csv"))
        text = {"md": self.to_markdown, "json": self.to_json, "csv": self.to_csv}[fmt]()
        return atomic_write(path, text)


# --------------------------------------------------------------------------- value helpers

def plain_value(value: Any) -> Any:
    """numpy scalars → Python numbers, NaN/inf → None, Paths → str (JSON-safe)."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        with contextlib.suppress(TypeError, ValueError):
            value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, Mapping):
        return {str(k): plain_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_value(v) for v in value]
    return value


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def fmt_value(value: Any, percent: bool) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, float)) and percent:   # a score keeps its decimals, whole or not: 12.00
        return f"{value:.2f}"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.2f}" if not value.is_integer() else str(int(value))
    return str(value)


def best_indices(values: Sequence[Any]) -> set[int]:
    """Row indices holding the maximum of a column (ties all win); empty unless ≥2 numbers."""
    numbers = [(i, v) for i, v in enumerate(values) if is_number(v)]
    if len(numbers) < 2:
        return set()
    top = max(v for _, v in numbers)
    return {i for i, v in numbers if v == top}


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[bool]) -> str:
    """A GitHub table padded so it also lines up in a terminal; numeric columns right-aligned."""
    header = [_md_cell(h) for h in header]
    rows = [[_md_cell(c) for c in r] for r in rows]
    widths = [max([len(header[c])] + [len(r[c]) for r in rows] + [3]) for c in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        padded = [cell.rjust(w) if num else cell.ljust(w) for cell, w, num in zip(cells, widths, numeric)]
        return "| " + " | ".join(padded) + " |"

    rule = "| " + " | ".join(("-" * (w - 1) + ":") if num else "-" * w for w, num in zip(widths, numeric)) + " |"
    return "\n".join([line(header), rule] + [line(r) for r in rows]) + "\n"


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(["" if v is None else (json.dumps(v) if isinstance(v, (dict, list)) else v) for v in row])
    return buf.getvalue()


def ordered_keys(first: Sequence[str], dicts: Iterable[Mapping[str, Any]]) -> list[str]:
    """``first`` (those present) then every other key in first-seen order."""
    seen: dict[str, None] = {}
    dicts = list(dicts)
    for key in first:
        if any(key in d for d in dicts):
            seen[key] = None
    for d in dicts:
        for key in d:
            seen.setdefault(key, None)
    return list(seen)


def meta_line(title: str, meta: Mapping[str, Any]) -> str:
    parts = [f"{k}: {fmt_value(plain_value(v), False)}" for k, v in meta.items()]
    return " · ".join([f"**{title}**"] + parts) + "\n\n"


def metrics_dict(score: Any) -> dict[str, Any]:
    """A score object's ``to_dict()``, or a copy of a plain mapping."""
    if hasattr(score, "to_dict"):
        score = score.to_dict()
    if not isinstance(score, Mapping):
        raise ReportError(f"expected a metrics dict or an object with to_dict(), got {type(score).__name__}")
    return {str(k): plain_value(v) for k, v in score.items()}
