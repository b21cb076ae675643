"""The plots ``pmask bench`` writes (:func:`pmask.eval.studies.bench.results.write_outputs`): ``layers.png``, score
against layer, and one ``heatmap-….png`` of treebank × layer scores per probe and decoder. Every line and cell is
the row's decoder's headline (:func:`pmask.eval.studies.bench.rows.primary_key`: UUAS for undirected trees); the
labels and titles say which.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pmask.common.options import first_probe
from pmask.eval.outputs.writers import new_figure, save_figure
from pmask.eval.scores.columns import decoder_headline, short_label
from pmask.eval.studies.bench.rows import primary_key, row_probe, several_metrics
from pmask.trees.registry import get_decoder

__all__ = ["HEATMAP_DPI", "plot_heatmap", "plot_layers"]

_BASELINE_COLOURS = ("tab:red", "tab:purple", "tab:green", "tab:olive")
_LINE_COLOURS = ("tab:blue", "tab:orange", "tab:brown", "tab:pink", "tab:gray", "tab:cyan")   # none a baseline's
_TAB20_LINES = (0, 1, 2, 3, 10, 11, 12, 13, 14, 15, 18, 19)   # tab20 without its reds, purples, greens, olives
_MARKERS = ("o", "s", "^", "D", "v", "P")


def _line_styles(result: Any) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """One style per line label, the same in every panel (so that one legend describes them all).

    Model lines (``probe decoder``, or the decoder alone with one probe) get colours in the order
    they first appear (tab10's, then tab20's, other than the baselines' colours) and a marker per
    probe; baselines are dashed,
    coloured by their place in their task's list (right-chain and right-branching share a colour).

    Returns:
        ``({label: matplotlib line properties}, {baseline name: its label})`` (a baseline named like a
        model line, e.g. decoder right-chain, is labelled ``right-chain (baseline)``).
    """
    metrics = several_metrics(result.rows)
    several = len({row_probe(r, metrics) for r in result.rows}) > 1
    lines = list(dict.fromkeys((row_probe(r, metrics), r["decoder"]) for r in result.rows))
    probes = list(dict.fromkeys(probe for probe, _ in lines))
    palette = list(_LINE_COLOURS) if len(lines) <= len(_LINE_COLOURS) else [f"tab20:{k}" for k in _TAB20_LINES]
    styles = {_line_label(p, d, several): {"color": _colour(palette[k % len(palette)]), "linestyle": "-",
                                               "marker": _MARKERS[probes.index(p) % len(_MARKERS)], "markersize": 3}
              for k, (p, d) in enumerate(lines)}
    labels = {b["baseline"]: _line_label("", b["baseline"], False) + (" (baseline)" if b["baseline"] in styles else "")
              for b in result.baselines}
    for name in dict.fromkeys(t["treebank"] for t in result.treebanks):
        mine = [b["baseline"] for b in result.baselines if b["treebank"] == name]
        for k, baseline in enumerate(mine):
            styles.setdefault(labels[baseline], {"color": _BASELINE_COLOURS[k % len(_BASELINE_COLOURS)],
                                                 "linestyle": "--", "linewidth": 1})
    return styles, labels


def _line_label(probe: str, decoder: str, several: bool) -> str:
    """A plotted line's label: ``probe decoder`` (the decoder alone with one probe), and ``(UUAS)`` after an
    undirected decoder or baseline, whose line is its UUAS (:func:`primary_key`)."""
    label = f"{probe} {decoder}" if several else decoder
    return label + (" (UUAS)" if get_decoder(decoder).undirected else "")


def _colour(name: str) -> Any:
    """A colour name, or ``tab20:K`` (the K-th colour of the tab20 map)."""
    if not name.startswith("tab20:"):
        return name
    from matplotlib import colormaps

    return colormaps["tab20"](int(name.split(":")[1]))


def _legend_above(fig: Any, panels_height: float) -> None:
    """One legend of every panel's lines above the panels, in as many columns as fit the figure's
    width; the figure is made taller by the legend's height, so the legend covers no panel and
    lies wholly inside the figure whatever the number of lines."""
    entries: dict[str, Any] = {}
    for ax in fig.axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(label, handle)
    if not entries:
        return
    renderer = fig.canvas.get_renderer()
    for ncol in range(len(entries), 0, -1):   # the widest legend that fits
        legend = fig.legend(list(entries.values()), list(entries), loc="upper center", ncol=ncol, fontsize=8,
                            bbox_to_anchor=(0.5, 1.0))
        box = legend.get_window_extent(renderer)
        if box.width <= 0.98 * fig.bbox.width or ncol == 1:
            break
        legend.remove()
    if box.width > 0.98 * fig.bbox.width:   # a single column wider than the figure
        fig.set_figwidth(box.width / fig.dpi + 0.2)
    legend_height = box.height / fig.dpi + 0.1
    fig.set_figheight(panels_height + legend_height)
    fig.tight_layout(rect=(0, 0, 1, panels_height / (panels_height + legend_height)))


def plot_layers(result: Any, path: Path, dpi: int = 150) -> Path:
    """Score against layer, one panel per treebank, one line per probe and decoder, baselines dashed;
    one legend above the panels for every line of every panel (:func:`_legend_above`)."""
    from matplotlib.ticker import MaxNLocator

    treebanks = [t["treebank"] for t in result.treebanks]
    languages = {t["treebank"]: t.get("language") for t in result.treebanks}
    styles, baseline_labels = _line_styles(result)
    metrics = several_metrics(result.rows)
    several = len({row_probe(r, metrics) for r in result.rows}) > 1
    ncols = min(5, len(treebanks))
    nrows = -(-len(treebanks) // ncols)
    # panels of 3.6 × 2.8 in, the figure at least 6 in wide (900 px at 150 dpi) even with one treebank
    panel_width, panel_height = max(3.6, 6.0 / ncols), 2.8
    fig = new_figure((panel_width * ncols, panel_height * nrows), dpi)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=True)
    for ax, name in zip(axes.flat, treebanks):
        rows = [r for r in result.rows if r["treebank"] == name]
        for probe, decoder in dict.fromkeys((row_probe(r, metrics), r["decoder"]) for r in rows):
            pts = sorted((r["layer"], r[primary_key(r)]) for r in rows
                         if r["decoder"] == decoder and row_probe(r, metrics) == probe)
            label = _line_label(probe, decoder, several)
            ax.plot(*zip(*pts), label=label, **styles[label])
        for b in (b for b in result.baselines if b["treebank"] == name):
            label = baseline_labels[b["baseline"]]
            ax.axhline(b[primary_key(b)], label=label, **styles[label])
        ax.set_title(f"{name} ({languages[name]})" if languages.get(name) else name, fontsize=10)
        ax.tick_params(labelsize=8)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    for ax in list(axes.flat)[len(treebanks):]:
        ax.axis("off")
    fig.supxlabel("layer", fontsize=10)
    undirected = any(get_decoder(r["decoder"]).undirected for r in result.rows)
    fig.supylabel("UAS (UUAS for undirected trees; F1 for PTB)" if undirected else "UAS (F1 for PTB)", fontsize=10)
    _legend_above(fig, panel_height * nrows)
    save_figure(fig, path, dpi=dpi)
    return path


#: Resolution of the bench heatmaps (PNG pixels per inch).
HEATMAP_DPI = 150


def plot_heatmap(result: Any, decoder: str, path: Path, probe: str) -> Path:
    """Treebank × layer scores of ``decoder`` under ``probe`` (``pair cpmi`` for a probe benched with
    several metrics) as a heatmap, values written in the cells, a labelled colour bar beside it."""
    import numpy as np

    several = several_metrics(result.rows)
    rows = [r for r in result.rows if r["decoder"] == decoder and row_probe(r, several) == probe]
    treebanks = list(dict.fromkeys(r["treebank"] for r in rows))
    layers = sorted({r["layer"] for r in rows})
    grid = np.full((len(treebanks), len(layers)), np.nan)
    for r in rows:
        grid[treebanks.index(r["treebank"]), layers.index(r["layer"])] = r[primary_key(r)]
    # at least 5.5 × 2.8 in at 150 dpi (825 × 420 px): room for the treebank names, the cell values
    # and a colour bar with its own label, however few treebanks and layers there are
    label = max((len(t) for t in treebanks), default=0)
    fig = new_figure((max(5.5, 2.4 + 0.09 * label + 0.6 * len(layers)), max(2.8, 1.4 + 0.42 * len(treebanks))),
                     HEATMAP_DPI)
    ax = fig.subplots()
    im = ax.imshow(grid, aspect="auto", cmap="viridis")
    ax.set_xticks(range(len(layers)), [str(k) for k in layers], fontsize=9)
    ax.set_yticks(range(len(treebanks)), treebanks, fontsize=9)
    ax.set_xlabel("layer", fontsize=10)
    score = short_label(decoder_headline(decoder))
    what = decoder if probe == first_probe() else f"{probe} · {decoder}"
    ax.set_title(f"{what}: {score}", fontsize=11)
    if grid.size <= 400:
        mid = np.nanmean(grid) if np.isfinite(grid).any() else 0
        for (i, j), v in np.ndenumerate(grid):
            if np.isfinite(v):
                ax.text(j, i, f"{v:.1f}", ha="center", va="center", fontsize=8,
                        color="white" if v < mid else "black")
    bar = fig.colorbar(im, ax=ax, fraction=0.05, pad=0.03)
    bar.set_label(f"{score} (%)", fontsize=9)
    bar.ax.tick_params(labelsize=8)
    fig.tight_layout()
    save_figure(fig, path, dpi=HEATMAP_DPI)
    return path


