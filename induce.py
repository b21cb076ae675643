"""From sentences to trees: the library behind ``pmask parse``.

Impacts come from an :class:`~pmask.source.ImpactSource` (a store, or a corpus and a model);
decoders come from :mod:`pmask.trees.registry`. Matrices follow the engine's convention
``F[i, j]`` = impact of word j on word i (0-based, n×n); faithful decoding uses the authors'
(n+1)×(n+1) layout whose index 0 is ``[CLS]``.

Example:
    >>> from pmask.source import CorpusSpec
    >>> result = parse_corpus(CorpusSpec("pud.conllu"), "rc.conllu", ParseSettings(decoder="right-chain"))
    ... # doctest: +SKIP
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from pmask.corpora import Sentence, write_brackets, write_conllu
from pmask.errors import PmaskError, SettingError
from pmask.eval.compare import score_brackets, score_dependencies
from pmask.options import DEFAULT_ROOT, ROOT_MODES
from pmask.files import refuse_overwriting_inputs
from pmask.provenance import Provenance, corpus_record, meta_path
from pmask.source import (CorpusSpec, Impact, ImpactSource, ModelSpec, impacts_by_layer, impacts_from_model,
                          impacts_from_store)
from pmask.trees.registry import DECODERS, DecodeInput, decode, get_decoder

logger = logging.getLogger(__name__)

__all__ = [
    "Impact", "ParseSettings", "Parsed", "ParseSummary", "ParseResult", "check_settings", "decoder_task",
    "decoder_needs_model", "parse", "parse_sentences", "parse_corpus", "score_against_gold", "meta_path",
    "impacts_by_layer", "impacts_from_model", "impacts_from_store",
]


@dataclass
class ParseSettings:
    """How trees are induced; recorded in every output's metadata."""

    decoder: str = "eisner"
    layer: int = -1
    root: str = DEFAULT_ROOT    # "gold": the gold root word is ROOT's only child; "free": the decoder picks it
    faithful: bool = False      # the authors' matrix layout, normalisation and decoders (needs root="gold")
    multiroot: bool = False
    seed: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The settings that matter for this decoder (no layer for baselines, no root, faithful or
        multiroot for constituency decoders)."""
        data = dict(self.__dict__)
        if not decoder_needs_model(self.decoder):
            data.pop("layer")  # baselines read no impacts
        if self.decoder in DECODERS and DECODERS[self.decoder].task == "constituency":
            for name in ("root", "faithful", "multiroot"):
                data.pop(name)
        return data


@dataclass
class Parsed:
    """One induced tree: ``heads`` (CoNLL-U convention) for dependencies, ``tree`` for constituency."""

    sentence: Sentence
    heads: np.ndarray | None = None
    tree: Any = None
    skipped: str | None = None  # why no tree was produced (e.g. too long for the model)
    impact: Impact | None = None  # the impacts the tree was decoded from (None for baselines)

    @property
    def F(self) -> np.ndarray | None:
        """The word-level impact matrix [n, n] (``F[i, j]`` = impact of word j on word i), or None."""
        return None if self.impact is None else self.impact.F


@dataclass
class ParseSummary:
    sentences: int = 0
    parsed: int = 0
    skipped: list[str] = field(default_factory=list)


def decoder_task(name: str) -> str:
    """'dependency' or 'constituency' for a registered decoder name."""
    return get_decoder(name).task


def decoder_needs_model(name: str) -> bool:
    """Whether decoder ``name`` reads impacts (False for baselines and unknown names)."""
    try:
        return get_decoder(name).needs_model
    except PmaskError:
        return False


def check_settings(settings: ParseSettings, sentences: Sequence[Sentence]) -> None:
    """Refuse combinations that cannot work before any model work is done.

    Raises:
        SettingError: naming the settings involved (``{root}``, ``{faithful}``).
    """
    dec = get_decoder(settings.decoder)
    if settings.root not in ROOT_MODES:
        raise SettingError(f"{{root}} must be one of {', '.join(sorted(ROOT_MODES))}, not '{settings.root}'")
    faithful = ", ".join(n for n, d in DECODERS.items() if d.supports_faithful)
    if settings.faithful and dec.task != "dependency":
        raise SettingError(f"{{faithful}} applies to dependency decoders ({faithful}) only")
    if settings.faithful and not dec.supports_faithful:
        raise SettingError(f"{{faithful}} applies to the {faithful.replace(', ', ' and ')} decoders only")
    if settings.faithful and settings.root != "gold":
        raise SettingError("{faithful} reproduces the paper's setup, which needs {root} gold")
    if settings.root == "gold" and dec.task == "dependency":
        for s in sentences:
            if s.root is None:
                raise SettingError(f"{{root}} gold needs gold heads, but {s.where()} has none; use {{root}} free")


def parse_sentences(sentences: Sequence[Sentence], impacts: Iterable[Impact | None] | None,
                    settings: ParseSettings, summary: ParseSummary | None = None) -> Iterator[Parsed]:
    """Decode one tree per sentence; ``impacts`` may be None for decoders that need no model.

    Args:
        sentences: the corpus sentences (gold roots are read from them with ``root="gold"``).
        impacts: one :class:`Impact` (``F`` [n, n]) or None (skipped) per sentence.
        settings: decoder, root mode, faithful, multiroot, seed (the seed of sentence k is seed + k).
        summary: counts are added to it.

    Yields:
        One :class:`Parsed` per sentence, in order.
    """
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
        if impact is not None and len(sent.words) > 1 and not np.any(impact.F):
            raise SettingError(f"{sent.where()}: the impact matrix at {{layer}} {settings.layer} is all zeros, so "
                               f"every tree would tie; layer 0 (the embeddings) is always all zeros because masking "
                               f"word j cannot change word i's embedding: choose a layer from 1 up")
        x = DecodeInput(words=list(sent.words), F=impact.F if impact is not None else None,
                        F_cls=impact.F_cls if impact is not None else None,
                        root=sent.root if settings.root == "gold" and task == "dependency" else None,
                        multiroot=settings.multiroot, faithful=settings.faithful, seed=settings.seed + index,
                        where=sent.where())
        out = decode(settings.decoder, x)
        summary.parsed += 1
        if task == "dependency":
            yield Parsed(sent, heads=np.asarray(out), impact=impact)
        else:
            yield Parsed(sent, tree=out, impact=impact)


def score_against_gold(sentences: Sequence[Sentence], impacts: Iterable[Impact | None] | None,
                       settings: ParseSettings, *, punct: str = "include") -> tuple[Any, list[Sentence]]:
    """Induce trees for ``sentences`` and score them against the sentences' own gold trees.

    Returns the score (``DependencyScore`` or ``BracketScore``) and the gold sentences that were
    scored (sentences skipped as too long for the model are left out of both).
    """
    parsed = [p for p in parse_sentences(sentences, impacts, settings) if p.skipped is None]
    golds = [p.sentence for p in parsed]
    if decoder_task(settings.decoder) == "dependency":
        pairs = [(replace(p.sentence, heads=[int(h) for h in p.heads]), p.sentence) for p in parsed]
        return score_dependencies(pairs, punct), golds
    return score_brackets([(p.tree, p.sentence) for p in parsed]), golds


def _as_sentences(sentences: Iterable[Sentence | str | Sequence[str]]) -> list[Sentence]:
    out = []
    for k, s in enumerate(sentences, start=1):
        if isinstance(s, Sentence):
            out.append(s)
        else:
            words = s.split() if isinstance(s, str) else [str(w) for w in s]
            out.append(Sentence(id=str(k), words=words, path="<input>"))
    return out


def parse(sentences: Iterable[Sentence | str | Sequence[str]], *, model: Any = None, decoder: str = "eisner",
          layer: int = -1, root: str | None = None, faithful: bool = False, multiroot: bool = False,
          metric: str | None = None, subword: str | None = None, seed: int = 0, device: str = "auto",
          dtype: str = "auto", batch_tokens: int | None = None, progress: bool = False) -> list[Parsed]:
    """Induce a tree for each sentence in one call (also available as ``pmask.parse``).

    Args:
        sentences: whitespace-tokenised strings, word lists, or :class:`~pmask.corpora.Sentence`s.
        model: a hub name, a local directory, ``random:NAME``, or a loaded ``LoadedModel``; not
            needed by the baselines.
        decoder: a name from :data:`pmask.trees.registry.DECODERS`.
        layer: the layer whose impacts are decoded (-1 = last).
        root: "gold" (the gold root word is ROOT's only child) or "free"; default "gold" when every
            sentence carries gold heads, else "free".
        metric, subword: the impact metric and subword policy (default dist, avg).

    Returns:
        One :class:`Parsed` per sentence: ``heads`` (dependency decoders, int array of length n,
        0 = ROOT) or ``tree`` (an ``nltk.Tree``), with ``F`` [n, n], the impacts it was decoded from
        (None for baselines and for sentences too long for the model, whose ``skipped`` says why).

    Example:
        >>> import pmask
        >>> [p.heads.tolist() for p in pmask.parse(["the cat sat"], decoder="right-chain")]
        [[2, 3, 0]]
    """
    sents = _as_sentences(sentences)
    if root is None:
        root = "gold" if sents and all(s.heads for s in sents) else "free"
    settings = ParseSettings(decoder=decoder, layer=layer, root=root, faithful=faithful, multiroot=multiroot,
                             seed=seed)
    check_settings(settings, sents)
    impacts = None
    if get_decoder(decoder).needs_model:
        spec = ModelSpec(model if isinstance(model, str) or model is None else None, metric=metric,
                         subword=subword, device=device, dtype=dtype, batch_tokens=batch_tokens).with_defaults()
        loaded = None if model is None or isinstance(model, str) else model
        source = ImpactSource(sents, Path("<input>"), model=spec, progress=progress, loaded_model=loaded)
        impacts = source.impacts(layer, include_cls=faithful)
    return list(parse_sentences(sents, impacts, settings))


@dataclass
class ParseResult:
    """What :func:`parse_corpus` wrote: the trees file, its provenance and the counts."""

    output: Path
    provenance: Provenance

    def describe(self) -> str:
        """One line: ``OUTPUT: N <task> trees[, K skipped (too long): ids]``."""
        p = self.provenance
        skipped = f", {len(p.skipped)} skipped (too long): {', '.join(p.skipped[:5])}" if p.skipped else ""
        return f"{self.output}: {p.parsed} {p.task} trees{skipped}"


def parse_corpus(source: CorpusSpec, output: str | Path, settings: ParseSettings, *,
                 model: ModelSpec | None = None, store: str | Path | None = None,
                 corpus: str | Path | None = None, deprel: str = "_", command: list[str] | None = None,
                 progress: bool = True) -> ParseResult:
    """Induce a tree for every sentence of ``source`` and write them with their provenance.

    Args:
        source: a corpus (impacts computed with ``model``; cached in ``store`` when given) or an
            impact store directory (``corpus`` names its corpus when the manifest's path moved).
        output: CoNLL-U (dependency decoders: the input with HEAD replaced) or one bracketed tree
            per line (constituency decoders); ``<output>.meta.json`` is written beside it.
        settings: decoder, layer, root mode, faithful, multiroot, seed.
        deprel: DEPREL written for every word.
        command: the command line, recorded in the provenance.

    Returns:
        A :class:`ParseResult`.
    """
    t0 = time.perf_counter()
    output = Path(output)
    dec = get_decoder(settings.decoder)
    model_desc = impact = None
    if not dec.needs_model:  # baselines read only the corpus (a store's own corpus for a store)
        src = ImpactSource.open(source, corpus=corpus)
        impacts = None
    else:
        src = ImpactSource.open(source, model=model, store=store, corpus=corpus, progress=progress)
    sentences, corpus_path = src.sentences, src.corpus
    refuse_overwriting_inputs([output, meta_path(output)], [source.path, corpus_path, store])
    check_settings(settings, sentences)
    if dec.needs_model:
        impacts = src.impacts(settings.layer, include_cls=settings.faithful)
        model_desc, impact = src.describe_model(), src.impact_settings()
    summary = ParseSummary()
    parsed = list(parse_sentences(sentences, impacts, settings, summary))
    if dec.task == "dependency":
        write_conllu([p.sentence for p in parsed], [p.heads for p in parsed], output, deprel=deprel)
    else:
        write_brackets([p.tree for p in parsed], output)
    provenance = Provenance(
        task=dec.task, settings=settings.to_dict(), model=model_desc,
        impact=impact,
        corpus=corpus_record(corpus_path, source.format, source.limit, source.max_words),
        sentences=summary.sentences, parsed=summary.parsed, skipped=summary.skipped,
        seconds=round(time.perf_counter() - t0, 3), command=command)
    provenance.write(output)
    return ParseResult(output=output, provenance=provenance)
