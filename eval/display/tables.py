"""Result tables as static HTML: comparisons, layer sweeps (with their plot), bench studies, evaluations.

The same columns as the Markdown tables (:mod:`pmask.eval.comparison.tables`, :mod:`pmask.eval.studies.bench.results`):
percentages with two decimals, the best value of each score column in bold, the model rows
shaded. Layer plots are :func:`pmask.eval.comparison.tables.plot_layer_sweep`'s PNG, inlined as a data URI.

Example:
    >>> from pmask.eval.comparison.tables import LayerSweep
    >>> "<table" in sweep_html(LayerSweep([(1, {"uas": 30.0}), (2, {"uas": 41.7})]), plot=False)
    True
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Mapping, Sequence

from pmask.common.labels import plural
from pmask.eval.display.markup import COLOURS, el, esc, frame, png_img, scroll, style
from pmask.eval.outputs.writers import best_indices, fmt_value, plain_value
from pmask.eval.scores.columns import headline_key, is_percent_key, label

_CELL = dict(padding="3px 10px", border_bottom=f"1px solid {COLOURS['line']}")


def html_table(head: Sequence[str], rows: Sequence[Sequence[Any]], *, numeric: Sequence[bool],
               percent: Sequence[bool] | None = None, best: Sequence[bool] | None = None,
               shaded: Sequence[bool] | None = None) -> str:
    """A ``<table>``; ``best[c]`` marks column c's maximum in bold, ``shaded[r]`` tints row r."""
    percent = percent or [False] * len(head)
    bold = [best_indices([r[c] for r in rows]) if best and best[c] else set() for c in range(len(head))]
    out = [el("tr", "".join(el("th", esc(h), style=style(**_CELL, text_align="right" if num else "left",
                                                          color=COLOURS["muted"], font_weight=600))
                            for h, num in zip(head, numeric)))]
    for r, row in enumerate(rows):
        cells = []
        for c, value in enumerate(row):
            text = fmt_value(plain_value(value), percent[c]) if numeric[c] else ("" if value is None else str(value))
            cells.append(el("td", esc(text), style=style(**_CELL, text_align="right" if numeric[c] else "left",
                                                          font_weight=700 if r in bold[c] else None,
                                                          font_variant_numeric="tabular-nums")))
        tint = COLOURS["best"] if shaded and shaded[r] else None
        out.append(el("tr", "".join(cells), style=style(background=tint)))
    return el("table", "".join(out), style=style(border_collapse="collapse", font_size="13px", margin="4px 0"))


def _meta_note(meta: Mapping[str, Any]) -> str | None:
    parts = [f"{k}: {fmt_value(plain_value(v), False)}" for k, v in meta.items() if v is not None]
    return " · ".join(parts) or None


def comparison_html(comparison: Any) -> str:
    """A :class:`~pmask.eval.comparison.tables.Comparison`: name, kind, scores, counts and settings per row."""
    cols = comparison._columns()
    with_settings = any(r.settings for r in comparison.rows)
    head = ["Name", "Kind"] + [c[0] for c in cols] + (["Settings"] if with_settings else [])
    rows = []
    for r in comparison.rows:
        settings = [", ".join(f"{k}={fmt_value(plain_value(v), False)}" for k, v in r.settings.items())]
        scores = [get(r.metrics) for (_, _, _, get) in cols]
        rows.append([r.name, r.kind, *scores] + (settings if with_settings else []))
    extra = [False] * with_settings
    table = html_table(head, rows, numeric=[False, False] + [True] * len(cols) + extra,
                       percent=[False, False] + [c[2] for c in cols] + extra,
                       best=[False, False] + [c[2] for c in cols] + extra,
                       shaded=[r.kind == "model" for r in comparison.rows])
    return frame(scroll(table), f"{comparison.task.capitalize()} comparison", _meta_note(comparison.meta))


def sweep_png(sweep: Any, *, baselines: Mapping[str, float] | None = None, title: str | None = None,
              baseline_key: str | None = None) -> bytes | None:
    """The layer plot of ``sweep`` as PNG bytes (None for an empty sweep)."""
    from pmask.eval.comparison.tables import plot_layer_sweep

    if not sweep.rows:
        return None
    with tempfile.TemporaryDirectory(prefix="pmask-display-") as tmp:
        path = plot_layer_sweep(sweep, Path(tmp) / "layers.png", baselines=baselines, title=title,
                                baseline_key=baseline_key)
        return path.read_bytes()


