"""The result tables: :class:`Comparison` (``eval``: predictions next to baselines) and
:class:`LayerSweep` (``sweep``: scores per layer), as Markdown, JSON, CSV, and the sweep's
PNG/SVG/PDF plot (:func:`plot_layer_sweep`). ``pmask report``'s HTML page is :mod:`pmask.eval.html`.

Everything here works on plain score dicts, the ``to_dict()`` output of
``DependencyScore`` ({"uas", "uuas", "correct", "total"}) and ``BracketScore``
({"f1_sentence", "f1_corpus", "precision", "recall", ...}); percentages are 0-100. The score
columns and their labels are the score classes' (:mod:`pmask.eval.scores.columns`).
Files are written atomically (temporary file in the same folder, then ``os.replace``),
so a crashed run never leaves a half-written report behind. A notebook shows these tables as
HTML through :mod:`pmask.eval.display.tables` (the same concept, rendered).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from pmask.common.display import RichDisplay
from pmask.common.files import read_json
from pmask.common.labels import short_model_name
from pmask.common.units import unit_entry
from pmask.eval.outputs.writers import (
    FIGURE_DPI,
    FIGURE_FORMATS,
    KINDS,
    Kind,
    ReportError,
    TableFile,
    atomic_write,
    best_indices,
    csv_text,
    figure_format,
    fmt_value,
    is_number,
    markdown_table,
    meta_line,
    metrics_dict,
    new_figure,
    ordered_keys,
    plain_value,
    save_figure,
)
from pmask.eval.scores.columns import all_percent_keys, asked_in, is_percent_key, label, percent_keys, score_key, tasks
from pmask.trees.tasks import TASKS

# Row fields that are not metrics in the flat JSON row layout.
_RESERVED = ("name", "kind", "settings")

__all__ = ["FIGURE_DPI", "FIGURE_FORMATS", "KINDS",
           "Comparison", "ComparisonRow", "LayerSweep", "ReportError", "TableFile", "atomic_write", "figure_format",
           "metrics_dict", "new_figure", "plot_layer_sweep", "save_figure"]


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
                   settings: Mapping[str, Any] | None = None, **extra: float | int) -> ComparisonRow:
        """Row from a score object (``to_dict()``) or dict; ``extra`` adds counts such as ``sentences=``."""
        return cls(name, kind, {**metrics_dict(score), **extra}, dict(settings or {}))

    def to_dict(self) -> dict[str, Any]:
        """Flat JSON row: name, kind, every metric under its plain key, then settings."""
        return {"name": self.name, "kind": self.kind, **plain_value(self.metrics),
                "settings": plain_value(self.settings)}


def _header(noun: str) -> str:
    """A count's header: "Words", "EDUs", "Sentences", "Documents"."""
    return f"{noun[0].upper()}{noun[1:]}s"


