"""Files written by ``pmask bench``: results.json, results.csv, results.md and the plots.

* ``results.json`` — :meth:`pmask.eval.studies.bench.run.BenchResult.to_dict`: ``rows`` (treebank, language,
  probe, head (probes that keep every head), layer, decoder, root, uas, uuas, sentences, words;
  f1_sentence/f1_corpus for PTB), ``baselines``, ``breakdowns`` (by universal relation, arc
  length, sentence length), ``best_heads`` (:mod:`pmask.eval.studies.bench.probe_stores`), ``model``,
  ``settings``, ``treebanks``, ``timing``; plus ``best`` (:func:`best_layers`).
* ``results.csv`` — the rows and the baseline rows (``kind`` = model or baseline).
* ``results.md`` — the best setting (layer) of each probe per treebank and decoder, its margin
  over the best baseline on that treebank (named) and over right-chain (right-branching for
  PTB), the score of every layer, and the best heads (chosen on one half of the sentences,
  reported on the other).
* ``layers.png`` — score against layer, one panel per treebank, one line per probe and decoder,
  baselines dashed.
* ``heatmap-<decoder>.png`` — treebank × layer scores (``heatmap-<probe>-<decoder>.png`` for the
  probes other than pair; ``heatmap-<probe>-<metric>-<decoder>.png`` for a probe benched with several
  metrics, ``--metrics``).

Every row names its impact ``metric``; with ``--metrics`` the tables and plots label a probe benched
with several metrics as ``<probe> <metric>`` (e.g. ``pair cpmi``).
"""
from __future__ import annotations

import csv
import io
import json
import logging
from pathlib import Path
from typing import Any

from pmask.common.files import atomic_write, make_output_folder
from pmask.common.labels import plural, probe_label, run_label
from pmask.common.options import DEFAULT_PROBE, has_heads
from pmask.eval.outputs.writers import new_figure, save_figure
from pmask.eval.scores.columns import all_layer_keys, asked_in, row_headline, short_label
from pmask.trees.registry import decoder_task
from pmask.trees.tasks import task_info

logger = logging.getLogger(__name__)

_BASELINE_COLOURS = ("tab:red", "tab:purple", "tab:green", "tab:olive")
_LINE_COLOURS = ("tab:blue", "tab:orange", "tab:brown", "tab:pink", "tab:gray", "tab:cyan")   # none a baseline's
_TAB20_LINES = (0, 1, 2, 3, 10, 11, 12, 13, 14, 15, 18, 19)   # tab20 without its reds, purples, greens, olives
_MARKERS = ("o", "s", "^", "D", "v", "P")


