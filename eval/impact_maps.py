"""Impact maps of chosen sentences: the library behind ``pmask heatmap``.

:func:`select_sentences` turns sentence specs (ids, 0-based indices, ranges ``A-B``, ``all``)
into positions; :func:`draw_impact_maps` reads those sentences' impacts from an
:class:`~pmask.perturb.impact_source.ImpactSource` and draws them with :mod:`pmask.eval.heatmap`.

Example:
    >>> from types import SimpleNamespace as S
    >>> select_sentences([S(id="a"), S(id="b"), S(id="c")], ["b", "0-1"])
    [1, 0]
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Sequence

from pmask.corpora.read import detect_format
from pmask.common.errors import PmaskError, SettingError
from pmask.eval.heatmap import HEATMAP_FORMATS, render_heatmap, render_heatmaps
from pmask.eval.probes import probe_label
from pmask.perturb.impact_source import ImpactSource
from pmask.corpora.spec import CorpusSpec

logger = logging.getLogger(__name__)


def select_sentences(sentences: Sequence[Any], specs: Sequence[str]) -> list[int]:
    """0-based positions for sentence specs: ids, indices, ranges ``A-B``, or ``all`` (comma lists too).

    Raises:
        PmaskError: a spec that names no sentence, or a range out of bounds.
    """
    ids = {s.id: k for k, s in enumerate(sentences)}
    out: list[int] = []
    for spec in specs:
        for part in spec.split(","):
            part = part.strip()
            if part == "all":
                out.extend(range(len(sentences)))
            elif part in ids:
                out.append(ids[part])
            elif part.isdigit() and int(part) < len(sentences):
                out.append(int(part))
            elif "-" in part and all(x.isdigit() for x in part.split("-", 1)):
                a, b = (int(x) for x in part.split("-", 1))
                if b >= len(sentences) or a > b:
                    raise SettingError(f"{{sentence}} {part}: out of range (0-{len(sentences) - 1})")
                out.extend(range(a, b + 1))
            else:
                raise SettingError(f"{{sentence}} {part}: no sentence with that id or index")
    return list(dict.fromkeys(out))


def heatmap_target(output: str | Path, count: int) -> str | None:
    """The file format of ``output`` when it names one file, None when it names a folder.

    An existing directory, or a name without a suffix, is a folder. Otherwise the suffix decides
    (.png, .svg, .pdf, .html); any other suffix, or several sentences into one file, is an error.
    """
    output = Path(output)
    if output.is_dir() or not output.suffix:
        return None
    fmt = output.suffix.lower().lstrip(".")
    if fmt not in HEATMAP_FORMATS:
        raise SettingError(f"{output}: unsupported heatmap format {output.suffix!r}; use one of "
                           f"{', '.join('.' + f for f in HEATMAP_FORMATS)}, or give a folder")
    if count > 1:
        raise SettingError(f"{output}: {count} sentences cannot go into one file; give a folder as {{output}} "
                           f"(one file per sentence)")
    return fmt


def draw_impact_maps(source: ImpactSource, specs: Sequence[str], output: str | Path, *, layer: int = -1,
                     gold: str | Path | None = None, fmt: str = "png") -> list[Path]:
    """Draw the impact matrix at ``layer`` of each chosen sentence, with gold arcs from ``gold``.

    Args:
        source: the sentences and their impacts.
        specs: sentence specs, see :func:`select_sentences`.
        output: one file (``.png``, ``.svg``, ``.pdf``, ``.html``) for one sentence, else a folder.
        layer: the layer drawn (-1 = last).
        gold: a dependency corpus whose heads are drawn over the maps (matched by sentence id).
        fmt: the file type inside a folder.

    Returns:
        The paths written.
    """
    chosen = select_sentences(source.sentences, specs)
    single = heatmap_target(output, len(chosen))   # before any model work
    gold_by_id = {} if gold is None else _read_gold(Path(gold))
    impacts = source.impacts(layer, indices=chosen)
    items = []
    for k, impact in zip(chosen, impacts):
        sent = source.sentences[k]
        if impact is None:
            logger.warning("sentence %s: no impacts (too long for the model); skipped", sent.id)
            continue
        g = gold_by_id.get(sent.id)
        if gold is not None and g is None:
            logger.warning("sentence %s: not in the gold file %s; drawn without gold arcs", sent.id, gold)
        elif g is not None and list(g.words) != list(sent.words):
            raise PmaskError(f"{gold}: gold sentence {sent.id} has other words than {sent.where()}")
        items.append((sent.id, impact.F, list(sent.words), g.heads if g is not None else None))
    if not items:
        raise PmaskError("no sentence to draw")
    output = Path(output)
    label = f"layer {layer}, probe {probe_label(source.impact_settings())}"
    if single is not None:
        sid, F, words, heads = items[0]
        return [render_heatmap(F, words, output, gold_heads=heads, title=f"sentence {sid}, {label}")]
    return render_heatmaps(items, output, fmt=fmt, label=label)


def _read_gold(path: Path) -> dict[str, Any]:
    sentences = CorpusSpec(path).read()
    if sentences and all(s.heads is None for s in sentences):
        raise PmaskError(f"{path}: holds no dependency heads (format {detect_format(path)}); gold arcs need a "
                         f"CoNLL-U or .dp file")
    return {s.id: s for s in sentences}
