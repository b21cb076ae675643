"""Impact-map heatmaps: PNG/SVG/PDF through matplotlib, or one self-contained HTML file.

Convention: ``F`` is the n×n word-level impact matrix, ``F[i][j]`` = impact of word j on word i. Rows (y axis)
are the measured word i, columns (x axis) the masked word j. ``gold_heads`` follows CoNLL-U: ``gold_heads[k-1]``
is the 1-based head of word k, 0 = ROOT; the gold arc of word k is drawn on cell (row k-1, column h-1) and the
root word's row is marked as a whole.

The drawing behind ``pmask heatmap`` (:mod:`pmask.cli.commands.heatmap`, through
:mod:`pmask.eval.figures.impact_maps`).
"""
from __future__ import annotations

import logging
import math
import os
import re
import textwrap
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from pmask.common.errors import PmaskError
from pmask.common.labels import short_label
from pmask.common.options import HEATMAP_FORMATS
from pmask.common.output_checks import make_output_folder
from pmask.common.progress import progress_bar
from pmask.common.units import unit_entry
from pmask.corpora.sentence import NO_HEAD
from pmask.eval.figures.heatmap_html import heatmap_page
from pmask.eval.outputs.writers import atomic_write, new_figure, save_figure

logger = logging.getLogger(__name__)

HEATMAP_DPI = 150
GOLD_COLOUR = "#e8112d"
NAN_COLOUR = "#d0d0d0"
PRED_COLOUR = "#ffffff"

# Sizing rule (inches). Cells are fixed-size so labels never crowd; margins grow with the
# rendered width of the longest (truncated) word; the total is rounded up to a whole number
# of pixels at HEATMAP_DPI.
CELL_IN = 0.30
MIN_GRID_IN = 2.4
LABEL_PT = 9
LINE_IN = 1.25 * LABEL_PT / 72
X_ROTATION = 60
CAPTION_PT = 7.5
CAPTION_LINE_IN = 1.3 * CAPTION_PT / 72


class HeatmapError(PmaskError, ValueError):
    """Input a heatmap cannot be drawn from (unknown format, F not n×n, bad gold heads)."""


# --------------------------------------------------------------------------- input checks

def _check_heads(given: Sequence[int] | None, n: int, where: str, what: str) -> list[int] | None:
    if given is None:
        return None
    heads = [int(h) for h in given]
    if len(heads) != n:
        raise HeatmapError(f"{where}: {len(heads)} {what} heads for {n} words")
    bad = [(k, h) for k, h in enumerate(heads, start=1)   # a predicted unit left out (NO_HEAD): no dot
           if not (0 <= h <= n or (h == NO_HEAD and what == "predicted")) or h == k]
    if bad:
        k, h = bad[0]
        raise HeatmapError(f"{where}: {what} head {h} of word {k} is out of range 0..{n} or points at itself")
    return heads


def _check(F: Any, words: Sequence[str], gold_heads: Sequence[int] | None, where: str
           ) -> tuple[np.ndarray, list[str], list[int] | None]:
    words = [str(w) for w in words]
    n = len(words)
    if n == 0:
        raise HeatmapError(f"{where}: empty sentence, nothing to draw")
    try:
        arr = np.asarray(F, dtype=float)
    except (TypeError, ValueError) as err:
        raise HeatmapError(f"{where}: impact matrix is not numeric ({err})") from None
    if arr.shape != (n, n):
        raise HeatmapError(f"{where}: impact matrix has shape {arr.shape}, expected ({n}, {n}) for {n} words")
    if np.isinf(arr).any():
        i, j = map(int, np.argwhere(np.isinf(arr))[0])
        raise HeatmapError(f"{where}: impact matrix has an infinite value at F[{i}][{j}]")
    heads = _check_heads(gold_heads, n, where, "gold")
    return arr, words, heads


