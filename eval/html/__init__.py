"""``pmask report``: one self-contained HTML file with scores, failures, trees and impact maps.

The page is a fixed skeleton, one inline ``<style>``, one inline ``<script>`` (from the files in
``assets/``) and the data as JSON in ``<script type="application/json">``. A
Content-Security-Policy allows exactly that style and script (by sha256) and ``data:`` images,
so the file makes no request to anything, and words are only ever put into the page as text.

May import every role of eval below it (:mod:`pmask.eval.outputs`, :mod:`pmask.eval.scores`,
:mod:`pmask.eval.comparison`, :mod:`pmask.eval.studies`, :mod:`pmask.eval.figures`) and the wings below eval.
"""
from __future__ import annotations

import base64
import hashlib
import html
import json
import logging
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from pmask.common.errors import PmaskError
from pmask.common.files import atomic_write
from pmask.common.labels import run_label
from pmask.common.output_checks import check_output
from pmask.trees.tasks import task_entry

logger = logging.getLogger(__name__)

EAGER_LIMIT = 100          # up to this many sentences every diagram is built at load
SCRIPT_PARTS = ("core.js", "charts.js", "arcs.js", "trees.js", "impact.js", "browser.js")
DATA_ID = "pmask-data"


@dataclass(frozen=True)
class ReportOptions:
    """What goes into the report besides the prediction and gold."""

    store: Path | None = None       # impact store: one map per sentence and stored layer
    bench: Path | None = None       # ``pmask bench`` output directory
    punct: str = "include"          # score punctuation words or not
    title: str | None = None
    seed: int = 0                   # seed of the random baselines
    max_words: int | None = None    # score only sentences of at most this many words (as ``eval --max-words``)


def default_title(pred: str | Path, meta: dict[str, Any]) -> str:
    """``pmask report: <file> · <model, metric, layer>`` (the model part when the prediction records one)."""
    title = f"pmask report: {Path(pred).name}"
    if meta.get("model"):
        title += f" · {run_label(meta['model'], meta.get('impact'), (meta.get('settings') or {}).get('layer', -1))}"
    return title


