"""An impact matrix with its words as an inline SVG heatmap (HTML) or a PNG, like ``pmask heatmap``.

Rows are the measured word i, columns the masked word j (``F[i][j]`` = impact of word j on
word i); colours come from the same colormap and value range as :mod:`pmask.eval.figures.heatmap`, gold
arcs are outlined in red (the gold root's row dashed), predicted heads are white dots, and every
cell has a hover title with its value. The PNG is :mod:`pmask.eval.figures.heatmap`'s own figure.

Example:
    >>> from pmask.common.display import ImpactMap
    >>> "<svg" in impact_map_html(ImpactMap(["a", "b"], [[0.0, 1.0], [2.0, 0.0]]))
    True
"""
from __future__ import annotations

import io
import math
import warnings
from typing import Any

from pmask.common.display import ImpactMap
from pmask.eval.display.markup import COLOURS, FONT, el, esc, frame, scroll, style, text_width
from pmask.eval.figures.heatmap import (
    GOLD_COLOUR,
    HEATMAP_DPI,
    NAN_COLOUR,
    _check,
    _check_heads,
    _colormap,
    _draw,
    _value_range,
)
from pmask.eval.figures.heatmap_html import fmt_value

LABEL_PX = 12
SCALE_STEPS = 12


def _cell_size(n: int) -> float:
    return max(9.0, min(22.0, 560.0 / max(n, 1)))


def _prepared(m: ImpactMap) -> tuple[Any, list[str], list[int] | None, list[int] | None, Any, float, float]:
    where = m.title or "impact map"
    arr, words, heads = _check(m.F, m.words, m.gold_heads, where)
    pred = _check_heads(m.pred_heads, len(words), where, "predicted")
    lo, hi = _value_range(arr, None, None, where)
    return arr, words, heads, pred, _colormap("viridis", where), lo, hi


def _scale(x: float, y: float, height: float, cmap: Any, lo: float, hi: float) -> str:
    """A vertical colour bar (top = high) with its two end values."""
    from matplotlib.colors import to_hex

    step = height / SCALE_STEPS
    parts = [el("rect", x=f"{x:.1f}", y=f"{y + k * step:.1f}", width=12, height=f"{step + 0.5:.1f}",
                fill=to_hex(cmap(1 - k / (SCALE_STEPS - 1)))) for k in range(SCALE_STEPS)]
    for value, yy in ((hi, y + 9), (lo, y + height)):
        parts.append(el("text", esc(fmt_value(value)), x=f"{x + 16:.1f}", y=f"{yy:.1f}", font_size=10,
                        fill=COLOURS["muted"]))
    return "".join(parts)


def heatmap_svg(m: ImpactMap) -> str:
    """The heatmap of ``m`` as one ``<svg>`` element (words as text, so they stay searchable)."""
    from matplotlib.colors import Normalize, to_hex

    arr, words, heads, pred, cmap, lo, hi = _prepared(m)
    n, cell = len(words), _cell_size(len(words))
    label_w = max(text_width(w, LABEL_PX) for w in words) + 10
    left, top = label_w + 6, label_w * math.sin(math.radians(60)) + 14
    grid = n * cell
    width, height = left + grid + 70, top + grid + 10
    norm = Normalize(lo, hi, clip=True)
    parts: list[str] = []
    for j, w in enumerate(words):   # column labels, rotated, above the grid
        x = left + (j + 0.5) * cell
        parts.append(el("text", esc(w), x=f"{x:.1f}", y=f"{top - 6:.1f}", font_size=LABEL_PX, fill=COLOURS["ink"],
                        transform=f"rotate(-60 {x:.1f} {top - 6:.1f})"))
    roots = {k - 1 for k, h in enumerate(heads or [], 1) if h == 0}
    for i, wi in enumerate(words):
        y = top + i * cell
        parts.append(el("text", esc(wi), x=f"{left - 6:.1f}", y=f"{y + cell / 2 + 4:.1f}", text_anchor="end",
                        font_size=LABEL_PX, font_weight=700 if i in roots else None,
                        fill=GOLD_COLOUR if i in roots else COLOURS["ink"]))
        for j, wj in enumerate(words):
            v = float(arr[i, j])
            fill = NAN_COLOUR if math.isnan(v) else to_hex(cmap(norm(v)))
            tip = f"{j + 1} {wj} → {i + 1} {wi}: {fmt_value(v)}"
            parts.append(el("rect", el("title", esc(tip)), x=f"{left + j * cell:.1f}", y=f"{y:.1f}",
                            width=f"{cell:.1f}", height=f"{cell:.1f}", fill=fill))
    for k, h in enumerate(heads or [], 1):   # gold arcs: the cell (word k, its head); the root: its row
        x0, w0 = (left + (h - 1) * cell, cell) if h else (left, grid)
        parts.append(el("rect", x=f"{x0 + 1:.1f}", y=f"{top + (k - 1) * cell + 1:.1f}", width=f"{w0 - 2:.1f}",
                        height=f"{cell - 2:.1f}", fill="none", stroke=GOLD_COLOUR, stroke_width=1.8,
                        stroke_dasharray=None if h else "3 2"))
    for k, h in enumerate(pred or [], 1):    # predicted heads: a dot (the predicted root: on its diagonal)
        parts.append(el("circle", cx=f"{left + ((h or k) - 0.5) * cell:.1f}", cy=f"{top + (k - 0.5) * cell:.1f}",
                        r=f"{max(2.0, cell / 6):.1f}", fill="#ffffff", stroke="#000000", stroke_width=0.8))
    parts.append(_scale(left + grid + 12, top, grid, cmap, lo, hi))
    return el("svg", "".join(parts), width=f"{width:.0f}", height=f"{height:.0f}",
              viewBox=f"0 0 {width:.0f} {height:.0f}", role="img", style=style(font_family=FONT),
              aria_label="impact map: rows are the measured words, columns the masked words")


def _note(m: ImpactMap) -> str:
    note = "Cell (i, j): impact of masking word j (column) on word i (row); hover a cell for its value."
    if m.gold_heads is not None:
        note += " Red boxes: gold arcs (column = the row word's gold head); dashed row: gold root."
    if m.pred_heads is not None:
        note += " Dots: predicted heads (on the diagonal: predicted root)."
    return note


def impact_map_html(m: ImpactMap) -> str:
    """The heatmap with its title and a one-line key."""
    return frame(scroll(heatmap_svg(m)), m.title, _note(m))


def impact_map_png(m: ImpactMap) -> bytes:
    """The same figure ``pmask heatmap`` writes to ``.png``, as bytes."""
    arr, words, heads, pred, cmap, lo, hi = _prepared(m)
    fig = _draw(arr, words, heads, m.title, cmap, lo, hi, pred)
    buf = io.BytesIO()
    with warnings.catch_warnings():   # a word in a script the font lacks draws as boxes; the HTML shows it
        warnings.filterwarnings("ignore", message="Glyph .* missing", category=UserWarning)
        fig.savefig(buf, format="png", dpi=HEATMAP_DPI)
    return buf.getvalue()