def _value_range(arr: np.ndarray, vmin: float | None, vmax: float | None, where: str) -> tuple[float, float]:
    finite = arr[np.isfinite(arr)]
    lo = float(vmin) if vmin is not None else (float(finite.min()) if finite.size else 0.0)
    hi = float(vmax) if vmax is not None else (float(finite.max()) if finite.size else 1.0)
    if vmin is not None and vmax is not None and lo > hi:
        raise HeatmapError(f"{where}: vmin {lo} is greater than vmax {hi}")
    if hi <= lo:  # constant matrix: widen so the colour bar is not singular
        lo, hi = (lo - 0.5, lo + 0.5) if vmin is None else (lo, lo + 1.0)
    return lo, hi


def _colormap(name: str, where: str) -> Any:
    import matplotlib

    try:
        cmap = matplotlib.colormaps[name]
    except KeyError:
        raise HeatmapError(f"{where}: unknown matplotlib colormap {name!r}") from None
    return cmap.with_extremes(bad=NAN_COLOUR)


# --------------------------------------------------------------------------- matplotlib

def _text_width_in(text: str, size: float, weight: str = "normal") -> float:
    """Rendered width (inches) of ``text`` at ``size`` points, from matplotlib's font metrics."""
    import warnings

    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    with warnings.catch_warnings():  # missing glyphs are reported once, when drawing
        warnings.simplefilter("ignore", UserWarning)
        font = FontProperties(size=size, weight=weight)
        width_pt, _, _ = TextToPath().get_text_width_height_descent(text, font, ismath=False)
    return 1.05 * width_pt / 72


def _label_width_in(word: str) -> float:
    """Rendered width (inches) of a tick label in bold (the root label is bold)."""
    return _text_width_in(short_label(word), LABEL_PT, "bold")


def _layout(words: Sequence[str], title: str | None, gold: bool, caption_lines: int = 1) -> dict[str, float]:
    """Margins and grid size in inches (see the sizing rule above)."""
    n = len(words)
    label_in = max(_label_width_in(w) for w in words)
    rot = math.radians(X_ROTATION)
    grid = max(n * CELL_IN, MIN_GRID_IN)
    left = 0.25 + 0.10 + label_in + 0.12                                    # y axis label, pad, tick labels
    bottom = 0.25 + 0.10 + label_in * math.sin(rot) + LINE_IN * math.cos(rot) + 0.10  # x label, rotated ticks
    top = 0.20 + (0.28 if title else 0.0) + (0.24 + CAPTION_LINE_IN * (caption_lines - 1) if gold else 0.0)
    right = 0.18 + 0.18 + 0.85                                             # gap, colour bar, its ticks+label
    return {"grid": grid, "left": left, "bottom": bottom, "top": top, "right": right}


def heatmap_figsize(words: Sequence[str], *, title: str | None = None, gold: bool = False,
                    caption_lines: int = 1) -> tuple[float, float]:
    """Figure size (inches) :func:`render_heatmap` uses; PNG pixels = size × HEATMAP_DPI exactly.
    ``gold``: arcs are marked (a caption explains them, on ``caption_lines`` lines)."""
    lay = _layout([str(w) for w in words], title, gold, caption_lines)
    w = lay["left"] + lay["grid"] + lay["right"]
    h = lay["bottom"] + lay["grid"] + lay["top"]
    return math.ceil(w * HEATMAP_DPI) / HEATMAP_DPI, math.ceil(h * HEATMAP_DPI) / HEATMAP_DPI