@dataclass(repr=False)   # a short summary (__repr__), one line per row
class Comparison(TableFile, RichDisplay):
    """Induced trees next to every baseline, scored on the same sentences.

    ``meta`` records the run: gold file, punctuation setting, model, layer, ... Writes Markdown,
    JSON and CSV (:class:`~pmask.eval.outputs.writers.TableFile`). A notebook shows the table;
    :meth:`to_pandas` gives it as a data frame.
    """

    rows: list[ComparisonRow]
    task: str   # the name of its task (pmask.trees.tasks.TASKS), one that a score scores
    meta: dict[str, Any] = field(default_factory=dict)
    unit: str = "word"   # what the scored records are made of: their counts' headers (Words/EDUs, Sentences/Documents)

    def __post_init__(self) -> None:
        if self.task not in tasks():
            raise ReportError(f"comparison task must be {' or '.join(map(repr, tasks()))}, not {self.task!r}")
        self.rows = list(self.rows)
        self.meta = dict(self.meta)

    def add(self, name: str, score: Any, *, kind: Kind = "model",
            settings: Mapping[str, Any] | None = None, **extra: float | int) -> ComparisonRow:
        """Append a row built with :meth:`ComparisonRow.from_score` and return it."""
        row = ComparisonRow.from_score(name, score, kind=kind, settings=settings, **extra)
        self.rows.append(row)
        return row

    def score_keys(self) -> tuple[str, ...]:
        """The score columns of the task's scores, headline first, and of the optional scores its rows
        hold (:func:`pmask.eval.scores.columns.percent_keys`)."""
        return percent_keys(self.task, asked_in(r.metrics for r in self.rows))

    def row_lines(self, limit: int = 10) -> list[str]:
        """One line per row (name, kind, the task's scores), at most ``limit`` rows, then how many more."""
        width = min(max((len(r.name) for r in self.rows), default=0), 40)
        lines = []
        for row in self.rows[:limit]:
            scores = "  ".join(f"{label(k)} {fmt_value(row.metrics.get(k), True):>6}" for k in self.score_keys())
            lines.append(f"  {row.name[:width]:<{width}}  {row.kind:<8}  {scores}")
        if len(self.rows) > limit:
            lines.append(f"  … and {len(self.rows) - limit} more rows")
        return lines

    def __repr__(self) -> str:
        return "\n".join([f"Comparison ({self.task}, {len(self.rows)} rows)", *self.row_lines()])

    # -- columns
    def _columns(self) -> list[tuple[str, str, bool, Any]]:
        """(label, key, is_percent, getter) for the Markdown table; all-empty count columns dropped."""
        cols: list[tuple[str, str, bool, Any]] = [
            (label(k), k, True, (lambda m, k=k: m.get(k))) for k in self.score_keys()
        ]
        unit = unit_entry(self.unit)   # the keys stay words and sentences: the headers say what was counted
        task = TASKS.get(self.task)
        if task is not None and task.per_word:   # a score of words: its count of scored words
            cols.append((_header(unit.noun), "words", False, lambda m: m.get("words", m.get("total"))))
        cols.append((_header(unit.record), "sentences", False, lambda m: m.get("sentences")))
        return [c for c in cols if c[2] or any(c[3](r.metrics) is not None for r in self.rows)]

    def to_markdown(self, *, mark_best: bool = True, header: bool = True) -> str:
        """GitHub Markdown table (padded for the terminal), best score per column in bold.

        With ``header`` a one-line summary of ``meta`` precedes the table.
        """
        cols = self._columns()
        with_settings = any(r.settings for r in self.rows)
        values = [[get(r.metrics) for (_, _, _, get) in cols] for r in self.rows]
        best = [best_indices([v[c] for v in values]) if mark_best and cols[c][2] else set()
                for c in range(len(cols))]
        body = []
        for i, row in enumerate(self.rows):
            cells = [row.name, row.kind]
            for c, (_, _, percent, _) in enumerate(cols):
                text = fmt_value(values[i][c], percent)
                cells.append(f"**{text}**" if i in best[c] else text)
            if with_settings:
                cells.append(", ".join(f"{k}={fmt_value(plain_value(v), False)}" for k, v in row.settings.items()))
            body.append(cells)
        head = ["Name", "Kind"] + [c[0] for c in cols] + (["Settings"] if with_settings else [])
        numeric = [False, False] + [True] * len(cols) + ([False] if with_settings else [])
        table = markdown_table(head, body, numeric)
        if header:
            table = meta_line(f"{self.task.capitalize()} comparison", self.meta) + table
        return table

    def to_dict(self) -> dict[str, Any]:
        """The JSON layout: {"task", "meta", "rows": [{"name", "kind", <metric keys>, "settings"}]}."""
        return {"task": self.task, "meta": plain_value(self.meta), "rows": [r.to_dict() for r in self.rows]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Comparison:
        """Inverse of :meth:`to_dict`."""
        try:
            rows = [ComparisonRow(r["name"], r["kind"], {k: v for k, v in r.items() if k not in _RESERVED},
                                  dict(r.get("settings") or {})) for r in data["rows"]]
            return cls(rows, data["task"], dict(data.get("meta") or {}))
        except (KeyError, TypeError, AttributeError) as err:
            raise ReportError(f"not a comparison report: missing or malformed field {err}") from None

    @classmethod
    def read_json(cls, path: str | os.PathLike) -> Comparison:
        try:
            return cls.from_dict(read_json(path, missing="raise"))
        except (OSError, json.JSONDecodeError) as err:
            raise ReportError(f"{path}: cannot read comparison report: {err}") from None
        except ReportError as err:
            raise ReportError(f"{path}: {err}") from None

    def to_csv(self) -> str:
        """CSV: name, kind, metric columns (task's percentages first), then ``settings.<key>``."""
        metric_keys = ordered_keys(self.score_keys(), [r.metrics for r in self.rows])
        setting_keys = ordered_keys((), [r.settings for r in self.rows])
        header = ["name", "kind"] + metric_keys + [f"settings.{k}" for k in setting_keys]
        rows = ([r.name, r.kind] + [plain_value(r.metrics.get(k)) for k in metric_keys]
                + [plain_value(r.settings.get(k)) for k in setting_keys] for r in self.rows)
        return csv_text(header, rows)

    def to_pandas(self) -> Any:
        """The rows as a pandas ``DataFrame`` (name, kind, scores, ``settings.<key>``); needs ``pmask[pandas]``."""
        from pmask.eval.outputs.frames import comparison_frame

        return comparison_frame(self)


# --------------------------------------------------------------------------- layer sweep

@dataclass
class LayerSweep(TableFile, RichDisplay):
    """Scores per layer: ``rows`` are (layer, metrics dict) pairs, kept sorted by layer.
    A notebook shows the table and the plot; :meth:`to_pandas` gives one row per layer.

    ``metric_keys`` are the columns shown and plotted (empty: every percentage key found); a key
    may name a probe before its score (``"pair uas"``: a percentage like ``uas``).
    ``baselines`` (name → scores under the same keys) follow the layers in the table, the JSON
    (``"baselines"``) and the CSV (a ``baseline`` column naming them, ``layer`` empty).
    Writes Markdown, JSON and CSV (:class:`~pmask.eval.outputs.writers.TableFile`).
    """

    rows: list[tuple[int, dict[str, Any]]]
    metric_keys: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)
    baselines: dict[str, dict[str, Any]] = field(default_factory=dict)

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
            k for k in all_percent_keys() if any(k in m for _, m in rows))
        self.meta = dict(self.meta)
        self.baselines = {str(name): metrics_dict(m) for name, m in dict(self.baselines).items()}

    @property
    def layers(self) -> list[int]:
        return [layer for layer, _ in self.rows]

    def values(self, key: str) -> list[Any]:
        """The ``key`` column, one value (or None) per layer."""
        return [m.get(key) for _, m in self.rows]

    def best(self, key: str | None = None) -> tuple[int, float]:
        """(layer, value) with the highest ``key`` (default: the first metric key); first layer wins ties."""
        key = key or (self.metric_keys[0] if self.metric_keys else None)
        scored = [(v, -layer) for layer, v in zip(self.layers, self.values(key or "")) if is_number(v)]
        if not scored:
            raise ReportError(f"layer sweep has no values for metric {key!r}")
        value, neg_layer = max(scored)
        return -neg_layer, value

    def to_markdown(self, *, mark_best: bool = True, header: bool = True) -> str:
        """Layer | metric columns, best layer per column in bold; the baselines' rows after the layers."""
        body = []
        best = {k: (best_indices(self.values(k)) if mark_best else set()) for k in self.metric_keys}
        for i, (layer, m) in enumerate(self.rows):
            cells = [str(layer)]
            for k in self.metric_keys:
                text = fmt_value(m.get(k), is_percent_key(k))
                cells.append(f"**{text}**" if i in best[k] else text)
            body.append(cells)
        body += [[f"{name} (baseline)", *(fmt_value(m.get(k), is_percent_key(k)) for k in self.metric_keys)]
                 for name, m in self.baselines.items()]
        head = ["Layer"] + [label(k) for k in self.metric_keys]
        table = markdown_table(head, body, [True] * len(head))
        if header and self.meta:
            shown = {k: short_model_name(v) if k == "model" and isinstance(v, str) else v for k, v in self.meta.items()}
            table = meta_line("Layer sweep", shown) + table   # the full model path stays in to_dict()
        return table

    def to_dict(self) -> dict[str, Any]:
        """The JSON layout: {"metric_keys", "meta", "rows": [{"layer", <metric keys>}]}, and with
        baselines ``"baselines": [{"name", <metric keys>}]``."""
        base = {"baselines": [{"name": name, **plain_value(m)} for name, m in self.baselines.items()]} \
            if self.baselines else {}
        return {"metric_keys": list(self.metric_keys), "meta": plain_value(self.meta),
                "rows": [{"layer": layer, **plain_value(m)} for layer, m in self.rows], **base}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LayerSweep:
        try:
            rows = [(r["layer"], {k: v for k, v in r.items() if k != "layer"}) for r in data["rows"]]
            base = {b["name"]: {k: v for k, v in b.items() if k != "name"} for b in data.get("baselines") or []}
            return cls(rows, tuple(data.get("metric_keys") or ()), dict(data.get("meta") or {}), base)
        except (KeyError, TypeError, AttributeError) as err:
            raise ReportError(f"not a layer sweep: missing or malformed field {err}") from None

    def to_csv(self) -> str:
        """CSV: layer, metric keys first, then any other keys found; with baselines a ``baseline``
        column after ``layer`` names them on their own rows (``layer`` empty)."""
        keys = ordered_keys(self.metric_keys, [m for _, m in self.rows])
        if not self.baselines:
            return csv_text(["layer"] + keys, ([layer] + [m.get(k) for k in keys] for layer, m in self.rows))
        rows = [[layer, None] + [m.get(k) for k in keys] for layer, m in self.rows]
        rows += [[None, name] + [m.get(k) for k in keys] for name, m in self.baselines.items()]
        return csv_text(["layer", "baseline"] + keys, rows)

    def to_pandas(self) -> Any:
        """One row per layer (the index), one column per metric; needs ``pmask[pandas]``."""
        from pmask.eval.outputs.frames import sweep_frame

        return sweep_frame(self)