def sweep_html(sweep: Any, *, baselines: Mapping[str, float] | None = None, title: str | None = None,
               baseline_key: str | None = None, plot: bool = True) -> str:
    """A :class:`~pmask.eval.comparison.tables.LayerSweep`: one row per layer (best in bold), then its plot."""
    keys = list(sweep.metric_keys)
    rows = [[layer] + [m.get(k) for k in keys] for layer, m in sweep.rows]
    table = html_table(["Layer"] + [label(k) for k in keys], rows, numeric=[True] * (len(keys) + 1),
                       percent=[False] + [is_percent_key(k) for k in keys], best=[False] + [True] * len(keys))
    if baselines:
        key = label(baseline_key) if baseline_key else "score"
        table += html_table(["Baseline", key], [[name, value] for name, value in baselines.items()],
                            numeric=[False, True], percent=[False, True])
    image = sweep_png(sweep, baselines=baselines, title=title, baseline_key=baseline_key) if plot else None
    body = el("div", table, style=style(display="inline-block", vertical_align="top", margin_right="18px"))
    if image is not None:
        body += el("div", png_img(image, "score against layer", width=560),
                   style=style(display="inline-block", max_width="100%"))
    return frame(body, title or "Layer sweep", _meta_note(sweep.meta))


def sweep_result_html(result: Any) -> str:
    """A :class:`~pmask.eval.studies.sweep.SweepResult`: the sweep with its baselines and title."""
    return sweep_html(result.sweep, baselines=result.baselines or None, title=result.title or None,
                      baseline_key=headline_key(result.task))


def sweep_result_png(result: Any) -> bytes | None:
    return sweep_png(result.sweep, baselines=result.baselines or None, title=result.title or None,
                     baseline_key=headline_key(result.task))


def bench_html(result: Any) -> str:
    """A :class:`~pmask.eval.studies.bench.run.BenchResult`: best layer per treebank and decoder, the score of
    every layer, and the baselines on the same sentences."""
    from pmask.eval.scores.columns import decoder_headline, short_label
    from pmask.eval.studies.bench.results import best_layers
    from pmask.eval.studies.bench.rows import primary_key

    best = best_layers(result)
    parts = [el("div", "Best layer per treebank", style=style(font_weight=600, margin="6px 0 2px")),
             html_table(["Treebank", "Language", "Decoder", "Scored by", "Best layer", "Score", "Baseline",
                         "Baseline score", "Margin"],
                        [[b["treebank"], b["language"], b["decoder"], short_label(b["metric"]), b["layer"], b["score"],
                          b["baseline"], b["baseline_score"], b["margin"]] for b in best],
                        numeric=[False, False, False, False, True, True, False, True, True],
                        percent=[False] * 5 + [True, False, True, True])]
    layers = sorted({r["layer"] for r in result.rows})
    cells: dict[tuple[str, str], dict[int, Any]] = {}
    for r in result.rows:
        cells.setdefault((r["treebank"], r["decoder"]), {})[r["layer"]] = r[primary_key(r)]
    parts += [el("div", "Score by layer (UAS; UUAS for undirected decoders; sentence F1 for PTB)",
                 style=style(font_weight=600, margin="10px 0 2px")),
              scroll(html_table(["Treebank", "Decoder", "Scored by"] + [f"L{k}" for k in layers],
                                [[tb, dec, short_label(decoder_headline(dec))] + [by.get(k) for k in layers]
                                 for (tb, dec), by in cells.items()],
                                numeric=[False, False, False] + [True] * len(layers),
                                percent=[False, False, False] + [True] * len(layers)))]
    names = list(dict.fromkeys(b["baseline"] for b in result.baselines))
    if names:
        rows = []
        for tb in dict.fromkeys(b["treebank"] for b in result.baselines):
            by = {b["baseline"]: b[primary_key(b)] for b in result.baselines if b["treebank"] == tb}
            rows.append([tb] + [by.get(name) for name in names])
        parts += [el("div", "Baselines (same sentences)", style=style(font_weight=600, margin="10px 0 2px")),
                  html_table(["Treebank"] + names, rows, numeric=[False] + [True] * len(names),
                             percent=[False] + [True] * len(names))]
    model = result.model.get("name", result.settings.model.name)
    note = (f"{plural(len(result.treebanks), 'treebank')}, {plural(len(result.rows), 'row')}; "
            f"metric {result.settings.model.impact.metric}, "
            f"root {result.settings.root}; {result.timing.get('total_seconds', 0.0):.1f} s")
    return frame("".join(parts), f"pmask bench: {model}", note)


def evaluation_html(evaluation: Any) -> str:
    """An :class:`~pmask.eval.comparison.compare.Evaluation`: its comparison table (prediction and baselines)."""
    if evaluation.table is None:
        return frame(el("div", esc(repr(evaluation.score.to_dict()))), evaluation.name)
    return comparison_html(evaluation.table)