def _draw(arr: np.ndarray, words: list[str], heads: list[int] | None, title: str | None,
          cmap: Any, lo: float, hi: float, pred: list[int] | None = None, noun: str = "word") -> Any:
    from matplotlib.patches import Rectangle

    n = len(words)
    marked = heads is not None or pred is not None
    caption = _caption(heads is not None, pred is not None, heatmap_figsize(words, title=title, gold=marked)[0], noun)
    lay = _layout(words, title, marked, len(caption))
    W, H = heatmap_figsize(words, title=title, gold=marked, caption_lines=len(caption))
    fig = new_figure((W, H), HEATMAP_DPI)
    g = lay["grid"]
    ax = fig.add_axes((lay["left"] / W, lay["bottom"] / H, g / W, g / H))
    cax = fig.add_axes(((lay["left"] + g + 0.18) / W, lay["bottom"] / H, 0.18 / W, g / H))

    image = ax.imshow(np.ma.masked_invalid(arr), cmap=cmap, vmin=lo, vmax=hi,
                      aspect="auto", interpolation="nearest")
    labels = [short_label(w) for w in words]
    ticks = list(range(n))
    ax.set_xticks(ticks, labels, rotation=X_ROTATION, ha="right", rotation_mode="anchor",
                  fontsize=LABEL_PT, parse_math=False)
    ax.set_yticks(ticks, labels, fontsize=LABEL_PT, parse_math=False)
    ax.tick_params(length=2)
    ax.set_xlabel(f"{noun} j (masked)", fontsize=10)
    ax.set_ylabel(f"{noun} i (measured)", fontsize=10)
    cbar = fig.colorbar(image, cax=cax)
    cbar.set_label("impact f(i, j)", fontsize=9)
    cbar.ax.tick_params(labelsize=8)

    if heads is not None:
        for k, h in enumerate(heads, start=1):
            if h:
                ax.add_patch(Rectangle((h - 1.5, k - 1.5), 1, 1, fill=False, edgecolor=GOLD_COLOUR, linewidth=1.8))
            else:
                ax.add_patch(Rectangle((-0.5, k - 1.5), n, 1, fill=False, edgecolor=GOLD_COLOUR,
                                       linewidth=1.4, linestyle=(0, (3, 2))))
                ax.get_yticklabels()[k - 1].set_color(GOLD_COLOUR)
                ax.get_yticklabels()[k - 1].set_fontweight("bold")
    if pred is not None:  # predicted arc of word k: a dot in cell (k, head); the predicted root: on its diagonal
        dots = [((h or k) - 1, k - 1) for k, h in enumerate(pred, start=1) if h != NO_HEAD]
        ax.scatter(*zip(*dots), s=22, c=PRED_COLOUR, edgecolors="black", linewidths=0.8, zorder=3)
    if marked:
        ax.set_xlim(-0.5, n - 0.5)
        ax.set_ylim(n - 0.5, -0.5)

    # Title and caption go in the reserved top margin, wrapped/shortened to the figure width.
    y = 1 - 0.12 / H
    if title:
        width_chars = max(20, int((W - 0.3) / (0.6 * 11 / 72)))
        fig.text(0.5, y, textwrap.shorten(title, width_chars, placeholder="…"), ha="center", va="top",
                 fontsize=11, parse_math=False)
        y -= 0.28 / H
    if marked:
        fig.text(0.5, y, "\n".join(caption), ha="center", va="top", fontsize=CAPTION_PT,
                 color=GOLD_COLOUR if heads is not None else "black", linespacing=1.3)
    return fig


def _caption(gold: bool, pred: bool, width_in: float, noun: str = "word") -> list[str]:
    """The caption's lines: gold and predicted marks on one line, or one line each when that is too wide."""
    parts = [f"red boxes: gold arc (column = gold head of the row's {noun});  dashed row: gold root"] if gold else []
    if pred:
        parts.append("dots: predicted head (on the diagonal: predicted root)")
    joined = ";  ".join(parts)
    return [joined] if len(parts) < 2 or _text_width_in(joined, CAPTION_PT) <= width_in - 0.2 else parts


# --------------------------------------------------------------------------- public API

