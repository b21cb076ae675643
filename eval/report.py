"""Comparison reports and layer sweeps as Markdown, JSON, CSV and a PNG/SVG/PDF plot.

Everything here works on plain metric dicts, the ``to_dict()`` output of
``DependencyScore`` ({"uas", "uuas", "correct", "total"}) and ``BracketScore``
({"f1_sentence", "f1_corpus", "precision", "recall", ...}); percentages are 0-100.
Files are written atomically (temporary file in the same folder, then ``os.replace``),
so a crashed run never leaves a half-written report behind.
"""
from __future__ import annotations

import csv
import io
import json
import logging
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Literal, Mapping, Sequence

from pmask.errors import PmaskError
from pmask.files import atomic_write

logger = logging.getLogger(__name__)

Task = Literal["dependency", "constituency"]
Kind = Literal["model", "baseline"]

TASKS = ("dependency", "constituency")
KINDS = ("model", "baseline")

# Percent-valued metrics (higher is better) per task, in column order.
PERCENT_KEYS: dict[str, tuple[str, ...]] = {
    "dependency": ("uas", "uuas"),
    "constituency": ("f1_sentence", "f1_corpus", "precision", "recall"),
}
ALL_PERCENT_KEYS = PERCENT_KEYS["dependency"] + PERCENT_KEYS["constituency"]

LABELS = {
    "uas": "UAS",
    "uuas": "UUAS",
    "f1_sentence": "Sentence F1",
    "f1_corpus": "Corpus F1",
    "precision": "P",
    "recall": "R",
    "words": "Words",
    "sentences": "Sentences",
}

# Row fields that are not metrics in the flat JSON row layout.
_RESERVED = ("name", "kind", "settings")
FIGURE_FORMATS = ("png", "svg", "pdf")
FIGURE_DPI = 150


class ReportError(PmaskError, ValueError):
    """A report was built from inconsistent input (unknown task or kind, duplicate layer, ...)."""


# --------------------------------------------------------------------------- file output

def figure_format(path: str | os.PathLike, allowed: Sequence[str] = FIGURE_FORMATS) -> str:
    """The output format named by ``path``'s suffix; ReportError (a ValueError) if unsupported."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in allowed:
        shown = ", ".join(f".{s}" for s in allowed)
        raise ReportError(f"{path}: unsupported output format {Path(path).suffix or '(no suffix)'!r}; use one of {shown}")
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


# --------------------------------------------------------------------------- value helpers

def _plain(value: Any) -> Any:
    """numpy scalars → Python numbers, NaN/inf → None, Paths → str (JSON-safe)."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            value = value.item()
        except (TypeError, ValueError):
            pass
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _fmt(value: Any, percent: bool) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.2f}" if percent or not value.is_integer() else str(int(value))
    return str(value)


