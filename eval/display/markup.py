"""Markup helpers for the notebook display: escaped elements, inline styles, text widths, the frame.

Everything here returns strings of static HTML/SVG with inline ``style``/presentation attributes
only (no ``<style>`` block that could restyle the notebook around it, no script, no URL), so the
output looks the same in JupyterLab, classic Notebook and VS Code, even where a sanitiser strips
styles sheets from untrusted output.
"""
from __future__ import annotations

import base64
import html
import unicodedata
from typing import Any, Mapping

#: The report's colours (``eval/html/assets/report.css``), so the notebook and the report agree.
COLOURS = {"ok": "#2166ac", "wrong": "#d6301d", "gold-ok": "#7a93ad", "gold-miss": "#e08214", "ink": "#1d2330",
           "muted": "#667085", "line": "#e3e7ee", "index": "#98a2b3", "rel": "#8a94a6", "best": "#eef4fb"}
FONT = "system-ui, -apple-system, 'Segoe UI', sans-serif"


def esc(value: Any) -> str:
    """``value`` as text safe inside an element or a double-quoted attribute."""
    return html.escape(str(value), quote=True)


def attrs(values: Mapping[str, Any]) -> str:
    """`` name="value"`` pairs (escaped); None values are left out, ``_`` in names becomes ``-``."""
    return "".join(f' {k.rstrip("_").replace("_", "-")}="{esc(v)}"' for k, v in values.items() if v is not None)


def el(name: str, children: str = "", **values: Any) -> str:
    """One element: ``el("text", esc(word), x=3, font_size=15)``; ``children`` must already be markup."""
    return f"<{name}{attrs(values)}>{children}</{name}>"


def style(**values: Any) -> str:
    """A ``style`` attribute value: ``style(font_size="12px")`` -> ``"font-size:12px"``."""
    return ";".join(f"{k.replace('_', '-')}:{v}" for k, v in values.items() if v is not None)


def text_width(text: str, size: float) -> float:
    """Approximate rendered width in pixels of ``text`` at ``size`` px in a sans-serif font.

    Wide (East Asian) characters count 1 em, combining marks 0, capitals and digits 0.66 em,
    everything else 0.55 em: close enough to space words apart without measuring fonts.
    """
    width = 0.0
    for ch in text:
        if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
            continue
        if unicodedata.east_asian_width(ch) in ("W", "F"):
            width += 1.0
        elif ch.isupper() or ch.isdigit():
            width += 0.66
        elif ch in "il.,;:'!|":
            width += 0.3
        else:
            width += 0.55
    return width * size


def png_img(data: bytes, alt: str, width: int | None = None) -> str:
    """An ``<img>`` holding ``data`` (PNG bytes) as a data URI (no file, no network), ``width`` CSS px wide."""
    size = f' style="width:{width}px;max-width:100%;height:auto"' if width else ""
    return f'<img alt="{esc(alt)}"{size} src="data:image/png;base64,{base64.b64encode(data).decode("ascii")}">'


def frame(body: str, title: str | None = None, note: str | None = None) -> str:
    """The block every displayed object is wrapped in: an optional bold title line, ``body``, a note."""
    head = el("div", esc(title), style=style(font_weight=600, margin="2px 0 6px")) if title else ""
    tail = el("div", esc(note), style=style(color=COLOURS["muted"], font_size="12px", margin="4px 0")) if note else ""
    return el("div", head + body + tail, class_="pmask-display",
              style=style(font_family=FONT, color=COLOURS["ink"], font_size="13px", line_height=1.35))


def scroll(body: str) -> str:
    """A horizontally scrolling box (long sentences stay legible instead of shrinking)."""
    return el("div", body, style=style(overflow_x="auto", max_width="100%"))