def render_heatmap(F: Any, words: Sequence[str], path: str | os.PathLike, *,
                   gold_heads: Sequence[int] | None = None, title: str | None = None,
                   cmap: str = "viridis", vmin: float | None = None, vmax: float | None = None,
                   pred_heads: Sequence[int] | None = None, unit: str = "word") -> Path:
    """Draw the n×n impact matrix ``F`` (rows = measured word i, columns = masked word j; ``unit`` "edu": a
    document's EDUs, labelled by index and first words: :meth:`pmask.common.units.UnitEntry.labels`).

    The format comes from the suffix: .png (150 dpi, size from :func:`heatmap_figsize`),
    .svg, .pdf, or .html (one self-contained file, hover values). NaN cells are grey.
    ``gold_heads`` (CoNLL-U, 0 = ROOT) outlines each gold arc and the root word's row;
    ``pred_heads`` (same convention; -1: no head, no dot) puts a dot in each predicted arc's cell (the predicted
    root's dot sits on its diagonal cell). Returns the path written (atomically).

    Example:
        >>> F = np.array([[0.0, 0.9, 0.1], [0.2, 0.0, 0.7], [0.1, 0.8, 0.0]])
        >>> render_heatmap(F, ["The", "cat", "sat"], "map.svg", gold_heads=[2, 3, 0], pred_heads=[2, 0, 2]).name
        'map.svg'
    """
    fmt = Path(path).suffix.lower().lstrip(".")
    if fmt not in HEATMAP_FORMATS:
        raise HeatmapError(f"{path}: unsupported heatmap format {Path(path).suffix or '(no suffix)'!r}; "
                           f"use one of {', '.join('.' + f for f in HEATMAP_FORMATS)}")
    where = str(path)
    arr, words, heads = _check(F, words, gold_heads, where)
    pred = _check_heads(pred_heads, len(words), where, "predicted")
    lo, hi = _value_range(arr, vmin, vmax, where)
    if fmt == "html":
        page = heatmap_page(arr, words, heads, title, _colormap(cmap, where), lo, hi, pred, unit,
                            colours=(GOLD_COLOUR, NAN_COLOUR))
        return atomic_write(path, page)
    return save_figure(_draw(arr, unit_entry(unit).labels(words), heads, title, _colormap(cmap, where), lo, hi, pred,
                             unit_entry(unit).noun), path, dpi=HEATMAP_DPI)


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_RESERVED_NAMES = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}


def safe_stem(sentence_id: Any, taken: set[str]) -> str:
    """A filesystem-safe file stem for ``sentence_id``, unique (case-insensitively) within ``taken``.

    Runs of characters outside [A-Za-z0-9._-] become '_', leading/trailing dots and '_' are dropped, the
    length is capped at 80, Windows device names get a '_' prefix; clashes get '-2', '-3', ...
    The chosen stem is added to ``taken`` (lower-cased).
    """
    stem = _UNSAFE.sub("_", str(sentence_id)).strip("._")[:80].rstrip(".") or "sentence"
    if stem.lower().split(".")[0] in _RESERVED_NAMES:
        stem = "_" + stem
    candidate, n = stem, 1
    while candidate.lower() in taken:
        n += 1
        candidate = f"{stem}-{n}"
    taken.add(candidate.lower())
    return candidate


def render_heatmaps(items: Iterable[tuple[Any, ...]], out_dir: str | os.PathLike, fmt: str = "png",
                    progress: bool = True, *, label: str | None = None, noun: str = "sentence",
                    **options: Any) -> list[Path]:
    """Render many sentences into ``out_dir`` (created, not its parents), one file per
    (sentence_id, F, words, gold_heads) or (sentence_id, F, words, gold_heads, pred_heads).

    File names come from :func:`safe_stem`; ``options`` go to :func:`render_heatmap`
    (cmap, vmin, vmax, unit). Each map is titled "<noun> <id>" (", <label>" when given: the layer and
    probe). Returns the paths in input order.
    ``progress``: a bar over the sentences (on a terminal only, see :mod:`pmask.common.progress`).
    """
    fmt = fmt.lower().lstrip(".")
    if fmt not in HEATMAP_FORMATS:
        raise HeatmapError(f"unsupported heatmap format {fmt!r}; use one of {', '.join(HEATMAP_FORMATS)}")
    out_dir = Path(out_dir)
    make_output_folder(out_dir)
    taken: set[str] = set()
    paths = []
    for sentence_id, F, words, gold_heads, *pred in progress_bar(items, desc="heatmaps", unit="sent",
                                                                  enabled=progress):
        path = out_dir / f"{safe_stem(sentence_id, taken)}.{fmt}"
        try:
            render_heatmap(F, words, path, gold_heads=gold_heads,
                           title=f"{noun} {sentence_id}" + (f", {label}" if label else ""),
                           pred_heads=pred[0] if pred else None, **options)
        except HeatmapError as err:
            raise HeatmapError(f"sentence {sentence_id}: {err}") from None
        paths.append(path)
    logger.debug("wrote %d heatmaps to %s", len(paths), out_dir)   # the caller prints the summary
    return paths