def _best_indices(values: Sequence[Any]) -> set[int]:
    """Row indices holding the maximum of a column (ties all win); empty unless ≥2 numbers."""
    numbers = [(i, v) for i, v in enumerate(values) if _is_number(v)]
    if len(numbers) < 2:
        return set()
    top = max(v for _, v in numbers)
    return {i for i, v in numbers if v == top}


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[bool]) -> str:
    """A GitHub table padded so it also lines up in a terminal; numeric columns right-aligned."""
    header = [_md_cell(h) for h in header]
    rows = [[_md_cell(c) for c in r] for r in rows]
    widths = [max([len(header[c])] + [len(r[c]) for r in rows] + [3]) for c in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        padded = [cell.rjust(w) if num else cell.ljust(w) for cell, w, num in zip(cells, widths, numeric)]
        return "| " + " | ".join(padded) + " |"

    rule = "| " + " | ".join(("-" * (w - 1) + ":") if num else "-" * w for w, num in zip(widths, numeric)) + " |"
    return "\n".join([line(header), rule] + [line(r) for r in rows]) + "\n"


def _csv_text(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(["" if v is None else (json.dumps(v) if isinstance(v, (dict, list)) else v) for v in row])
    return buf.getvalue()


def _ordered_keys(first: Sequence[str], dicts: Iterable[Mapping[str, Any]]) -> list[str]:
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


def _meta_line(title: str, meta: Mapping[str, Any]) -> str:
    parts = [f"{k}: {_fmt(_plain(v), False)}" for k, v in meta.items()]
    return " · ".join([f"**{title}**"] + parts) + "\n\n"


def metrics_dict(score: Any) -> dict[str, Any]:
    """A score object's ``to_dict()``, or a copy of a plain mapping."""
    if hasattr(score, "to_dict"):
        score = score.to_dict()
    if not isinstance(score, Mapping):
        raise ReportError(f"expected a metrics dict or an object with to_dict(), got {type(score).__name__}")
    return {str(k): _plain(v) for k, v in score.items()}


# --------------------------------------------------------------------------- comparison

@dataclass
class ComparisonRow:
    """One line of a comparison: the induced trees of one setting, or one baseline.

    ``metrics`` holds ``to_dict()``-style values (percentages 0-100 plus counts);
    ``settings`` says how the row was produced (model, layer, decoder, ...).
    """

    name: str
    kind: Kind
    metrics: dict[str, float | int]
    settings: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ReportError(f"row {self.name!r}: kind must be 'model' or 'baseline', not {self.kind!r}")
        self.metrics = metrics_dict(self.metrics)
        clash = [k for k in self.metrics if k in _RESERVED]
        if clash:
            raise ReportError(f"row {self.name!r}: metric name(s) {clash} clash with row fields {list(_RESERVED)}")
        self.settings = dict(self.settings)

    @classmethod
    def from_score(cls, name: str, score: Any, *, kind: Kind = "model",
                   settings: Mapping[str, Any] | None = None, **extra: float | int) -> "ComparisonRow":
        """Row from a score object (``to_dict()``) or dict; ``extra`` adds counts such as ``sentences=``."""
        return cls(name, kind, {**metrics_dict(score), **extra}, dict(settings or {}))

    def to_dict(self) -> dict[str, Any]:
        """Flat JSON row: name, kind, every metric under its plain key, then settings."""
        return {"name": self.name, "kind": self.kind, **_plain(self.metrics), "settings": _plain(self.settings)}


@dataclass
class Comparison:
    """Induced trees next to every baseline, scored on the same sentences.

    ``meta`` records the run: gold file, punctuation setting, model, layer, ...
    """

    rows: list[ComparisonRow]
    task: Task
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ReportError(f"comparison task must be 'dependency' or 'constituency', not {self.task!r}")
        self.rows = list(self.rows)
        self.meta = dict(self.meta)

    def add(self, name: str, score: Any, *, kind: Kind = "model",
            settings: Mapping[str, Any] | None = None, **extra: float | int) -> ComparisonRow:
        """Append a row built with :meth:`ComparisonRow.from_score` and return it."""
        row = ComparisonRow.from_score(name, score, kind=kind, settings=settings, **extra)
        self.rows.append(row)
        return row

    # -- columns
    def _columns(self) -> list[tuple[str, str, bool, Any]]:
        """(label, key, is_percent, getter) for the Markdown table; all-empty count columns dropped."""
        cols: list[tuple[str, str, bool, Any]] = [
            (LABELS[k], k, True, (lambda m, k=k: m.get(k))) for k in PERCENT_KEYS[self.task]
        ]
        if self.task == "dependency":
            cols.append(("Words", "words", False, lambda m: m.get("words", m.get("total"))))
        cols.append(("Sentences", "sentences", False, lambda m: m.get("sentences")))
        return [c for c in cols if c[2] or any(c[3](r.metrics) is not None for r in self.rows)]

    def to_markdown(self, *, mark_best: bool = True, header: bool = True) -> str:
        """GitHub Markdown table (padded for the terminal), best score per column in bold.

        With ``header`` a one-line summary of ``meta`` precedes the table.
        """
        cols = self._columns()
        with_settings = any(r.settings for r in self.rows)
        values = [[get(r.metrics) for (_, _, _, get) in cols] for r in self.rows]
        best = [_best_indices([v[c] for v in values]) if mark_best and cols[c][2] else set()
                for c in range(len(cols))]
        body = []
        for i, row in enumerate(self.rows):
            cells = [row.name, row.kind]
            for c, (_, _, percent, _) in enumerate(cols):
                text = _fmt(values[i][c], percent)
                cells.append(f"**{text}**" if i in best[c] else text)
            if with_settings:
                cells.append(", ".join(f"{k}={_fmt(_plain(v), False)}" for k, v in row.settings.items()))
            body.append(cells)
        head = ["Name", "Kind"] + [c[0] for c in cols] + (["Settings"] if with_settings else [])
        numeric = [False, False] + [True] * len(cols) + ([False] if with_settings else [])
        table = _markdown_table(head, body, numeric)
        if header:
            table = _meta_line(f"{self.task.capitalize()} comparison", self.meta) + table
        return table

    def to_dict(self) -> dict[str, Any]:
        return {"task": self.task, "meta": _plain(self.meta), "rows": [r.to_dict() for r in self.rows]}

    def to_json(self, *, indent: int = 2) -> str:
        """JSON: {"task", "meta", "rows": [{"name", "kind", <metric keys>, "settings"}]}."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, allow_nan=False, default=str) + "\n"

    def write_json(self, path: str | os.PathLike) -> Path:
        return atomic_write(path, self.to_json())

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Comparison":
        """Inverse of :meth:`to_dict`."""
        try:
            rows = [ComparisonRow(r["name"], r["kind"], {k: v for k, v in r.items() if k not in _RESERVED},
                                  dict(r.get("settings") or {})) for r in data["rows"]]
            return cls(rows, data["task"], dict(data.get("meta") or {}))
        except (KeyError, TypeError, AttributeError) as err:
            raise ReportError(f"not a comparison report: missing or malformed field {err}") from None

    @classmethod
    def read_json(cls, path: str | os.PathLike) -> "Comparison":
        try:
            return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError) as err:
            raise ReportError(f"{path}: cannot read comparison report: {err}") from None
        except ReportError as err:
            raise ReportError(f"{path}: {err}") from None

    def to_csv(self) -> str:
        """CSV: name, kind, metric columns (task's percentages first), then ``settings.<key>``."""
        metric_keys = _ordered_keys(PERCENT_KEYS[self.task], [r.metrics for r in self.rows])
        setting_keys = _ordered_keys((), [r.settings for r in self.rows])
        header = ["name", "kind"] + metric_keys + [f"settings.{k}" for k in setting_keys]
        rows = ([r.name, r.kind] + [_plain(r.metrics.get(k)) for k in metric_keys]
                + [_plain(r.settings.get(k)) for k in setting_keys] for r in self.rows)
        return _csv_text(header, rows)

    def write_csv(self, path: str | os.PathLike) -> Path:
        return atomic_write(path, self.to_csv())

    def write(self, path: str | os.PathLike) -> Path:
        """Write Markdown, JSON or CSV chosen by the suffix (.md, .json, .csv)."""
        fmt = figure_format(path, ("md", "json", "csv"))
        text = {"md": self.to_markdown, "json": self.to_json, "csv": self.to_csv}[fmt]()
        return atomic_write(path, text)


# --------------------------------------------------------------------------- layer sweep

@dataclass
class LayerSweep:
    """Scores per layer: ``rows`` are (layer, metrics dict) pairs, kept sorted by layer.

    ``metric_keys`` are the columns shown and plotted (empty: every percentage key found).
    """

    rows: list[tuple[int, dict[str, Any]]]
    metric_keys: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        rows = []
        for item in self.rows:
            try:
                layer, metrics = item
                layer = int(layer)
            except (TypeError, ValueError):
                raise ReportError(f"layer sweep rows must be (layer, metrics) pairs, got {item!r}") from None
            rows.append((layer, metrics_dict(metrics)))
        rows.sort(key=lambda r: r[0])
        layers = [layer for layer, _ in rows]
        dupes = sorted({layer for layer in layers if layers.count(layer) > 1})
        if dupes:
            raise ReportError(f"layer sweep has duplicate layer(s) {dupes}")
        self.rows = rows
        self.metric_keys = tuple(self.metric_keys) or tuple(
            k for k in ALL_PERCENT_KEYS if any(k in m for _, m in rows))
        self.meta = dict(self.meta)

    @property
    def layers(self) -> list[int]:
        return [layer for layer, _ in self.rows]

    def values(self, key: str) -> list[Any]:
        """The ``key`` column, one value (or None) per layer."""
        return [m.get(key) for _, m in self.rows]

    def best(self, key: str | None = None) -> tuple[int, float]:
        """(layer, value) with the highest ``key`` (default: the first metric key); first layer wins ties."""
        key = key or (self.metric_keys[0] if self.metric_keys else None)
        scored = [(v, -layer) for layer, v in zip(self.layers, self.values(key or "")) if _is_number(v)]
        if not scored:
            raise ReportError(f"layer sweep has no values for metric {key!r}")
        value, neg_layer = max(scored)
        return -neg_layer, value

    def to_markdown(self, *, mark_best: bool = True, header: bool = True) -> str:
        """Layer | metric columns, best layer per column in bold."""
        body = []
        best = {k: (_best_indices(self.values(k)) if mark_best else set()) for k in self.metric_keys}
        for i, (layer, m) in enumerate(self.rows):
            cells = [str(layer)]
            for k in self.metric_keys:
                text = _fmt(m.get(k), k in ALL_PERCENT_KEYS)
                cells.append(f"**{text}**" if i in best[k] else text)
            body.append(cells)
        head = ["Layer"] + [LABELS.get(k, k) for k in self.metric_keys]
        table = _markdown_table(head, body, [True] * len(head))
        if header and self.meta:
            table = _meta_line("Layer sweep", self.meta) + table
        return table

    def to_dict(self) -> dict[str, Any]:
        return {"metric_keys": list(self.metric_keys), "meta": _plain(self.meta),
                "rows": [{"layer": layer, **_plain(m)} for layer, m in self.rows]}

    def to_json(self, *, indent: int = 2) -> str:
        """JSON: {"metric_keys", "meta", "rows": [{"layer", <metric keys>}]}."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, allow_nan=False, default=str) + "\n"

    def write_json(self, path: str | os.PathLike) -> Path:
        return atomic_write(path, self.to_json())

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "LayerSweep":
        try:
            rows = [(r["layer"], {k: v for k, v in r.items() if k != "layer"}) for r in data["rows"]]
            return cls(rows, tuple(data.get("metric_keys") or ()), dict(data.get("meta") or {}))
        except (KeyError, TypeError, AttributeError) as err:
            raise ReportError(f"not a layer sweep: missing or malformed field {err}") from None

    def to_csv(self) -> str:
        """CSV: layer, metric keys first, then any other keys found."""
        keys = _ordered_keys(self.metric_keys, [m for _, m in self.rows])
        return _csv_text(["layer"] + keys, ([layer] + [m.get(k) for k in keys] for layer, m in self.rows))

    def write_csv(self, path: str | os.PathLike) -> Path:
        return atomic_write(path, self.to_csv())


def plot_layer_sweep(sweep: LayerSweep, path: str | os.PathLike, *,
                     baselines: Mapping[str, float] | None = None, title: str | None = None) -> Path:
    """Line plot of each metric key against layer, baselines as dashed horizontal lines.

    Format from the suffix (.png at 150 dpi, .svg, .pdf); returns the path written.
    """
    from matplotlib.ticker import MaxNLocator

    figure_format(path)  # fail before drawing
    if not sweep.rows:
        raise ReportError(f"{path}: layer sweep is empty, nothing to plot")
    fig = new_figure((7.2, 4.2))
    ax = fig.add_subplot()
    for key in sweep.metric_keys:
        points = [(layer, v) for layer, v in zip(sweep.layers, sweep.values(key)) if _is_number(v)]
        if points:
            xs, ys = zip(*points)
            ax.plot(xs, ys, marker="o", markersize=4, linewidth=1.8, label=LABELS.get(key, key))
    styles = ["--", "-.", ":", (0, (5, 2, 1, 2))]
    for n, (name, value) in enumerate((baselines or {}).items()):
        if value is None or not math.isfinite(float(value)):
            continue
        ax.axhline(float(value), linestyle=styles[n % len(styles)], linewidth=1.2, color=f"C{len(sweep.metric_keys) + n}",
                   label=f"{name} ({float(value):.1f})")
    percent = all(k in ALL_PERCENT_KEYS for k in sweep.metric_keys)
    ax.set_xlabel("layer")
    ax.set_ylabel("score (%)" if percent else "score")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(True, alpha=0.3)
    if title is None and sweep.meta:
        title = "Layer sweep · " + " · ".join(f"{k}: {_fmt(_plain(v), False)}" for k, v in sweep.meta.items())
    if title:
        ax.set_title(title, fontsize=10, parse_math=False)
    # Outside the axes so it never hides a curve or a baseline.
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)
    fig.tight_layout()
    return save_figure(fig, path)
