"""The self-contained HTML page of one impact-map heatmap (``.html``: no external resources, hover values): the
same map as :mod:`pmask.eval.figures.heatmap` draws through matplotlib, as a table of coloured cells.
"""
from __future__ import annotations

import html
import math
from typing import Any

import numpy as np

from pmask.common.labels import plural
from pmask.common.units import unit_entry
from pmask.corpora.sentence import NO_HEAD


def fmt_value(v: float) -> str:
    return "nan" if math.isnan(v) else f"{v:.4g}"


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:16px;color:#222}
h1{font-size:16px;margin:0 0 4px}
p.note{font-size:12px;color:#555;margin:2px 0 10px}
table.hm{border-collapse:collapse;font-size:12px}
table.hm td{width:22px;height:22px;min-width:22px;padding:0;border:1px solid #fff;cursor:crosshair}
table.hm td.gold{outline:2px solid %(gold)s;outline-offset:-2px}
table.hm td.nan{background:%(nan)s}
table.hm td.pred::after{content:"";display:block;width:8px;height:8px;margin:auto;border-radius:50%%;
  background:#fff;border:1.5px solid #000}
table.hm td:hover{outline:2px solid #000;outline-offset:-2px}
table.hm th{font-weight:normal;white-space:nowrap;padding:1px 4px}
table.hm th.row{text-align:right}
table.hm th.col{vertical-align:bottom;height:1px}
table.hm th.col span{writing-mode:vertical-rl;transform:rotate(180deg);display:inline-block}
table.hm tr.root th.row{color:%(gold)s;font-weight:bold}
table.hm tr.root td{border-top:2px dashed %(gold)s;border-bottom:2px dashed %(gold)s}
table.hm th.axis{font-style:italic;color:#555}
th.hl{background:#ffe680}
.scale{display:flex;align-items:center;gap:6px;font-size:12px;margin-top:12px}
.bar{width:240px;height:14px;border:1px solid #999;background:linear-gradient(to right,%(stops)s)}
#readout{font:12px monospace;min-height:16px;margin:8px 0}
"""

# Highlights the hovered cell's row and column labels and prints "j → i: value".
_JS = """
(function(){
var t=document.getElementById('hm'),r=document.getElementById('readout'),on=[];
function clear(){on.forEach(function(e){e.classList.remove('hl')});on=[];}
t.addEventListener('mouseover',function(ev){var c=ev.target.closest('td');if(!c)return;clear();
var i=c.parentNode.dataset.i,j=c.dataset.j;
on=[document.getElementById('r'+i),document.getElementById('c'+j)];
on.forEach(function(e){e.classList.add('hl')});r.textContent=c.title;});
t.addEventListener('mouseleave',function(){clear();r.textContent='';});
})();
"""


def heatmap_page(arr: np.ndarray, words: list[str], heads: list[int] | None, title: str | None,
                 cmap: Any, lo: float, hi: float, pred: list[int] | None = None, unit: str = "word", *,
                 colours: tuple[str, str]) -> str:
    """The page of one impact map (checked inputs of :func:`pmask.eval.figures.heatmap.render_heatmap`): a table
    of cells coloured by ``cmap`` over ``lo``..``hi``, gold arcs outlined, predicted heads dotted, hover values;
    ``colours``: the gold outline's and a NaN cell's."""
    from matplotlib.colors import Normalize, to_hex

    gold_colour, nan_colour = colours

    norm = Normalize(lo, hi, clip=True)
    esc = html.escape
    n = len(words)
    stops = ",".join(to_hex(cmap(x / 10)) for x in range(11))
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{esc(title or 'impact map')}</title>",
           "<style>" + _CSS % {"gold": gold_colour, "nan": nan_colour, "stops": stops} + "</style>",
           "</head><body>"]
    if title:
        out.append(f"<h1>{esc(title)}</h1>")
    entry = unit_entry(unit)
    noun, labels = entry.noun, entry.labels(words) if entry.long else words
    out.append(f'<p class="note">Cell (i, j) = impact of masking {noun} j (column) on {noun} i (row). '
               "Hover a cell for its value.")
    if heads is not None:
        out.append(f' <span style="color:{gold_colour}">Outlined cells: gold arc (column = gold head of the '
                   f"row's {noun}); dashed row: gold root.</span>")
    if pred is not None:
        out.append(" Dots: predicted head (on the diagonal: predicted root).")
    out.append("</p>")
    out.append('<div id="readout"></div><table class="hm" id="hm"><thead><tr>'
               '<th class="axis">i (measured) \\ j (masked)</th>')
    for j, w in enumerate(labels):   # a shortened label keeps its unit's whole text on hover
        out.append(f'<th class="col" id="c{j}" title="{esc(words[j])}"><span>{esc(w)}</span></th>')
    out.append("</tr></thead><tbody>")
    gold = {(k - 1, h - 1) for k, h in enumerate(heads or [], start=1) if h}
    roots = {k - 1 for k, h in enumerate(heads or [], start=1) if h == 0}
    predicted = {(k - 1, (h or k) - 1) for k, h in enumerate(pred or [], start=1) if h != NO_HEAD}
    for i, wi in enumerate(words):
        cls = ' class="root"' if i in roots else ""
        out.append(f'<tr data-i="{i}"{cls}><th class="row" id="r{i}" title="{esc(wi)}">{esc(labels[i])}</th>')
        for j, wj in enumerate(words):
            v = float(arr[i, j])
            tip = esc(f"{j + 1} {wj} → {i + 1} {wi}: {fmt_value(v)}", quote=True)
            classes = ((["gold"] if (i, j) in gold else []) + (["pred"] if (i, j) in predicted else [])
                       + (["nan"] if math.isnan(v) else []))
            attr = f' class="{" ".join(classes)}"' if classes else ""
            style = "" if math.isnan(v) else f' style="background:{to_hex(cmap(norm(v)))}"'
            out.append(f'<td data-j="{j}"{attr}{style} title="{tip}"></td>')
        out.append("</tr>")
    out.append("</tbody></table>")
    out.append(f'<div class="scale"><span>{fmt_value(lo)}</span><div class="bar"></div>'
               f"<span>{fmt_value(hi)}</span><span>impact f(i, j)</span></div>")
    out.append(f"<p class=\"note\">{plural(n, noun)}.</p><script>{_JS}</script></body></html>")
    return "\n".join(out) + "\n"
