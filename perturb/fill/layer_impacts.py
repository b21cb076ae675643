"""One sentence's impacts at one layer (:class:`Impact`) and the two ways of getting them, sentence by sentence:
computed by the engine (:func:`impacts_by_layer`) or read from an impact store (:func:`impacts_from_store_by_layers`),
a store's sentence checked against the corpus's. Which of the two a run uses is
:class:`pmask.perturb.source.ImpactSource`'s decision.

Matrices follow the engine's convention ``F[i, j]`` = impact of word j on word i (0-based, n×n); with
``include_cls`` the faithful layout (n+1)×(n+1), index 0 = ``[CLS]``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import numpy as np

from pmask.common.errors import PmaskError, SettingError, StoreError
from pmask.common.options import DISTANCE_PROBES
from pmask.corpora import Sentence
from pmask.perturb.engine.impact_settings import ImpactSettings
from pmask.perturb.fill.compute import iter_impacts
from pmask.perturb.probes.attention_heads import select_head

__all__ = ["Impact", "impacts_by_layer", "impacts_from_model", "impacts_from_store", "impacts_from_store_by_layers"]


@dataclass
class Impact:
    """One sentence's impacts at one layer: ``F`` word-level [n, n]; ``F_cls`` [n+1, n+1] or None;
    ``distance``: F is a distance (low = close, probe distance), not an affinity."""

    F: np.ndarray
    F_cls: np.ndarray | None = None
    distance: bool = False


def _impact(matrix: np.ndarray, include_cls: bool, probe: str, head: str | int | None) -> Impact:
    """The :class:`Impact` of one layer's stored or computed matrix ([n(+1), n(+1)] or [H, n(+1), n(+1)])."""
    m = select_head(matrix, head)
    return Impact(F=m[1:, 1:] if include_cls else m, F_cls=m if include_cls else None,
                  distance=probe in DISTANCE_PROBES)


def impacts_by_layer(model: Any, sentences: Sequence[Sentence], *, layers: Sequence[int],
                     impact: ImpactSettings, include_cls: bool = False,
                     batch_tokens: int | None = None, progress: bool = True,
                     stats: Any = None, head: str | int | None = None) -> Iterator[list[Impact] | None]:
    """Per sentence, one :class:`Impact` per requested layer from a single engine pass (None = skipped);
    ``impact`` (resolved) says how impacts are computed (``impact.probe``: see :mod:`pmask.perturb.probes`),
    ``head`` which attention head is decoded."""
    probe = str(impact.probe)
    for _, M in iter_impacts(model, sentences, layers=list(layers), impact=impact, include_cls=include_cls,
                             batch_tokens=batch_tokens, progress=progress, stats=stats):
        yield None if M is None else [_impact(m, include_cls, probe, head) for m in M]


def impacts_from_model(model: Any, sentences: Sequence[Sentence], *, layer: int = -1,
                       **kwargs: Any) -> Iterator[Impact | None]:
    """Stream impacts for ``sentences`` at one layer, computed by the engine (None = skipped sentence);
    ``kwargs`` as for :func:`impacts_by_layer`."""
    for item in impacts_by_layer(model, sentences, layers=[layer], **kwargs):
        yield None if item is None else item[0]


def impacts_from_store(store: Any, sentences: Sequence[Sentence], *, layer: int = -1,
                       include_cls: bool = False, positions: Sequence[int] | None = None,
                       head: str | int | None = None) -> Iterator[Impact | None]:
    """Impacts of ``sentences`` read from an ``ImpactStore`` (None = skipped as too long; a sentence the
    store does not hold is a StoreError).

    ``positions`` are the sentences' corpus positions (default 0, 1, ...); ``head`` picks the
    attention head in a store that keeps every head.
    """
    for item in impacts_from_store_by_layers(store, sentences, [layer], include_cls=include_cls,
                                             positions=positions, head=head):
        yield None if item is None else item[0]


def impacts_from_store_by_layers(store: Any, sentences: Sequence[Sentence], layers: Sequence[int], *,
                                 include_cls: bool = False, positions: Sequence[int] | None = None,
                                 head: str | int | None = None) -> Iterator[list[Impact] | None]:
    """Per sentence, one :class:`Impact` per layer of ``layers``, each sentence read from the store once."""
    probe = store.probe
    too_long = {int(e["index"]) for e in getattr(store, "skipped", ())}
    for pos, sent in zip(range(len(sentences)) if positions is None else positions, sentences):
        item = store.get(pos) if store.has(pos) else None
        if item is None and pos not in too_long:   # only what the store skipped as too long reads as None
            raise StoreError(f"{store.path} holds no sentence {pos} ({sent.where()}): it was made for fewer "
                             f"sentences or another selection ('pmask info {store.path}' shows which)")
        if item is None:
            yield None
            continue
        if list(item.words) != list(sent.words):
            raise PmaskError(f"store sentence {pos} ('{' '.join(item.words[:6])} …') does not match "
                             f"{sent.where()}: the store was made from another corpus, or another selection of "
                             f"it ('pmask info {store.path}' shows which)")
        if include_cls and item.cls_matrix is None:
            raise SettingError("this store holds no [CLS] row, which {faithful} needs; recompute it")
        full = item.cls_matrix if include_cls else item.matrix
        yield [_impact(full[item.layer_index(layer)], include_cls, probe, head) for layer in layers]
