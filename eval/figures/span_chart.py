"""Span charts (probe distortion) drawn as start × length maps, gold brackets outlined, predicted spans dotted.

A span chart scores every span of a sentence (``chart[l, r-1]`` for words l..r-1, low = constituent).
The map puts the span's first word on the x axis and its length on the y axis (length 1 at the
bottom, the whole sentence at the top), so every cell is one span and the chart's upper triangle
becomes a triangle standing on the words. Each length's scores are shown L2-normalised, as the
``cky`` decoder reads them (:func:`pmask.trees.cky.normalise_by_length`); the whole sentence has
no score and is left blank. Gold spans (the bracketed tree's nodes of ≥ 2 words) are outlined,
predicted ones get a dot.

Example:
    >>> chart = np.array([[0.1, 0.2, 0.0], [0.0, 0.3, 0.9], [0.0, 0.0, 0.2]])
    >>> grid = start_length_grid(chart)
    >>> grid.shape, bool(np.isnan(grid[2, 1]))
    ((3, 3), True)
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from pmask.eval.figures.heatmap import HeatmapError
from pmask.eval.outputs.writers import atomic_write, save_figure
from pmask.trees.cky import normalise_by_length

Span = tuple[int, int]


def start_length_grid(chart: np.ndarray, normalise: bool = True) -> np.ndarray:
    """``grid[length-1, start]`` = the (normalised) score of the span of ``length`` words from ``start``;
    NaN where no span is (start + length > n) and for the whole sentence."""
    S = np.asarray(chart, dtype=np.float64)
    n = S.shape[0]
    values = normalise_by_length(S) if normalise else S
    grid = np.full((n, n), np.nan)
    for length in range(1, n + 1):
        for start in range(n - length + 1):
            if length < n:
                grid[length - 1, start] = values[start, start + length - 1]
    return grid


def render_span_chart(chart: np.ndarray, words: Sequence[str], path: str | os.PathLike, *,
                      gold_spans: Iterable[Span] | None = None, pred_spans: Iterable[Span] | None = None,
                      title: str | None = None, cmap: str = "viridis_r") -> Path:
    """Draw ``chart`` (n × n span scores) as a start × length map into ``path`` (.png, .svg, .pdf, .html).

    Args:
        chart: the span chart, ``chart[l, r-1]`` for words l..r-1.
        words: the n words (x-axis labels).
        path: the output; its suffix decides the format (.html: one self-contained page holding the SVG).
        gold_spans: spans [l, r) outlined in white (those of ≥ 2 words are drawn).
        pred_spans: spans [l, r) marked with a dot.
        title: drawn above the map.
        cmap: colour map; reversed viridis by default, so that low scores (constituents) are bright.

    Returns:
        The path written (atomically).
    """
    from matplotlib.figure import Figure

    fmt = Path(path).suffix.lower().lstrip(".")
    if fmt not in ("png", "svg", "pdf", "html"):
        raise HeatmapError(f"{path}: unsupported span-chart format {Path(path).suffix or '(no suffix)'!r}; "
                           f"use .png, .svg, .pdf or .html")
    n = len(words)
    S = np.asarray(chart)
    if S.shape != (n, n):
        raise HeatmapError(f"{path}: span chart of shape {S.shape} for {n} words")
    grid = start_length_grid(S)
    size = max(4.0, 0.45 * n + 2.0)
    fig = Figure(figsize=(size + 1.2, size * 0.75 + 1.0))
    ax = fig.add_subplot()
    image = ax.imshow(np.ma.masked_invalid(grid), origin="lower", cmap=cmap, aspect="auto",
                      extent=(-0.5, n - 0.5, 0.5, n + 0.5))
    fig.colorbar(image, ax=ax, label="normalised span score (low = constituent)")
    from matplotlib.patches import Rectangle

    for a, b in sorted(set(gold_spans or ())):
        if b - a >= 2:
            ax.add_patch(Rectangle((a - 0.5, b - a - 0.5), 1, 1, fill=False, edgecolor="white", linewidth=2.0))
    dots = [(a, b - a) for a, b in set(pred_spans or ()) if b - a >= 2]
    if dots:
        ax.scatter([x for x, _ in dots], [y for _, y in dots], s=18, c="red", zorder=3, label="predicted")
    ax.set_xticks(range(n))
    ax.set_xticklabels(list(words), rotation=60, ha="right")
    ax.set_yticks(range(1, n + 1))
    ax.set_xlabel("first word of the span (gold spans outlined, predicted dotted)")
    ax.set_ylabel("span length (words)")
    if title:
        ax.set_title(title)
    fig.tight_layout()
    if fmt == "html":
        import io

        buffer = io.StringIO()
        fig.savefig(buffer, format="svg")
        page = ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>"
                f"{_escape(title or 'span chart')}</title></head><body>{buffer.getvalue()}</body></html>")
        return atomic_write(Path(path), page.encode("utf-8"))
    return save_figure(fig, path, dpi=150)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def tree_spans(tree: Any) -> set[Span]:
    """The spans [l, r) of ≥ 2 words of an ``nltk.Tree`` (None: none)."""
    if tree is None:
        return set()
    from pmask.corpora.brackets import spans

    return {(a, b) for a, b in spans(tree) if b - a >= 2}
