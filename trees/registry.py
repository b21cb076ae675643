"""Named decoders (the CLI's choices) and uniform entry points.

Dependency decoders return ``heads`` (int64, length n, ``heads[k-1]`` = head of word k,
0 = ROOT); constituency decoders return an ``nltk.Tree`` (label "X", words as leaves).
Model decoders read the word-level n x n impact matrix ``F`` (``F[i][j]`` = impact of word j
on word i), turned into ``scores[dependent, head]`` by :func:`dependency_scores` (raw
impacts, ROOT column 0.0).  Baselines ignore ``F``.

Randomised decoders draw from ``np.random.default_rng(seed)``: give each sentence its own
seed (e.g. base seed + sentence index) or the same-length sentences get the same tree.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable

import numpy as np
from nltk import Tree

from pmask.errors import DecodeError
from pmask.trees import baselines
from pmask.trees.cle import chu_liu_edmonds
from pmask.trees.eisner import eisner
from pmask.trees.faithful import faithful_cle, faithful_eisner
from pmask.trees.mart import mart
from pmask.trees.scores import dependency_scores

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Decoder:
    """A named decoder: ``fn`` (see the registry's entry points), whether it needs a model's F."""

    name: str
    fn: Callable
    needs_model: bool
    description: str


def _rng(seed) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


DEPENDENCY_DECODERS: dict[str, Decoder] = {
    d.name: d
    for d in [
        Decoder("eisner", eisner, True, "projective maximum spanning tree of the impact scores (Eisner)"),
        Decoder("cle", chu_liu_edmonds, True, "non-projective maximum spanning tree of the impact scores (Chu-Liu/Edmonds)"),
        Decoder("right-chain", baselines.right_chain, False, "each word headed by its right neighbour; last word (and gold root) -> ROOT"),
        Decoder("left-chain", baselines.left_chain, False, "each word headed by its left neighbour; first word (and gold root) -> ROOT"),
        Decoder("random-projective", baselines.random_projective, False, "uniformly random single-rooted projective tree"),
        Decoder("random-eisner", eisner, False, "Eisner on a U[0,1) random score matrix"),
        Decoder("random-cle", chu_liu_edmonds, False, "Chu-Liu/Edmonds on a U[0,1) random score matrix"),
    ]
}

CONSTITUENCY_DECODERS: dict[str, Decoder] = {
    d.name: d
    for d in [
        Decoder("mart", mart, True, "the paper's top-down three-way splitting of the impact matrix (MART)"),
        Decoder("mart-binary", mart, True, "top-down binary splitting of the impact matrix"),
        Decoder("right-branching", baselines.right_branching, False, "right-branching binary tree"),
        Decoder("left-branching", baselines.left_branching, False, "left-branching binary tree"),
        Decoder("balanced", baselines.balanced, False, "balanced binary tree (left half takes the extra word)"),
        Decoder("random-binary", baselines.random_binary, False, "uniformly random binary bracketing"),
    ]
}


def _lookup(table: dict[str, Decoder], name: str, kind: str) -> Decoder:
    try:
        return table[name]
    except KeyError:
        raise ValueError(f"unknown {kind} decoder {name!r}; choose from {', '.join(table)}") from None


def decode_dependencies(name: str, n: int, *, F=None, F_cls=None, root: int | None = None,
                        multiroot: bool = False, faithful: bool = False, seed=0,
                        where: str | None = None) -> np.ndarray:
    """Heads (length n, 0 = ROOT) from the dependency decoder ``name``.

    ``eisner``/``cle``: from ``F`` (n x n) with ``root``/``multiroot`` as in :func:`eisner`;
    with ``faithful=True`` the paper's setup on ``F_cls`` ((n+1)x(n+1), [CLS] = 0) with the
    gold ``root`` (required).  Baselines ignore F/F_cls/faithful; the chains and
    ``random-projective`` honour ``root``; ``random-eisner``/``random-cle`` honour
    ``root``/``multiroot``.  ``seed``: int or numpy Generator for the random ones.
    """
    dec = _lookup(DEPENDENCY_DECODERS, name, "dependency")
    place = f"{where}: " if where else ""
    if n < 1:
        raise DecodeError(f"{place}cannot decode an empty sentence")
    if name in ("eisner", "cle"):
        if faithful:
            if F_cls is None:
                raise DecodeError(f"{place}faithful {name} needs the [CLS]-including impact matrix (F_cls)")
            if root is None:
                raise DecodeError(f"{place}faithful {name} needs the gold root (the paper's setup)")
            fn = faithful_eisner if name == "eisner" else faithful_cle
            heads = fn(F_cls, root, where=where)
        else:
            if F is None:
                raise DecodeError(f"{place}{name} needs an impact matrix F")
            scores = dependency_scores(F, where=where)
            if scores.shape[0] != n + 1:
                raise DecodeError(f"{place}F is {scores.shape[0] - 1}x{scores.shape[0] - 1} but the sentence has {n} words")
            heads = dec.fn(scores, root=root, multiroot=multiroot, where=where)
    elif name in ("right-chain", "left-chain"):
        heads = dec.fn(n, root=root)
    elif name == "random-projective":
        heads = dec.fn(n, _rng(seed), root=root)
    else:  # random-eisner / random-cle
        heads = dec.fn(baselines.random_scores(n, _rng(seed)), root=root, multiroot=multiroot, where=where)
    if len(heads) != n:
        raise DecodeError(f"{place}{name} returned {len(heads)} heads for {n} words")
    return heads


def decode_constituency(name: str, words, *, F=None, seed=0, where: str | None = None) -> Tree:
    """An ``nltk.Tree`` over ``words`` from the constituency decoder ``name`` (``F`` for mart/mart-binary)."""
    dec = _lookup(CONSTITUENCY_DECODERS, name, "constituency")
    place = f"{where}: " if where else ""
    words = list(words)
    if not words:
        raise DecodeError(f"{place}cannot build a tree over an empty sentence")
    if dec.needs_model:
        if F is None:
            raise DecodeError(f"{place}{name} needs an impact matrix F")
        return mart(F, words, variant="binary" if name == "mart-binary" else "three-way", where=where)
    if name == "random-binary":
        return dec.fn(words, _rng(seed))
    return dec.fn(words)