def csv_fields(scores: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The columns of ``results.csv``: the row's fields, every score's per-layer columns (:func:`pmask.eval.scores.
    columns.all_layer_keys`: uas, uuas, f1_sentence, f1_corpus; optional ones in ``scores``), the counts, the metric."""
    return ("kind", "treebank", "language", "probe", "head", "layer", "decoder", "root", *all_layer_keys(scores),
            "sentences", "words", "metric")


def primary_key(row: dict[str, Any]) -> str:
    """``uas`` for dependency rows, ``f1_sentence`` for constituency rows
    (:func:`pmask.eval.scores.columns.row_headline`)."""
    return row_headline(row)


def _fmt(x: Any) -> str:
    return f"{x:.2f}" if isinstance(x, float) else ("" if x is None else str(x))


def to_csv(result: Any) -> str:
    """The rows then the baseline rows (the baseline's name in ``decoder``) as CSV text."""
    buf = io.StringIO()
    fields = csv_fields(asked_in([*result.rows, *result.baselines]))   # optional scores that the rows hold
    writer = csv.DictWriter(buf, fieldnames=fields, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in result.rows:
        writer.writerow({"kind": "model", **{k: _fmt(v) for k, v in row.items()}})
    for row in result.baselines:
        writer.writerow({"kind": "baseline", "decoder": row["baseline"], **{k: _fmt(v) for k, v in row.items()}})
    return buf.getvalue()


def _margin(score: float, baseline: dict[str, Any] | None, key: str) -> float | None:
    return None if baseline is None or baseline.get(key) is None else round(score - baseline[key], 4)


def row_probe(row: dict[str, Any], several: frozenset[str] = frozenset()) -> str:
    """The row's probe, and its metric (``pair cpmi``) when the probe is one of ``several``, the
    probes benched with several metrics (:func:`several_metrics`)."""
    probe = row.get("probe") or DEFAULT_PROBE
    return f"{probe} {row['metric']}" if probe in several and row.get("metric") else probe


def several_metrics(rows: Any) -> frozenset[str]:
    """The probes whose rows name more than one metric (``bench --metrics``): their labels name the metric."""
    seen: dict[str, set[Any]] = {}
    for row in rows:
        seen.setdefault(row.get("probe") or DEFAULT_PROBE, set()).add(row.get("metric"))
    return frozenset(p for p, m in seen.items() if len(m) > 1)


def best_layers(result: Any) -> list[dict[str, Any]]:
    """Per treebank, probe and decoder: the best layer, its score, and its margin over the best
    baseline on that treebank (``baseline`` names it: e.g. left-chain on a head-final language) and
    over the reference baseline (right-chain; right-branching for PTB).

    Returns:
        Dicts ``{"treebank", "language", "probe" (``pair cpmi`` when benched with several metrics),
        "impact_metric", "head", "decoder", "metric" (the score: uas or f1_sentence), "layer", "score",
        "baseline", "baseline_score", "margin", "reference_baseline", "reference_score",
        "reference_margin"}``.
    """
    out = []
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    several = several_metrics(result.rows)
    for row in result.rows:
        groups.setdefault((row["treebank"], row_probe(row, several), row["decoder"]), []).append(row)
    for (treebank, probe, decoder), rows in groups.items():
        key = primary_key(rows[0])
        best = max(rows, key=lambda r: (r[key], -r["layer"]))
        mine = [b for b in result.baselines if b["treebank"] == treebank and b.get(key) is not None
                and b.get("root") == best.get("root")]
        top = max(mine, key=lambda b: b[key], default=None)
        reference = task_info(decoder_task(decoder)).primary_baseline
        ref = next((b for b in mine if b["baseline"] == reference), None)
        out.append({"treebank": treebank, "language": best["language"], "probe": probe,
                    "impact_metric": best.get("metric"), "head": best.get("head"),
                    "decoder": decoder, "metric": key,
                    "layer": best["layer"], "score": best[key], "baseline": top["baseline"] if top else None,
                    "baseline_score": top[key] if top else None, "margin": _margin(best[key], top, key),
                    "reference_baseline": reference, "reference_score": ref[key] if ref else None,
                    "reference_margin": _margin(best[key], ref, key)})
    return out


def _probe_settings(settings: Any) -> list[dict[str, Any]]:
    """``{"probe", "metric", "head"}`` of each benched probe and metric (head None where it does not apply)."""
    out = []
    runs = getattr(settings, "runs", None) or [(p, settings.metric_for(p))
                                               for p in getattr(settings, "probes", None) or ["pair"]]
    for probe, metric in runs:
        head = settings.head_for(probe)
        out.append({"probe": probe, "metric": metric,
                    "head": ("mean" if head is None else head) if has_heads(probe, metric) else None})
    return out


def _title_lines(result: Any) -> list[str]:
    """The title (model, metric) and the settings line of ``results.md``."""
    s, impact = result.settings, result.settings.model.impact
    subword = impact.subword if not getattr(s, "metrics", None) else (s._subword or "each metric's default")
    model = dict(result.model or {})
    model.setdefault("name", s.model.name)
    model.setdefault("random_init", s.model.random_init)
    probes = _probe_settings(s)
    return [f"# pmask bench: {run_label(model, probes[0] if len(probes) == 1 else None)}", "",
            f"probe{'s' if len(probes) > 1 else ''} {', '.join(map(probe_label, probes))}; subword {subword}, "
            f"tokenize {impact.tokenize}, root {s.root}, punct {s.punct}, limit {s.limit or 'none'}, "
            f"max-words {getattr(s, 'max_words', None) or 'none'}; "
            f"{plural(len(result.treebanks), 'treebank')}, {result.timing.get('total_seconds', 0):.1f} s"]


def best_table(result: Any) -> list[str]:
    """The Markdown table of the best setting (layer) of each probe per treebank and decoder, with
    its margins over the best baseline (named) and over right-chain (right-branching for PTB)."""
    lines = ["| treebank | language | probe | decoder | best layer | score | best baseline | baseline score | margin "
             "| margin over right-chain |",
             "|---|---|---|---|---:|---:|---|---:|---:|---:|"]
    for b in best_layers(result):
        probe = b["probe"] + (f" (head {b['head']})" if b.get("head") is not None else "")
        lines.append(f"| {b['treebank']} | {b['language']} | {probe} | {b['decoder']} | {b['layer']} | "
                     f"{b['score']:.2f} | {b['baseline'] or ''} | {_fmt(b['baseline_score'])} | {_fmt(b['margin'])} | "
                     f"{_fmt(b['reference_margin'])} |")
    return lines


def summary_markdown(result: Any) -> str:
    """What ``pmask bench`` prints when it is done: the title and settings of ``results.md`` and
    its table of the best setting per treebank (:func:`best_table`)."""
    return "\n".join([*_title_lines(result), "", *best_table(result)]) + "\n"


def to_markdown(result: Any) -> str:
    """``results.md``: settings, the best layer of each probe per treebank with its margins, every
    layer, the best heads, the baselines."""
    lines = [*_title_lines(result), "", "## Best setting of each probe per treebank", "",
             "Margin: the best layer's score minus the best baseline's on the same sentences (the baseline "
             "named); the last column is the margin over right-chain (right-branching for PTB).", "",
             *best_table(result)]
    layers = sorted({r["layer"] for r in result.rows})
    lines += ["", "## Score by layer (UAS; sentence-level F1 for PTB)", "",
              "| treebank | probe | decoder | " + " | ".join(f"L{k}" for k in layers) + " |",
              "|---|---|---|" + "---:|" * len(layers)]
    cells: dict[tuple[str, str, str], dict[int, float]] = {}
    several = several_metrics(result.rows)
    for r in result.rows:
        cells.setdefault((r["treebank"], row_probe(r, several), r["decoder"]), {})[r["layer"]] = r[primary_key(r)]
    for (treebank, probe, decoder), by_layer in cells.items():
        lines.append(f"| {treebank} | {probe} | {decoder} | " + " | ".join(_fmt(by_layer.get(k)) for k in layers)
                     + " |")
    lines += best_heads_markdown(getattr(result, "best_heads", None) or [])
    names = list(dict.fromkeys(b["baseline"] for b in result.baselines))
    lines += ["", "## Baselines (same sentences)", "", "| treebank | " + " | ".join(names) + " |",
              "|---|" + "---:|" * len(names)]
    for treebank in dict.fromkeys(b["treebank"] for b in result.baselines):
        by_name = {b["baseline"]: b[primary_key(b)] for b in result.baselines if b["treebank"] == treebank}
        lines.append(f"| {treebank} | " + " | ".join(_fmt(by_name.get(n)) for n in names) + " |")
    not_run = [f"{t['treebank']} ({t.get('task', '?')}): {', '.join(t['decoders_not_run'])}"
               for t in result.treebanks if t.get("decoders_not_run")]
    if not_run:
        lines += ["", "Decoders not run where they do not fit the treebank's task: " + "; ".join(not_run) + "."]
    skipped = [f"{t['treebank']} ({t.get('task', '?')}): {', '.join(t['probes_not_run'])}"
               for t in result.treebanks if t.get("probes_not_run")]
    if skipped:
        lines += ["", "Probes not run where no decoder reads what they give: " + "; ".join(skipped) + "."]
    return "\n".join(lines) + "\n"


def best_heads_markdown(rows: list[dict[str, Any]]) -> list[str]:
    """The "Best head" section of ``results.md`` (no lines when no probe keeps every head)."""
    if not rows:
        return []
    from pmask.eval.studies.bench.probe_stores import CHOSEN_ON, REPORTED_ON

    lines = ["", "## Best head (chosen on one half of the sentences, reported on the other)", "",
             f"The (layer, head) with the best score is chosen on the sentences at {CHOSEN_ON} and scored on those "
             f"at {REPORTED_ON}; the baseline is scored on the same reported half. Choosing a head on the "
             "sentences it is scored on would flatter the probe.", "",
             "| treebank | probe | decoder | layer | head | score (choosing half) | score (reported half) | "
             "sentences | baseline | baseline score | margin |",
             "|---|---|---|---:|---:|---:|---:|---:|---|---:|---:|"]
    several = several_metrics(rows)
    for b in rows:
        lines.append(f"| {b['treebank']} | {row_probe(b, several)} | {b['decoder']} | {b['layer']} | {b['head']} | "
                     f"{_fmt(b['choose_score'])} | {_fmt(b['score'])} | {b['sentences']} | {b['baseline']} | "
                     f"{_fmt(b['baseline_score'])} | {_fmt(b['margin'])} |")
    return lines


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
    styles = {(f"{p} {d}" if several else d): {"color": _colour(palette[k % len(palette)]), "linestyle": "-",
                                               "marker": _MARKERS[probes.index(p) % len(_MARKERS)], "markersize": 3}
              for k, (p, d) in enumerate(lines)}
    labels = {b["baseline"]: b["baseline"] + (" (baseline)" if b["baseline"] in styles else "")
              for b in result.baselines}
    for name in dict.fromkeys(t["treebank"] for t in result.treebanks):
        mine = [b["baseline"] for b in result.baselines if b["treebank"] == name]
        for k, baseline in enumerate(mine):
            styles.setdefault(labels[baseline], {"color": _BASELINE_COLOURS[k % len(_BASELINE_COLOURS)],
                                                 "linestyle": "--", "linewidth": 1})
    return styles, labels


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
        key = primary_key(rows[0]) if rows else "uas"
        for probe, decoder in dict.fromkeys((row_probe(r, metrics), r["decoder"]) for r in rows):
            pts = sorted((r["layer"], r[key]) for r in rows
                         if r["decoder"] == decoder and row_probe(r, metrics) == probe)
            label = f"{probe} {decoder}" if several else decoder
            ax.plot(*zip(*pts), label=label, **styles[label])
        for b in (b for b in result.baselines if b["treebank"] == name):
            label = baseline_labels[b["baseline"]]
            ax.axhline(b[key], label=label, **styles[label])
        ax.set_title(f"{name} ({languages[name]})" if languages.get(name) else name, fontsize=10)
        ax.tick_params(labelsize=8)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    for ax in list(axes.flat)[len(treebanks):]:
        ax.axis("off")
    fig.supxlabel("layer", fontsize=10)
    fig.supylabel("UAS (F1 for PTB)", fontsize=10)
    _legend_above(fig, panel_height * nrows)
    save_figure(fig, path, dpi=dpi)
    return path


#: Resolution of the bench heatmaps (PNG pixels per inch).
HEATMAP_DPI = 150


def plot_heatmap(result: Any, decoder: str, path: Path, probe: str = "pair") -> Path:
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
    score = short_label(primary_key(rows[0])) if rows else "F1"
    what = decoder if probe == DEFAULT_PROBE else f"{probe} · {decoder}"
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


def write_outputs(result: Any, out_dir: Path) -> list[Path]:
    """Write every output file into ``out_dir``; returns their paths."""
    out_dir = Path(out_dir)
    make_output_folder(out_dir)
    paths = [out_dir / "results.json", out_dir / "results.csv", out_dir / "results.md"]
    data = {**result.to_dict(), "best": best_layers(result)}
    atomic_write(paths[0], json.dumps(data, indent=1, ensure_ascii=False, default=str) + "\n")
    atomic_write(paths[1], to_csv(result))
    atomic_write(paths[2], to_markdown(result))
    if result.rows:
        paths.append(plot_layers(result, out_dir / "layers.png"))
        several = several_metrics(result.rows)
        for probe, decoder in dict.fromkeys((row_probe(r, several), r["decoder"]) for r in result.rows):
            slug = probe.replace(" ", "-")
            name = f"heatmap-{decoder}.png" if probe == DEFAULT_PROBE else f"heatmap-{slug}-{decoder}.png"
            paths.append(plot_heatmap(result, decoder, out_dir / name, probe))
    for stale in sorted(set(out_dir.glob("heatmap-*.png")) - set(paths)):   # of results replaced (--rescore)
        stale.unlink()
    logger.debug("wrote %s", ", ".join(p.name for p in paths))   # the caller prints the summary
    return paths

