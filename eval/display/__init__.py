"""What a notebook shows for pmask's results (``_repr_html_`` / ``_repr_png_``), all static HTML and
inline SVG (no script, no widget, no URL; PNG pictures inlined as data URIs).

- a parsed sentence (:class:`pmask.pipeline.induce.Parsed`): its arc diagram, predicted arcs above
  the words and gold arcs below (the HTML report's drawing), or its predicted and gold trees;
- an impact matrix (:class:`pmask.common.display.ImpactMap`, from ``Parsed.impact_map()`` or a
  stored sentence): its heatmap with the words; PNG: the ``pmask heatmap`` figure;
- :class:`~pmask.eval.comparison.tables.Comparison`, :class:`~pmask.eval.comparison.compare.Evaluation`,
  :class:`~pmask.eval.comparison.tables.LayerSweep`, :class:`~pmask.eval.studies.sweep.SweepResult` and
  :class:`~pmask.eval.studies.bench.run.BenchResult`: their tables; a sweep also its layer plot (PNG).

:func:`render` is connected to :mod:`pmask.common.display` by ``pmask/__init__.py``. The top of
eval's roles: may import every other role of eval (the report's drawings of :mod:`pmask.eval.html`
included) and the wings below eval.

Example:
    >>> import pmask
    >>> html = render(pmask.parse(["the cat sat"], decoder="right-chain")[0], "html")
    >>> "cat" in html and "http" not in html
    True
"""
from __future__ import annotations

from typing import Any, Callable

from pmask.common.display import ImpactMap
from pmask.eval.display.arcs import arc_diagram, arc_legend, tree_diagram
from pmask.eval.display.markup import el, esc, frame, scroll, style

__all__ = ["parsed_html", "render"]


def _sentence_title(parsed: Any) -> str:
    s = parsed.sentence
    return f"sentence {s.id} · {len(s.words)} words"


def _dependency_note(parsed: Any) -> str | None:
    gold = parsed.sentence.heads
    if gold is None:
        return "predicted arcs above the words (no gold heads known)"
    correct = sum(int(p) == int(g) for p, g in zip(parsed.heads, gold))
    return (f"UAS {100 * correct / max(len(gold), 1):.1f} ({correct}/{len(gold)} heads); "
            "predicted arcs above the words, gold arcs below")


def parsed_html(parsed: Any) -> str:
    """One parsed sentence: the arc diagram (dependencies) or both trees (constituency)."""
    s = parsed.sentence
    if parsed.skipped is not None:
        return frame(el("div", esc(" ".join(s.words))), _sentence_title(parsed), f"no tree: {parsed.skipped}")
    if parsed.heads is not None:
        pred = [int(h) for h in parsed.heads]
        body = scroll(arc_diagram(s.words, pred, s.heads, s.deprels)) + arc_legend(s.heads is not None)
        return frame(body, _sentence_title(parsed), _dependency_note(parsed))
    from pmask.eval.scores.bracket_score import sentence_spans

    gold_spans = sentence_spans(s.tree) if s.tree is not None else None
    label = style(font_size="12px", color="#667085", margin="6px 0 0")
    body = el("div", "predicted", style=label) + scroll(tree_diagram(parsed.tree, s.words, gold_spans, "predicted"))
    if s.tree is not None:
        body += el("div", "gold", style=label) + scroll(tree_diagram(s.tree, s.words, sentence_spans(parsed.tree),
                                                                     "gold"))
    note = "spans found in the other tree in blue, the others in red" if s.tree is not None else None
    return frame(body, _sentence_title(parsed), note)


def _html_renderers() -> list[tuple[type, Callable[[Any], str]]]:
    from pmask.eval.comparison.compare import Evaluation
    from pmask.eval.comparison.tables import Comparison, LayerSweep
    from pmask.eval.display import impact_heatmap, tables
    from pmask.eval.studies.bench.run import BenchResult
    from pmask.eval.studies.sweep import SweepResult
    from pmask.pipeline.induce import Parsed

    return [(Parsed, parsed_html), (ImpactMap, impact_heatmap.impact_map_html), (Comparison, tables.comparison_html),
            (Evaluation, tables.evaluation_html), (LayerSweep, tables.sweep_html),
            (SweepResult, tables.sweep_result_html), (BenchResult, tables.bench_html)]


def _png_renderers() -> list[tuple[type, Callable[[Any], bytes | None]]]:
    from pmask.eval.comparison.tables import LayerSweep
    from pmask.eval.display import impact_heatmap, tables
    from pmask.eval.studies.sweep import SweepResult

    return [(ImpactMap, impact_heatmap.impact_map_png), (LayerSweep, tables.sweep_png),
            (SweepResult, tables.sweep_result_png)]


def as_impact_map(obj: Any) -> Any:
    """A stored sentence (``StoredImpact``) becomes the :class:`ImpactMap` of its last stored layer."""
    if hasattr(obj, "impact_map") and not isinstance(obj, ImpactMap) and hasattr(obj, "matrix"):
        return obj.impact_map()
    return obj


def render(obj: Any, fmt: str) -> Any:
    """``obj`` as HTML text (``fmt="html"``) or PNG bytes (``"png"``); None when there is no such picture."""
    obj = as_impact_map(obj)
    for cls, renderer in (_html_renderers() if fmt == "html" else _png_renderers() if fmt == "png" else []):
        if isinstance(obj, cls):
            return renderer(obj)
    return None
