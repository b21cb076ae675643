"""A parsed sentence as static SVG: the HTML report's arc diagram (predicted arcs above the words,
gold arcs below, correct and wrong in different colours and dash styles, ROOT marked), and for
constituency decoders the predicted and gold trees with their spans coloured by match.

The geometry follows ``eval/html/assets/arcs.js`` and ``trees.js``; here it is computed in Python
and written as inline SVG, so it needs no script and survives notebook sanitisers.

Example:
    >>> svg = arc_diagram(["the", "cat", "sat"], [2, 3, 0], [2, 3, 0], ["det", "nsubj", "root"])
    >>> svg.startswith("<svg") and ">cat<" in svg
    True
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from pmask.eval.display.markup import COLOURS, FONT, el, esc, style, text_width

WORD_PX, GAP = 15, 20
_STROKE = {("pred", True): (COLOURS["ok"], None), ("pred", False): (COLOURS["wrong"], "5 3"),
           ("gold", True): (COLOURS["gold-ok"], None), ("gold", False): (COLOURS["gold-miss"], None)}


@dataclass
class Layout:
    xs: list[float]
    width: float


def word_layout(words: Sequence[str], gap: float = GAP) -> Layout:
    """Centre x of each word, words ``gap`` px apart, 24 px margins."""
    xs, x = [], 24.0
    for w in words:
        width = max(14.0, text_width(w, WORD_PX))
        xs.append(x + width / 2)
        x += width + gap
    return Layout(xs, x + 24)


def _height(xs: list[float], dep: int, head: int) -> float:
    return min(170.0, 14 + 0.42 * abs(xs[dep - 1] - xs[head - 1]))


def _arrow(x: float, base: float, up: bool, colour: str) -> str:
    tip, back = base, base - 7 if up else base + 7
    return el("path", d=f"M{x - 3.5:.1f} {back:.1f} L{x + 3.5:.1f} {back:.1f} L{x:.1f} {tip:.1f} Z", fill=colour)


def _arc(kind: str, dep: int, head: int, ok: bool, xs: list[float], base: float, root_h: float,
         tip: str) -> str:
    """One arc (or ROOT stem) with its arrowhead at the dependent and a hover title."""
    colour, dash = _STROKE[(kind, ok)]
    up = kind == "pred"
    sign = -1 if up else 1
    xd = xs[dep - 1]
    line: dict[str, Any] = dict(fill="none", stroke=colour, stroke_width=1.8, stroke_dasharray=dash)
    if head == 0:
        top = base + sign * root_h
        shape = el("line", x1=f"{xd:.1f}", x2=f"{xd:.1f}", y1=f"{top:.1f}", y2=f"{base:.1f}", **line)
        shape += el("text", "ROOT", x=f"{xd:.1f}", y=f"{top + (-4 if up else 12):.1f}", text_anchor="middle",
                    font_size=10, font_weight=700, fill=COLOURS["muted"])
    else:
        xh = xs[head - 1] + (3 if xd > xs[head - 1] else -3)
        h = sign * _height(xs, dep, head)
        y0, y1 = f"{base:.1f}", f"{base + h:.1f}"
        shape = el("path", d=f"M{xh:.1f} {y0} C{xh:.1f} {y1} {xd:.1f} {y1} {xd:.1f} {y0}", **line)
    return el("g", el("title", esc(tip)) + shape + _arrow(xd, base, up, colour))


def _tip(kind: str, words: Sequence[str], dep: int, head: int, ok: bool | None, rel: str | None) -> str:
    source = "ROOT" if head == 0 else f"{words[head - 1]} ({head})"
    verdict = "" if ok is None else ((" ✓" if ok else " ✗") if kind == "pred" else (" · found" if ok else " · missed"))
    name = "predicted" if kind == "pred" else "gold" + (f" {rel}" if rel else "")
    return f"{name}: {source} → {words[dep - 1]} ({dep}){verdict}"


def arc_diagram(words: Sequence[str], pred: Sequence[int] | None, gold: Sequence[int] | None = None,
                rels: Sequence[str] | None = None) -> str:
    """The arc diagram SVG: ``pred`` heads above the words, ``gold`` heads (and ``rels``) below.

    Heads follow CoNLL-U (``heads[k-1]`` = head of word k, 0 = ROOT). With gold heads, a
    predicted arc is blue when it is the gold arc and red dashed when not; gold arcs are grey
    when found and orange when missed. Either side may be None (then it is left out).
    """
    words = [str(w) for w in words]
    n = len(words)
    lay = word_layout(words)
    up = max([_height(lay.xs, k, h) * 0.75 for k, h in enumerate(pred or [], 1) if h] + [0.0])
    down = max([_height(lay.xs, k, h) * 0.75 for k, h in enumerate(gold or [], 1) if h] + [0.0])
    root_up, root_down = max(36.0, up + 14), max(36.0, down + 20)
    pred_base = (root_up + 20) if pred is not None else 10.0
    text_y = pred_base + 18
    gold_base = text_y + 20
    height = gold_base + (root_down + 18 if gold is not None else 0)
    parts: list[str] = []
    for k in range(1, n + 1):
        p = None if pred is None else int(pred[k - 1])
        g = None if gold is None else int(gold[k - 1])
        ok = None if p is None or g is None else p == g
        if p is not None:
            parts.append(_arc("pred", k, p, ok is not False, lay.xs, pred_base, root_up,
                              _tip("pred", words, k, p, ok, None)))
        if g is not None:
            rel = rels[k - 1] if rels else None
            parts.append(_arc("gold", k, g, ok is not False, lay.xs, gold_base, root_down,
                              _tip("gold", words, k, g, ok, rel)))
            if g and rel:
                parts.append(el("text", esc(rel), x=f"{(lay.xs[k - 1] + lay.xs[g - 1]) / 2:.1f}",
                                y=f"{gold_base + _height(lay.xs, k, g) * 0.75 + 11:.1f}", text_anchor="middle",
                                font_size=10, fill=COLOURS["rel"]))
        is_root = (g if g is not None else p) == 0
        parts.append(el("text", esc(words[k - 1]), x=f"{lay.xs[k - 1]:.1f}", y=f"{text_y:.1f}", text_anchor="middle",
                        font_size=WORD_PX, font_weight=700 if is_root else None, fill=COLOURS["ink"]))
        parts.append(el("text", str(k), x=f"{lay.xs[k - 1]:.1f}", y=f"{text_y + 13:.1f}", text_anchor="middle",
                        font_size=9.5, fill=COLOURS["index"]))
    return el("svg", "".join(parts), width=f"{lay.width:.0f}", height=f"{height:.0f}",
              viewBox=f"0 0 {lay.width:.0f} {height:.0f}", role="img", style=style(font_family=FONT),
              aria_label="dependency arcs: predicted above the words" + (", gold below" if gold is not None else ""))


def arc_legend(gold: bool) -> str:
    """The colour key under a diagram (only the predicted colour when gold is unknown)."""
    keys = [("pred", True, "predicted, correct" if gold else "predicted")]
    if gold:
        keys += [("pred", False, "predicted, wrong"), ("gold", True, "gold, found"), ("gold", False, "gold, missed")]
    out = []
    for kind, ok, text in keys:
        colour, dash = _STROKE[(kind, ok)]
        border = f"3px {'dashed' if dash else 'solid'} {colour}"
        swatch = el("span", style=style(display="inline-block", width="22px", height=0, vertical_align="middle",
                                         margin_right="5px", border_top=border))
        out.append(el("span", swatch + esc(text), style=style(margin_right="14px")))
    return el("div", "".join(out), style=style(font_size="12px", color=COLOURS["muted"], margin="4px 0"))


# --------------------------------------------------------------------------- constituency trees

def tree_diagram(tree: Any, words: Sequence[str], other_spans: set[tuple[int, int]] | None, kind: str) -> str:
    """SVG of an ``nltk.Tree`` over ``words``; a node spanning ≥ 2 words (not the whole sentence) is
    blue when its span is in ``other_spans`` (the other tree's) and red when not."""
    from pmask.eval.html.trees import tree_json

    words = [str(w) for w in words]
    lay = word_layout(words, 16)
    nodes: list[dict[str, Any]] = []

    def walk(node: Any) -> dict[str, Any]:
        if isinstance(node, int):
            return {"x": lay.xs[node], "height": 0, "lo": node, "hi": node + 1}
        kids = [walk(c) for c in node["c"]]
        info = {"x": sum(k["x"] for k in kids) / len(kids), "height": 1 + max(k["height"] for k in kids),
                "lo": min(k["lo"] for k in kids), "hi": max(k["hi"] for k in kids), "label": node["l"], "kids": kids}
        nodes.append(info)
        return info

    root = walk(tree_json(tree))
    leaf_y = 16 + root["height"] * 30 + 10

    def y(info: dict[str, Any]) -> float:
        return leaf_y - 14 - info["height"] * 30
    parts, n = [], len(words)
    for info in nodes:
        scored = info["hi"] - info["lo"] >= 2 and (info["lo"], info["hi"]) != (0, n)
        ok = other_spans is None or (info["lo"], info["hi"]) in other_spans
        colour = COLOURS["muted"] if not scored or other_spans is None else COLOURS["ok" if ok else "wrong"]
        lines = "".join(el("line", x1=f"{info['x']:.1f}", y1=f"{y(info) + 4:.1f}", x2=f"{k['x']:.1f}",
                           y2=f"{y(k) - (10 if k['height'] else 12):.1f}", stroke=colour, stroke_width=1.2)
                        for k in info["kids"])
        tip = f"{info['label']} [{info['lo']}, {info['hi']}) " + " ".join(words[info["lo"]:info["hi"]])
        label = el("text", esc(info["label"]), x=f"{info['x']:.1f}", y=f"{y(info):.1f}", text_anchor="middle",
                   font_size=11, font_weight=600, fill=colour)
        parts.append(el("g", el("title", esc(tip)) + lines + label))
    parts += [el("text", esc(w), x=f"{lay.xs[i]:.1f}", y=f"{leaf_y:.1f}", text_anchor="middle", font_size=WORD_PX,
                 fill=COLOURS["ink"]) for i, w in enumerate(words)]
    return el("svg", "".join(parts), width=f"{lay.width:.0f}", height=f"{leaf_y + 10:.0f}",
              viewBox=f"0 0 {lay.width:.0f} {leaf_y + 10:.0f}", role="img", aria_label=f"{kind} tree",
              style=style(font_family=FONT))
