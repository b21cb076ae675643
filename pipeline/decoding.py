"""How impacts become trees: :class:`Decoding`, the one settings type of decoding (decoder, layer(s), root,
faithful, multiroot, seed, bias, symmetrize, absolute).

A request holds one as given (``decoder``, ``root`` and ``symmetrize`` None: not given);
:func:`pmask.pipeline.request.resolve` chooses them and :func:`pmask.pipeline.request.check_request` checks
the result, once, before any model work; the parse pipeline (:mod:`pmask.pipeline.induce`) decodes with a
resolved one, one layer at a time (:meth:`Decoding.at`), and every output records :meth:`Decoding.to_dict`.

Example:
    >>> Decoding("eisner", -1, "gold", symmetrize="none").to_dict()
    {'decoder': 'eisner', 'layer': -1, 'root': 'gold', 'faithful': False, 'multiroot': False, 'seed': 0, \
'symmetrize': 'none', 'absolute': False}
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Sequence

from pmask.trees.registry import get_decoder

__all__ = ["Decoding"]


@dataclass(frozen=True)
class Decoding:
    """How impacts become trees (None: not given, :func:`pmask.pipeline.request.resolve` chooses).

    Attributes:
        decoder: a name of :data:`pmask.trees.registry.DECODERS`.
        layers: the layer decoded (``parse``: one int, -1 = last) or several (``sweep``, ``bench``: ints or
            "all"); :meth:`at` gives the decoding of one.
        root: "gold" (the gold root word is ROOT's only child) or "free" (the decoder picks it).
        faithful: the authors' pipeline (``--faithful``): their matrix layout, normalisation and decoders.
        multiroot: several words under ROOT (a free root only).
        seed: the seed of the random baselines (sentence k's is seed + k).
        bias: distance-split's right-branching bias λ (Kim et al. 2020).
        symmetrize: F made symmetric before decoding: none, sum, triu, tril (Hoover et al. 2021).
        absolute: ``|F|`` before that (their ``--absolute_value``).
    """

    decoder: str | None = None
    layers: int | Sequence[int] | str = -1
    root: str | None = None
    faithful: bool = False
    multiroot: bool = False
    seed: int = 0
    bias: float = 0.0
    symmetrize: str | None = None
    absolute: bool = False

    @property
    def layer(self) -> int:
        """The one layer decoded (:attr:`layers` as one int; several: see :meth:`at`)."""
        if not isinstance(self.layers, int):
            raise ValueError(f"layers {self.layers!r} are several: decode them one at a time (Decoding.at)")
        return self.layers

    def at(self, layer: int) -> Decoding:
        """This decoding of layer ``layer`` alone (a sweep decodes each of its layers so)."""
        return replace(self, layers=layer)

    def to_dict(self) -> dict[str, Any]:
        """The settings that matter for this decoder, as every output records them (its entry's ``settings``: no
        layer for baselines, no root or multiroot for constituency decoders, faithful where it has the authors'
        mode, a bias for distance-split only, nothing its entry ignores); the layer under ``layer``."""
        kept = ("decoder", "seed", *get_decoder(str(self.decoder)).settings)
        named = {("layer" if f.name == "layers" else f.name): getattr(self, f.name) for f in fields(self)}
        return {name: value for name, value in named.items() if name in kept}