def _asset(name: str) -> str:
    return (resources.files("pmask.eval.html") / "assets" / name).read_text(encoding="utf-8")


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def script_json(data: Any) -> str:
    """JSON that is safe inside ``<script type="application/json">``: no ``<``, ``>``, ``&``
    (so no ``</script>`` or ``<!--`` can end or change the element), no raw U+2028/U+2029."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                         ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return text


def render_html(data: dict[str, Any], title: str) -> str:
    """The whole page for ``data`` (the dict :func:`report_data` returns)."""
    css = _asset("report.css")
    script = "(function () {\n\"use strict\";\n" + "\n".join(_asset(p) for p in SCRIPT_PARTS) + "\n})();\n"
    csp = (f"default-src 'none'; script-src {_csp_hash(script)}; style-src {_csp_hash(css)}; "
           "img-src data:; base-uri 'none'; form-action 'none'")
    esc = html.escape
    return "".join([
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n",
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{esc(csp, quote=False)}\">\n",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
        "<meta name=\"generator\" content=\"pmask report\">\n",
        f"<title>{esc(title)}</title>\n<style>{css}</style>\n</head>\n<body>\n",
        "<header class=\"top\"><h1 id=\"title\"></h1><nav id=\"nav\"></nav></header>\n<main>\n",
        "<section id=\"summary\"></section>\n<section id=\"failures\"></section>\n",
        "<section id=\"sentences\"></section>\n<section id=\"bench\" hidden></section>\n</main>\n",
        "<noscript><p>This report draws its charts and trees with JavaScript; please allow scripts.</p></noscript>\n",
        f"<script id=\"{DATA_ID}\" type=\"application/json\">{script_json(data)}</script>\n",
        f"<script>{script}</script>\n</body></html>\n",
    ])


def report_data(pred: Path, gold: Path, options: ReportOptions = ReportOptions()) -> dict[str, Any]:
    """Everything the page shows, as one JSON-able dict.

    Returns:
        ``{"title", "task", "undirected", "summary", "breakdowns", "sentences", "eager", "impacts", "bench"}``
        (``undirected``: the predicted trees are an undirected decoder's, drawn without arrowheads); see
        ``pmask.eval.html.data``, ``.trees``, ``.impacts`` and ``pmask.eval.studies.bench.html`` for each part.
    """
    from pmask.eval.html import data as html_data
    from pmask.eval.html import trees as html_trees

    inputs = html_data.load_inputs(pred, gold, punct=options.punct, seed=options.seed, max_words=options.max_words)
    heads = task_entry(inputs.task).per_word   # heads are drawn as arcs, other trees as trees
    if heads:
        sentences = html_data.dependency_sentences(inputs)
        breakdowns = html_data.dependency_breakdowns(inputs, sentences)
    else:
        sentences = html_trees.constituency_sentences(inputs.pairs, inputs.evaluation.score.per_sentence)
        breakdowns = html_trees.constituency_breakdowns(inputs.evaluation.score)
    data: dict[str, Any] = {
        "title": options.title or default_title(pred, inputs.meta),
        "task": inputs.task,
        "undirected": heads and html_data.undirected(inputs.meta),   # no arrowheads
        "summary": html_data.summary(inputs, gold=gold),
        "breakdowns": breakdowns,
        "sentences": sentences,
        "eager": len(sentences) <= EAGER_LIMIT,
        "impacts": None,
        "bench": None,
    }
    if options.store is not None:
        from pmask.eval.html.impacts import impacts_for

        data["impacts"] = impacts_for(Path(options.store), sentences,
                                      chosen_layer=(inputs.meta.get("settings") or {}).get("layer"))
    if options.bench is not None:
        from pmask.eval.studies.bench.html import read_bench

        data["bench"] = read_bench(Path(options.bench))
    return data


def check_report_inputs(pred: Path, options: ReportOptions) -> None:
    """Refuse a store or bench directory made by another run than the prediction (other model, weights,
    metric, subword policy or tokenisation), in one line naming both (:mod:`pmask.eval.comparison.consistency`)."""
    from pmask.eval.comparison.consistency import bench_origin, check_same_origin, prediction_origin, store_origin
    from pmask.perturb.store import read_manifest

    origins = [prediction_origin(pred)]
    if options.store is not None:
        origins.append(store_origin(options.store, read_manifest(options.store)))
    if options.bench is not None:
        origins.append(bench_origin(options.bench))
    check_same_origin(origins, hint="report on inputs made by the same run (or leave {store}/{bench} out)")


def build_report(pred: str | Path, gold: str | Path, output: str | Path,
                 options: ReportOptions = ReportOptions()) -> Path:
    """Write the HTML report of a prediction to ``output``.

    Args:
        pred: a CoNLL-U prediction (``pmask parse``) or a bracket file (one tree per line).
        gold: the gold CoNLL-U, or PTB file/directory.
        output: the ``.html`` file to write (atomically).
        options: store, bench directory, punctuation setting, title.
    Returns:
        ``output`` as a Path.
    Example:
        >>> build_report("pud.conllu", "en_pud-ud-test.conllu", "report.html",
        ...              ReportOptions(store=Path("pud-store"))).name
        'report.html'
    """
    output = Path(output)
    if output.is_dir():
        raise PmaskError(f"{output}: is a directory; name the .html file to write")
    check_output(output)   # before anything is read
    check_report_inputs(Path(pred), options)
    data = report_data(Path(pred), Path(gold), options)
    page = render_html(data, data["title"])
    atomic_write(output, page)
    logger.debug("wrote %s (%.1f MB, %d sentences%s)", output, len(page.encode("utf-8")) / 1e6,
                len(data["sentences"]), ", with impact maps" if data["impacts"] else "")
    return output
