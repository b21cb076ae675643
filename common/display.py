"""Rich notebook display for pmask's results, through one hook (torch-free, no drawing here).

Jupyter (JupyterLab, classic Notebook, VS Code) shows an object by calling its ``_repr_html_``
/ ``_repr_png_``. The classes of the lower wings (``Parsed`` in :mod:`pmask.pipeline.induce`,
stored impacts in :mod:`pmask.perturb.store`) cannot import the drawing code, which lives in
:mod:`pmask.eval.display` above them; so they inherit :class:`RichDisplay`, whose methods ask a
renderer that ``pmask/__init__.py`` connects with :func:`connect` (it imports
``pmask.eval.display`` only when something is first displayed, so importing pmask stays light).

:class:`ImpactMap` is the displayable form of one impact matrix with its words.

Example:
    >>> import pmask
    >>> p = pmask.parse(["the cat sat"], decoder="right-chain")[0]
    >>> "<svg" in p._repr_html_()
    True
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

__all__ = ["FORMATS", "ImpactMap", "RichDisplay", "connect", "render"]

#: The display formats a renderer may be connected for (IPython's ``_repr_<format>_`` names).
FORMATS = ("html", "png")

_renderers: dict[str, Callable[[Any], Any]] = {}


def connect(fmt: str, renderer: Callable[[Any], Any]) -> None:
    """Make ``renderer(obj)`` draw every :class:`RichDisplay` object in ``fmt`` (one of :data:`FORMATS`).

    The renderer returns the HTML text or PNG bytes, or None when it has no picture of that kind
    for the object (IPython then uses the next format it knows).
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown display format {fmt!r}; use one of {', '.join(FORMATS)}")
    _renderers[fmt] = renderer


def render(obj: Any, fmt: str) -> Any:
    """``obj`` drawn in ``fmt`` by the connected renderer (None when none is connected)."""
    renderer = _renderers.get(fmt)
    return None if renderer is None else renderer(obj)


class RichDisplay:
    """Mixin: notebooks draw the object (HTML: tables, arc diagrams, inline SVG; PNG where natural)."""

    def _repr_html_(self) -> str | None:
        return render(self, "html")

    def _repr_png_(self) -> bytes | None:
        return render(self, "png")


@dataclass
class ImpactMap(RichDisplay):
    """One impact matrix and its words, shown as a heatmap (rows: measured word i, columns: masked word j).

    ``F[i][j]`` = impact of word j on word i; ``gold_heads`` (CoNLL-U convention, 0 = ROOT) are
    outlined, ``pred_heads`` marked with dots, as in ``pmask heatmap``.

    Example:
        >>> ImpactMap(words=["a", "b"], F=[[0, 1], [2, 0]], gold_heads=[2, 0]).words
        ['a', 'b']
    """

    words: Sequence[str]
    F: Any
    gold_heads: Sequence[int] | None = None
    pred_heads: Sequence[int] | None = None
    title: str | None = None
