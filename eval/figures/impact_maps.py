"""Impact maps of chosen sentences: the library behind ``pmask heatmap``.

:func:`select_sentences` turns sentence specs (ids, 0-based indices, ranges ``A-B``, ``all``)
into positions; :func:`draw_impact_maps` reads those sentences' impacts from an
:class:`~pmask.perturb.source.ImpactSource` and draws them with :mod:`pmask.eval.figures.heatmap`.

Example:
    >>> from types import SimpleNamespace as S
    >>> select_sentences([S(id="a"), S(id="b"), S(id="c")], ["b", "0-1"])
    [1, 0]
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from pmask.common.errors import PmaskError, SettingError
from pmask.common.labels import absolute_layer, probe_label
from pmask.common.options import HEATMAP_FORMATS, SPAN_PROBES
from pmask.common.output_checks import Output, check_output, make_output_folder
from pmask.corpora.corpus_spec import CorpusSpec
from pmask.corpora.provenance import read_provenance
from pmask.corpora.read import detect_format
from pmask.eval.comparison.consistency import check_same_origin, prediction_origin, source_origin
from pmask.eval.figures.heatmap import render_heatmap, render_heatmaps, safe_stem
from pmask.perturb.source import ImpactSource

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


def _drawn(F: Any, one_sided: bool) -> Any:
    """``F`` as drawn: a one-sided matrix (a causal model's word-pair impacts: word j moves only the words after it,
    so the engine fills only j < i) has its cells above the diagonal blank (NaN, drawn grey), not zeros; a matrix
    that fills them (distances, the echo layouts) is drawn whole."""
    arr = np.asarray(F, dtype=float)
    if not one_sided or np.triu(arr, 1).any():
        return F
    return np.where(np.triu(np.ones_like(arr, dtype=bool), 1), np.nan, arr)


def draw_impact_maps(source: ImpactSource, specs: Sequence[str], output: str | Path, *, layer: int = -1,
                     gold: str | Path | None = None, fmt: str = "png", pred: str | Path | None = None) -> list[Path]:
    """Draw the impact matrix at ``layer`` of each chosen sentence, with gold and predicted arcs.

    Args:
        source: the sentences and their impacts.
        specs: sentence specs, see :func:`select_sentences`.
        output: one file (``.png``, ``.svg``, ``.pdf``, ``.html``) for one sentence, else a folder.
        layer: the layer drawn (-1 = last).
        gold: a dependency corpus whose heads are drawn over the maps (matched by sentence id);
            default: the source's own heads when its corpus has them (a gold CoNLL-U as the source).
        fmt: the file type inside a folder.
        pred: a predicted CoNLL-U (``pmask parse``) whose heads are drawn as dots (matched by sentence
            id); refused when its ``.meta.json`` names another model or impact settings than the source.

    Returns:
        The paths written.
    """
    try:
        chosen = select_sentences(source.sentences, specs)
    except SettingError as err:
        part = getattr(source, "coverage", None)   # an unfinished store: the sentence may be still to come
        if part:
            raise SettingError(f"{err.template} (the store {part['store']} is unfinished: it holds "
                               f"{part['sentences']} of {part['of']} sentences)") from None
        raise
    single = heatmap_target(output, len(chosen))   # before any model work
    check_output(Output(output, folder=single is None))
    if source.impact_settings().get("probe") in SPAN_PROBES:
        return draw_span_charts(source, chosen, output, single, layer=layer, fmt=fmt, pred=pred)
    gold_by_id = _own_heads(source) if gold is None else _read_heads(Path(gold), "gold")
    pred_by_id = {} if pred is None else _read_pred(Path(pred), source, layer)
    impacts = source.impacts(layer, indices=chosen)
    family = source.family(source.model_spec)   # after the impacts: the loaded model's, or the store's
    one_sided = family is not None and not family.sees_right
    items = []
    for k, impact in zip(chosen, impacts):
        sent = source.sentences[k]
        if impact is None:
            logger.warning("sentence %s: no impacts (too long for the model); skipped", sent.id)
            continue
        arcs = [_arcs(sent, by_id, path, what) for by_id, path, what in ((gold_by_id, gold, "gold"),
                                                                         (pred_by_id, pred, "predicted"))]
        items.append((sent.id, _drawn(impact.F, one_sided), list(sent.words), *arcs))
    if not items:
        raise PmaskError("no sentence to draw")
    output = Path(output)
    shown = absolute_layer(layer, (source.describe_model() or {}).get("num_layers"))
    label = f"layer {shown}, probe {probe_label(source.impact_settings())}"
    first = source.sentences[chosen[0]]   # a corpus is sentences of words or documents of EDUs
    if single is not None:
        sid, F, words, heads, pred_heads = items[0]
        return [render_heatmap(F, words, output, gold_heads=heads, pred_heads=pred_heads,
                               title=f"{first.noun} {sid}, {label}", unit=first.unit)]
    return render_heatmaps(items, output, fmt=fmt, progress=getattr(source, "progress", True), label=label,
                           noun=first.noun, unit=first.unit)


def draw_span_charts(source: ImpactSource, chosen: Sequence[int], output: str | Path, single: str | None, *,
                     layer: int = -1, fmt: str = "png", pred: str | Path | None = None) -> list[Path]:
    """:func:`draw_impact_maps` for a span probe: each chart as a start × length map with the source's own
    gold brackets (a PTB source) outlined and the spans of ``pred`` (bracketed trees from ``pmask parse``,
    line k = sentence k of the source) dotted (:mod:`pmask.eval.figures.span_chart`)."""
    from pmask.corpora.ptb import read_brackets
    from pmask.eval.figures.span_chart import render_span_chart, tree_spans

    predicted = None if pred is None else read_brackets(pred)
    if predicted is not None and len(predicted) != len(source.sentences):
        raise PmaskError(f"{pred}: {len(predicted)} trees for the {len(source.sentences)} sentences of the source")
    shown = absolute_layer(layer, (source.describe_model() or {}).get("num_layers"))
    label = f"layer {shown}, probe {probe_label(source.impact_settings())}"
    paths: list[Path] = []
    taken: set[str] = set()
    if single is None:
        make_output_folder(Path(output))
    for k, impact in zip(chosen, source.impacts(layer, indices=chosen)):
        sent = source.sentences[k]
        if impact is None:
            logger.warning("sentence %s: no impacts (too long for the model); skipped", sent.id)
            continue
        target = Path(output) if single is not None else Path(output) / f"{safe_stem(sent.id, taken)}.{fmt}"
        mine = None if predicted is None else predicted[k]
        if mine is not None and list(mine.leaves()) != list(sent.words):
            raise PmaskError(f"{pred}: tree {k + 1} has other words than {sent.where()}")
        paths.append(render_span_chart(impact.F, list(sent.words), target, gold_spans=tree_spans(sent.tree),
                                       pred_spans=tree_spans(mine),
                                       title=f"sentence {sent.id}, {label}"))
    if not paths:
        raise PmaskError("no sentence to draw")
    return paths


def _arcs(sent: Any, by_id: dict[str, Any], path: str | Path | None, what: str) -> Any:
    """The heads ``by_id`` holds for ``sent`` (None, with a warning when a named file lacks it)."""
    other = by_id.get(sent.id)
    if other is None:
        if path is not None:
            logger.warning("sentence %s: not in the %s file %s; drawn without %s arcs", sent.id, what, path, what)
        return None
    if list(other.words) != list(sent.words):
        raise PmaskError(f"{path}: {what} sentence {sent.id} has other words than {sent.where()}")
    return other.heads


def _own_heads(source: ImpactSource) -> dict[str, Any]:
    """The source's own gold heads (a CoNLL-U or .dp corpus), matched by id; {} without heads."""
    return {s.id: s for s in source.sentences if s.heads is not None}


def _read_heads(path: Path, what: str) -> dict[str, Any]:
    sentences = CorpusSpec(path).read()
    if sentences and all(s.heads is None for s in sentences):
        raise PmaskError(f"{path}: holds no dependency heads (format {detect_format(path)}); {what} arcs need a "
                         f"CoNLL-U or .dp file")
    return {s.id: s for s in sentences}


def _read_pred(path: Path, source: ImpactSource, layer: int) -> dict[str, Any]:
    """The prediction's sentences by id, after checking it was decoded from this source's kind of impacts."""
    check_same_origin([source_origin(source), prediction_origin(path)],
                      hint="draw a prediction over the impacts it was decoded from")
    provenance = read_provenance(path)
    if provenance is not None and provenance.model:
        made_at = (provenance.settings or {}).get("layer")
        num_layers = provenance.model.get("num_layers")
        if made_at is not None and _absolute(made_at, num_layers) != _absolute(layer, num_layers):
            logger.warning("%s was decoded from layer %s; the map shows layer %s", path, made_at, layer)
    return _read_heads(path, "predicted")


def _absolute(layer: int, num_layers: int | None) -> int:
    return layer + num_layers + 1 if layer < 0 and num_layers else layer