def plot_layer_sweep(sweep: LayerSweep, path: str | os.PathLike, *,
                     baselines: Mapping[str, float] | None = None, title: str | None = None,
                     baseline_key: str | None = None) -> Path:
    """Line plot of each metric key against layer, baselines as dashed horizontal lines.

    The y axis names the scores shown (e.g. "UAS / UUAS (%)"); ``baseline_key`` names the score
    the baseline values are (e.g. "uas"), shown in their legend entries. Format from the suffix
    (.png at 150 dpi, .svg, .pdf); returns the path written.
    """
    from matplotlib.ticker import MaxNLocator

    figure_format(path)  # fail before drawing
    if not sweep.rows:
        raise ReportError(f"{path}: layer sweep is empty, nothing to plot")
    fig = new_figure((7.2, 4.2))
    ax = fig.add_subplot()
    for key in sweep.metric_keys:
        points = [(layer, v) for layer, v in zip(sweep.layers, sweep.values(key)) if is_number(v)]
        if points:
            xs, ys = zip(*points)
            ax.plot(xs, ys, marker="o", markersize=4, linewidth=1.8, label=label(key))
    styles = ["--", "-.", ":", (0, (5, 2, 1, 2))]
    for n, (name, value) in enumerate((baselines or {}).items()):
        if value is None or not math.isfinite(float(value)):
            continue
        ax.axhline(float(value), linestyle=styles[n % len(styles)], linewidth=1.2,
                   color=f"C{len(sweep.metric_keys) + n}",
                   label=f"{name} ({label(baseline_key) + ' ' if baseline_key else ''}"
                         f"{float(value):.1f})")
    percent = all(is_percent_key(k) for k in sweep.metric_keys)
    ax.set_xlabel("layer")
    # the scores plotted, once each: "UAS / UUAS", or "UAS" for one line per probe ("pair uas", "attention uas")
    scores = dict.fromkeys(label(score_key(k)) for k in sweep.metric_keys)
    names = " / ".join(scores) or "score"
    ax.set_ylabel(f"{names} (%)" if percent else names)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(True, alpha=0.3)
    if title is None and sweep.meta:
        title = "Layer sweep · " + " · ".join(f"{k}: {fmt_value(plain_value(v), False)}" for k, v in sweep.meta.items())
    if title:
        ax.set_title(title, fontsize=10, parse_math=False)
    # Outside the axes so it never hides a curve or a baseline.
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)
    fig.tight_layout()
    return save_figure(fig, path)

