"""From sentences to trees: the library behind ``pmask parse``.

Impacts come either from a model (computed on the fly) or from an impact store; decoders
come from :mod:`pmask.trees.registry`. Matrices follow the engine's convention
``F[i, j]`` = impact of word j on word i (0-based, n×n); faithful decoding uses the
authors' (n+1)×(n+1) layout whose index 0 is ``[CLS]``.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from pmask.corpora import Sentence
from pmask.errors import PmaskError

logger = logging.getLogger(__name__)

ROOT_MODES = ("free", "gold")


def meta_path(output: Path) -> Path:
    """Where ``pmask parse`` records how ``output`` was made: ``<output>.meta.json`` beside it."""
    output = Path(output)
    return output.with_name(output.name + ".meta.json")


@dataclass
class Impact:
    """One sentence's impacts at one layer: ``F`` word-level [n, n]; ``F_cls`` [n+1, n+1] or None."""

    F: np.ndarray
    F_cls: np.ndarray | None = None


@dataclass
class ParseSettings:
    """How trees are induced; recorded in every output's metadata."""

    decoder: str = "eisner"
    layer: int = -1
    root: str = "free"          # "free": the decoder picks the root; "gold": the gold root word is ROOT's only child
    faithful: bool = False      # the authors' matrix layout, normalisation and decoders (needs root="gold")
    multiroot: bool = False
    seed: int = 0

    def to_dict(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        if not decoder_needs_model(self.decoder):
            data.pop("layer")  # baselines read no impacts
        return data


@dataclass
class Parsed:
    """One induced tree: ``heads`` (CoNLL-U convention) for dependencies, ``tree`` for constituency."""

    sentence: Sentence
    heads: np.ndarray | None = None
    tree: Any = None
    skipped: str | None = None  # why no tree was produced (e.g. too long for the model)


@dataclass
class ParseSummary:
    sentences: int = 0
    parsed: int = 0
    skipped: list[str] = field(default_factory=list)


def decoder_task(name: str) -> str:
    """'dependency' or 'constituency' for a registered decoder name."""
    from pmask.trees.registry import CONSTITUENCY_DECODERS, DEPENDENCY_DECODERS

    if name in DEPENDENCY_DECODERS:
        return "dependency"
    if name in CONSTITUENCY_DECODERS:
        return "constituency"
    known = ", ".join(sorted([*DEPENDENCY_DECODERS, *CONSTITUENCY_DECODERS]))
    raise PmaskError(f"unknown decoder '{name}' (known: {known})")


def decoder_needs_model(name: str) -> bool:
    from pmask.trees.registry import CONSTITUENCY_DECODERS, DEPENDENCY_DECODERS

    spec = DEPENDENCY_DECODERS.get(name) or CONSTITUENCY_DECODERS.get(name)
    return bool(spec and spec.needs_model)


def check_settings(settings: ParseSettings, sentences: Sequence[Sentence]) -> None:
    """Refuse combinations that cannot work before any model work is done."""
    task = decoder_task(settings.decoder)
    if settings.root not in ROOT_MODES:
        raise PmaskError(f"--root must be one of {', '.join(ROOT_MODES)}, not '{settings.root}'")
    if settings.faithful and task != "dependency":
        raise PmaskError("--faithful applies to dependency decoders (eisner, cle) only")
    if settings.faithful and settings.decoder not in ("eisner", "cle"):
        raise PmaskError("--faithful applies to the eisner and cle decoders only")
    if settings.faithful and settings.root != "gold":
        raise PmaskError("--faithful reproduces the paper's setup, which needs --root gold")
    if settings.root == "gold" and task == "dependency":
        for s in sentences:
            if s.root is None:
                raise PmaskError(f"--root gold needs gold heads, but {s.where()} has none")


def impacts_by_layer(model: Any, sentences: Sequence[Sentence], *, layers: Sequence[int] = (-1,),
                     metric: str = "dist", subword: str = "avg", include_cls: bool = False,
                     batch_tokens: int | None = None, progress: bool = True,
                     stats: Any = None, tokenize: str = "words") -> Iterator[list[Impact] | None]:
    """Per sentence, one :class:`Impact` per requested layer from a single engine pass (None = skipped);
    ``tokenize`` as in :func:`pmask.perturb.pipeline.iter_impacts`."""
    from pmask.perturb.pipeline import iter_impacts

    for _, M in iter_impacts(model, sentences, layers=list(layers), metric=metric, subword=subword,
                             include_cls=include_cls, batch_tokens=batch_tokens, progress=progress, stats=stats,
                             tokenize=tokenize):
        if M is None:
            yield None
        else:
            yield [Impact(F=m[1:, 1:], F_cls=m) if include_cls else Impact(F=m) for m in M]


def impacts_from_model(model: Any, sentences: Sequence[Sentence], *, layer: int = -1,
                       **kwargs: Any) -> Iterator[Impact | None]:
    """Stream impacts for ``sentences`` at one layer, computed by the engine (None = skipped sentence);
    ``kwargs`` as for :func:`impacts_by_layer`."""
    for item in impacts_by_layer(model, sentences, layers=[layer], **kwargs):
        yield None if item is None else item[0]


def impacts_from_store(store: Any, sentences: Sequence[Sentence], *, layer: int = -1,
                       include_cls: bool = False) -> Iterator[Impact | None]:
    """Impacts of ``sentences`` (in corpus order, positions 0..) read from an :class:`ImpactStore`."""
    for pos, sent in enumerate(sentences):
        item = store.get(pos) if store.has(pos) else None
        if item is None:
            yield None
            continue
        if list(item.words) != list(sent.words):
            raise PmaskError(f"store sentence {pos} ('{' '.join(item.words[:6])} …') does not match "
                             f"{sent.where()}: was the store made from another corpus?")
        k = item.layer_index(layer)
        if include_cls:
            if item.cls_matrix is None:
                raise PmaskError("this store holds no [CLS] row, which --faithful needs; recompute it")
            yield Impact(F=item.matrix[k], F_cls=item.cls_matrix[k])
        else:
            yield Impact(F=item.matrix[k])


def parse_sentences(sentences: Sequence[Sentence], impacts: Iterable[Impact | None] | None,
                    settings: ParseSettings, summary: ParseSummary | None = None) -> Iterator[Parsed]:
    """Decode one tree per sentence; ``impacts`` may be None for decoders that need no model."""
    from pmask.trees.registry import decode_constituency, decode_dependencies

    check_settings(settings, sentences)
    task = decoder_task(settings.decoder)
    summary = summary if summary is not None else ParseSummary()
    impact_iter = iter(impacts) if impacts is not None else None
    for index, sent in enumerate(sentences):
        summary.sentences += 1
        impact = next(impact_iter) if impact_iter is not None else None
        if impact_iter is not None and impact is None:
            summary.skipped.append(sent.id)
            yield Parsed(sent, skipped="too long for the model")
            continue
        seed = settings.seed + index
        F = impact.F if impact is not None else None
        if task == "dependency":
            root = sent.root if settings.root == "gold" else None
            heads = decode_dependencies(settings.decoder, len(sent), F=F,
                                        F_cls=impact.F_cls if impact is not None else None, root=root,
                                        multiroot=settings.multiroot, faithful=settings.faithful, seed=seed,
                                        where=sent.where())
            summary.parsed += 1
            yield Parsed(sent, heads=np.asarray(heads))
        else:
            tree = decode_constituency(settings.decoder, list(sent.words), F=F, seed=seed, where=sent.where())
            summary.parsed += 1
            yield Parsed(sent, tree=tree)


def score_against_gold(sentences: Sequence[Sentence], impacts: Iterable[Impact | None] | None,
                       settings: ParseSettings, *, punct: str = "include") -> tuple[Any, list[Sentence]]:
    """Induce trees for ``sentences`` and score them against the sentences' own gold trees.

    Returns the score (``DependencyScore`` or ``BracketScore``) and the gold sentences that were
    scored (sentences skipped as too long for the model are left out of both).
    """
    from dataclasses import replace

    from pmask.eval.compare import score_brackets, score_dependencies

    parsed = [p for p in parse_sentences(sentences, impacts, settings) if p.skipped is None]
    golds = [p.sentence for p in parsed]
    if decoder_task(settings.decoder) == "dependency":
        pairs = [(replace(p.sentence, heads=[int(h) for h in p.heads]), p.sentence) for p in parsed]
        return score_dependencies(pairs, punct), golds
    return score_brackets([(p.tree, p.sentence) for p in parsed]), golds
