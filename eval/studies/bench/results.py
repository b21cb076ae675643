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

Every row is scored by its decoder's headline (:func:`pmask.eval.scores.columns.decoder_headline`): UAS,
UUAS for the undirected decoders (``mst``, ``mst-projective``: their trees say nothing of direction), compared
with the undirected baseline connect-adjacent (benched whenever an undirected decoder is), sentence-level F1
for PTB; the tables' ``scored by`` column, the heatmaps' titles and the plots' labels say which.
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

from pmask.common.files import atomic_write
from pmask.common.labels import plural, probe_label, run_label
from pmask.common.options import first_probe, has_attention_heads
from pmask.common.output_checks import make_output_folder
from pmask.eval.scores.columns import all_layer_keys, asked_in, decoder_headline, short_label
from pmask.eval.studies.bench.plots import plot_heatmap, plot_layers
from pmask.eval.studies.bench.rows import primary_key, row_probe, several_metrics
from pmask.trees.registry import decoder_task, get_decoder
from pmask.trees.tasks import task_entry

logger = logging.getLogger(__name__)

__all__ = ["best_layers", "best_table", "primary_key", "row_probe", "several_metrics", "summary_markdown",
           "to_csv", "to_markdown", "write_outputs"]


def csv_fields(scores: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The columns of ``results.csv``: the row's fields, every score's per-layer columns (:func:`pmask.eval.scores.
    columns.all_layer_keys`: uas, uuas, f1_sentence, f1_corpus; optional ones in ``scores``), the counts, the metric;
    ``faithful``: whether the row is an authors' pipeline (empty for baselines)."""
    return ("kind", "treebank", "language", "probe", "head", "layer", "decoder", "root", "faithful",
            *all_layer_keys(scores),
            "sentences", "words", "metric")


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


def best_layers(result: Any) -> list[dict[str, Any]]:
    """Per treebank, probe and decoder: the best layer, its score, and its margin over the best
    baseline on that treebank (``baseline`` names it: e.g. left-chain on a head-final language) and
    over the reference baseline (right-chain; connect-adjacent for an undirected decoder; right-branching for
    PTB), all by the decoder's headline (:func:`primary_key`).

    Returns:
        Dicts ``{"treebank", "language", "probe" (``pair cpmi`` when benched with several metrics),
        "impact_metric", "head", "decoder", "metric" (the score: the decoder's headline, uas, uuas for an
        undirected decoder, or f1_sentence), "layer", "score",
        "baseline", "baseline_score", "margin", "reference_baseline", "reference_score",
        "reference_margin"}``.
    """
    out = []
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    several = several_metrics(result.rows)
    for row in result.rows:
        groups.setdefault((row["treebank"], row_probe(row, several), row["decoder"]), []).append(row)
    for (treebank, probe, decoder), rows in groups.items():
        key = decoder_headline(decoder)
        best = max(rows, key=lambda r: (r[key], -r["layer"]))
        mine = [b for b in result.baselines if b["treebank"] == treebank and b.get(key) is not None
                and b.get("root") == best.get("root")]
        top = max(mine, key=lambda b: b[key], default=None)
        reference = task_entry(decoder_task(decoder)).reference(get_decoder(decoder).undirected)
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
    for probe, metric in settings.runs:
        head = settings.attention_head_for(probe)
        out.append({"probe": probe, "metric": metric,
                    "head": ("mean" if head is None else head) if has_attention_heads(probe, metric) else None})
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
    its margins over the best baseline (named) and over the reference baseline (right-chain; connect-adjacent for
    an undirected decoder; right-branching for PTB), all by the score the ``scored by`` column names."""
    lines = ["| treebank | language | probe | decoder | scored by | best layer | score | best baseline "
             "| baseline score | margin | margin over reference |",
             "|---|---|---|---|---|---:|---:|---|---:|---:|---:|"]
    for b in best_layers(result):
        probe = b["probe"] + (f" (head {b['head']})" if b.get("head") is not None else "")
        lines.append(f"| {b['treebank']} | {b['language']} | {probe} | {b['decoder']} | {short_label(b['metric'])} | "
                     f"{b['layer']} | "
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
             "named); the last column is the margin over the reference baseline (right-chain; connect-adjacent for "
             "an undirected decoder; right-branching for PTB). Each row is scored by its decoder's headline: UAS, "
             "UUAS for undirected trees (mst, mst-projective), sentence-level F1 for PTB.", "",
             *best_table(result)]
    layers = sorted({r["layer"] for r in result.rows})
    lines += ["", "## Score by layer (UAS; UUAS for undirected decoders; sentence-level F1 for PTB)", "",
              "| treebank | probe | decoder | scored by | " + " | ".join(f"L{k}" for k in layers) + " |",
              "|---|---|---|---|" + "---:|" * len(layers)]
    cells: dict[tuple[str, str, str], dict[int, float]] = {}
    several = several_metrics(result.rows)
    for r in result.rows:
        cells.setdefault((r["treebank"], row_probe(r, several), r["decoder"]), {})[r["layer"]] = r[primary_key(r)]
    for (treebank, probe, decoder), by_layer in cells.items():
        lines.append(f"| {treebank} | {probe} | {decoder} | {short_label(decoder_headline(decoder))} | "
                     + " | ".join(_fmt(by_layer.get(k)) for k in layers) + " |")
    lines += best_heads_markdown(getattr(result, "best_heads", None) or [])
    names = list(dict.fromkeys(b["baseline"] for b in result.baselines))
    lines += ["", "## Baselines (same sentences)", "", "| treebank | score | " + " | ".join(names) + " |",
              "|---|---|" + "---:|" * len(names)]
    for treebank in dict.fromkeys(b["treebank"] for b in result.baselines):
        mine = [b for b in result.baselines if b["treebank"] == treebank]
        keys = dict.fromkeys(primary_key(r) for r in [*mine, *(r for r in result.rows if r["treebank"] == treebank)])
        for key in keys:   # each score a row or baseline of it is judged by (UUAS too when undirected decoders ran)
            by_name = {b["baseline"]: b.get(key) for b in mine}
            lines.append(f"| {treebank} | {short_label(key)} | " + " | ".join(_fmt(by_name.get(n)) for n in names)
                         + " |")
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
            name = f"heatmap-{decoder}.png" if probe == first_probe() else f"heatmap-{slug}-{decoder}.png"
            paths.append(plot_heatmap(result, decoder, out_dir / name, probe))
    for stale in sorted(set(out_dir.glob("heatmap-*.png")) - set(paths)):   # of results replaced (--rescore)
        stale.unlink()
    logger.debug("wrote %s", ", ".join(p.name for p in paths))   # the caller prints the summary
    return paths

