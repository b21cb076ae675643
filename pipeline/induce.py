"""From impacts to trees: the parse pipeline behind ``pmask parse`` (the pipeline wing).

Impacts come from any *impact source* (:class:`ImpactSourceLike`: in practice
:class:`pmask.perturb.source.ImpactSource`, a store or a corpus and a model, opened by
the caller); decoders come from :mod:`pmask.trees.registry`. Matrices follow the engine's
convention ``F[i, j]`` = impact of word j on word i (0-based, n×n); faithful decoding uses the
authors' (n+1)×(n+1) layout whose index 0 is ``[CLS]``.

Example:
    >>> from pmask.corpora import Sentence
    >>> s = Sentence(id="1", words=["the", "cat", "sat"], heads=[2, 3, 0], path="x")
    >>> [p.heads.tolist() for p in parse_sentences([s], None, ParseSettings(decoder="right-chain"))]
    [[2, 3, 0]]
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Protocol, Sequence

import numpy as np

from pmask.common.display import ImpactMap, RichDisplay
from pmask.common.errors import ModelError, PmaskError, SettingError
from pmask.common.files import is_stdout
from pmask.common.labels import either, plural, unit_noun
from pmask.common.options import ROOT_MODES, SPAN_PROBES, SYMMETRIZE_MODES, check_choice, metric_recipe
from pmask.common.output_checks import check_outputs
from pmask.common.probe_entries import PROBE_ENTRIES
from pmask.corpora import Sentence
from pmask.corpora.corpus_spec import CorpusSpec
from pmask.corpora.provenance import Provenance, corpus_record, meta_path
from pmask.pipeline.trees_output import check_trees_file, faithful_documents, write_trees
from pmask.trees.registry import (
    DECODERS,
    DecodeInput,
    decode,
    decoder_needs_model,
    decoder_task,
    get_decoder,
)
from pmask.trees.tasks import corpus_task, task_entry

__all__ = [
    "ImpactLike", "ImpactSourceLike", "ParseSettings", "Parsed", "ParseSummary", "ParseResult", "check_settings",
    "check_trees_file", "refuse_layer_zero",
    "decoder_task", "decoder_needs_model", "parse_sentences", "parse_corpus", "meta_path",
]


class ImpactLike(Protocol):
    """One sentence's impacts at one layer: ``F`` [n, n] and, for faithful decoding, ``F_cls`` [n+1, n+1];
    an optional ``distance`` attribute (True: F is a distance, low = close) tells decoders to read ``-F``."""

    F: np.ndarray
    F_cls: np.ndarray | None


class ImpactSourceLike(Protocol):
    """What the parse pipeline reads from an impact source (see ``pmask.perturb.source``)."""

    sentences: list[Sentence]
    corpus: Path               # the corpus file the sentences were read from
    selection: CorpusSpec      # its format and filters (recorded in the provenance)

    def impacts(self, layer: int = -1, *, include_cls: bool = False) -> Iterable[ImpactLike | None]: ...
    def describe_model(self) -> dict[str, Any] | None: ...
    def impact_settings(self) -> dict[str, Any]: ...
    def inputs(self) -> list[Path]: ...


@dataclass
class ParseSettings:
    """How trees are induced from one layer (in every output's metadata): see ``request.Decoding.settings``."""

    decoder: str = "eisner"
    layer: int = -1
    root: str = "gold"          # "gold": the gold root word is ROOT's only child; "free": the decoder picks it
    faithful: bool = False      # the authors' matrix layout, normalisation and decoders (needs root="gold")
    multiroot: bool = False
    seed: int = 0
    bias: float = 0.0           # distance-split's right-branching bias λ (Kim et al. 2020)
    symmetrize: str = "none"    # F made symmetric before decoding: none, sum, triu, tril (Hoover et al. 2021)
    absolute: bool = False      # |F| before symmetrizing (their --absolute_value)

    def to_dict(self) -> dict[str, Any]:
        """The settings that matter for this decoder (its entry's ``settings``: no layer for baselines, no
        root or multiroot for constituency decoders, faithful where it has the authors' mode, a bias for
        distance-split only, nothing its entry ignores)."""
        kept = ("decoder", "seed", *get_decoder(self.decoder).settings)
        return {name: value for name, value in self.__dict__.items() if name in kept}


@dataclass
class Parsed(RichDisplay):
    """One induced tree: ``heads`` (CoNLL-U convention) for dependencies, ``tree`` for constituency.

    In a notebook it shows its arc diagram (predicted arcs above the words, gold below when the
    sentence has gold heads) or its predicted and gold trees; :meth:`impact_map` shows its impacts.
    """

    sentence: Sentence
    heads: np.ndarray | None = None
    tree: Any = None
    skipped: str | None = None  # why no tree was produced (e.g. too long for the model)
    impact: ImpactLike | None = None  # the impacts the tree was decoded from (None for baselines)

    @property
    def F(self) -> np.ndarray | None:
        """The word-level impact matrix [n, n] (``F[i, j]`` = impact of word j on word i), or None."""
        return None if self.impact is None else self.impact.F

    def impact_map(self) -> ImpactMap:
        """The impacts this tree was decoded from, with the words, gold heads and predicted heads
        (a notebook shows it as a heatmap).

        Raises:
            PmaskError: for baselines and skipped sentences, which have no impacts.
        """
        if self.F is None:
            why = self.skipped or "its decoder reads no impacts"
            raise PmaskError(f"{self.sentence.where()}: no impact matrix ({why})")
        pred = None if self.heads is None else [int(h) for h in self.heads]
        return ImpactMap(words=list(self.sentence.words), F=self.F, gold_heads=self.sentence.heads, pred_heads=pred,
                         title=f"sentence {self.sentence.id}")

    def __repr__(self) -> str:
        """One line: the sentence, its size and what was induced (never the impact matrix or every word)."""
        def cut(text: str, size: int) -> str:
            return text if len(text) <= size else text[:size].rstrip() + " …"

        words = list(self.sentence.words)
        if self.skipped is not None:
            what = f"skipped: {self.skipped}"
        elif self.heads is not None:
            what = "heads " + cut(" ".join(str(int(h)) for h in self.heads), 40)
        else:
            what = "tree " + cut(" ".join(str(self.tree).split()), 60)
        text = cut(" ".join(words), 50)
        impact = f", impacts {self.F.shape[0]}×{self.F.shape[1]}" if self.F is not None else ""
        size = plural(len(words), unit_noun(getattr(self.sentence, "unit", "word")))   # "3 EDUs" for a document
        return f"Parsed({self.sentence.id!r}, {size}: {text!r}; {what}{impact})"


@dataclass
class ParseSummary:
    sentences: int = 0
    parsed: int = 0
    skipped: list[str] = field(default_factory=list)


def refuse_layer_zero(layers: Iterable[int] | str, flag: str = "layer", probe: str | None = "pair") -> None:
    """A :class:`SettingError` when ``layers`` (ints, or "all", which starts at 1) asks to decode layer 0.

    Layer 0 is the embeddings: masking word j cannot change word i's embedding, so its impacts are all zeros
    by construction and every tree would tie. Checked before any model work; storing, exporting and drawing
    layer 0 stay allowed (there it shows what it is). Probe ``attention`` has no weights there. Probe
    ``distance`` is exempt: the distances between the words' embeddings are a tree like any other layer's
    (with ``jsd``/``hellinger`` the store refuses layer 0).
    """
    entry = PROBE_ENTRIES.get(probe or "")
    if entry and entry.decodes_layer_zero or isinstance(layers, str) or 0 not in list(layers):
        return
    if entry and entry.attention_only:
        raise SettingError(f"{{{flag}}} 0: layer 0 (the embeddings) has no attention weights, which probe {probe} "
                           f"reads; choose layers from 1 up")
    raise SettingError(f"{{{flag}}} 0: layer 0 (the embeddings) has impacts that are all zeros by construction "
                       f"(masking word j cannot change word i's embedding), so every tree would tie; choose "
                       f"layers from 1 up")


def check_settings(settings: ParseSettings, sentences: Sequence[Sentence], probe: str | None = "pair") -> None:
    """Refuse combinations that cannot work before any model work is done.

    Args:
        settings: the parse settings.
        sentences: the corpus (gold roots are needed with ``root="gold"``).
        probe: how the impacts are read out of the model (``--faithful`` is the pair probe's alone);
            None skips what depends on it (layer 0, ``--faithful``): checked by a caller that knows it.

    Raises:
        SettingError: naming the settings involved (``{root}``, ``{faithful}``, ``{probe}``).
    """
    dec = get_decoder(settings.decoder)
    if dec.needs_model and probe is not None:
        refuse_layer_zero([settings.layer], probe=probe)
        check_pairing(probe, settings.decoder)
    # Wu et al.'s discourse pipeline has its own checks; the word-level faithful ones below do not apply
    faithful = settings.faithful and not faithful_documents(settings.faithful, settings.decoder, settings.root,
                                                            sentences)
    if faithful and probe is not None:
        own = PROBE_ENTRIES[probe].faithful if probe in PROBE_ENTRIES else None
        if own is None:
            pipelines = [n for n, e in PROBE_ENTRIES.items() if e.faithful]
            raise SettingError(f"{{faithful}} is the authors' pipeline of probes {', '.join(pipelines)}; "
                               f"probe {probe} has no faithful mode")
        if settings.decoder not in own.decoders:
            raise SettingError(f"{{faithful}} with probe {probe} is the authors' pipeline, whose decoder is "
                               f"{either(own.decoders)}, not {settings.decoder}")
    if settings.bias and "bias" not in dec.settings:
        biased = either([n for n, d in DECODERS.items() if "bias" in d.settings])
        raise SettingError(f"{{bias}} is the right-branching bias of the {biased} decoder, not of {settings.decoder}")
    if settings.root not in ROOT_MODES:
        raise SettingError(f"{{root}} must be one of {', '.join(sorted(ROOT_MODES))}, not '{settings.root}'")
    if faithful and not dec.supports_faithful:
        names = [n for n, d in DECODERS.items() if d.supports_faithful]
        raise SettingError(f"{{faithful}} applies to the {', '.join(names[:-1])} and {names[-1]} decoders only")
    if faithful and settings.root != "gold" and "root" in dec.settings and not dec.undirected:
        raise SettingError("{faithful} reproduces the paper's setup, which needs {root} gold")
    check_choice("symmetrization", settings.symmetrize, SYMMETRIZE_MODES)
    if ignored := [name for name in dec.ignores if getattr(settings, name, None) not in (None, False, "none")]:
        why, them = " (it reads span charts, not word-pair matrices)" if dec.spans else "", len(ignored) > 1
        raise SettingError(f"{{decoder}} {settings.decoder} takes no {' or '.join(f'{{{n}}}' for n in ignored)}"
                           f"{why}; leave {'them' if them else 'it'} out")
    if faithful and not dec.undirected and (settings.symmetrize != "none" or settings.absolute):
        raise SettingError(f"{{faithful}} {settings.decoder} is the paper's pipeline on the [CLS] layout, which "
                           "takes no {symmetrize} or {absolute}")
    if settings.root == "gold" and "root" in dec.settings:
        lacking = next((s for s in sentences if s.root is None), None)
        if lacking is not None:
            raise SettingError(_no_gold_heads(lacking, settings.decoder))


def check_pairing(probe: str, decoder: str) -> None:
    """Refuse, in one line, a model decoder that cannot read the probe's matrices: a span decoder (``cky``)
    reads only span charts (probe distortion), every other model decoder only word-pair matrices.

    Raises:
        SettingError: naming ``{probe}`` and ``{decoder}``.

    Example:
        >>> check_pairing("distortion", "cky")
    """
    dec = get_decoder(decoder)
    if not dec.needs_model:
        return
    span_decoders = [n for n, d in DECODERS.items() if d.spans]
    if dec.spans and probe not in SPAN_PROBES:
        raise SettingError(f"{{decoder}} {decoder} reads span charts (probe {' or '.join(SPAN_PROBES)}), not the "
                           f"word-pair matrices of {{probe}} {probe}")
    if probe in SPAN_PROBES and not dec.spans:
        raise SettingError(f"{{probe}} {probe} gives span charts, which {{decoder}} {decoder} cannot read: use "
                           f"{{decoder}} {' or '.join(span_decoders)} (or a baseline)")


def _no_gold_heads(s: Sentence, decoder: str) -> str:
    """Why ``root="gold"`` cannot work on ``s``, and what to choose instead."""
    if s.tree is None:
        return f"{{root}} gold needs gold heads, but {s.where()} has none; use {{root}} free"
    own = task_entry(corpus_task([s]))   # the task of the tree it has
    return (f"{{root}} gold needs gold heads, but {s.where()} has a bracketed tree and no heads: choose a "
            f"{own.name} decoder such as {{decoder}} {own.default_decoder} (the default for bracketed "
            f"input) or {own.primary_baseline}, or {{root}} free for {decoder}'s dependency trees (written "
            f"as CoNLL-U, to a .conllu file)")


def parse_sentences(sentences: Sequence[Sentence], impacts: Iterable[ImpactLike | None] | None,
                    settings: ParseSettings, summary: ParseSummary | None = None) -> Iterator[Parsed]:
    """Decode one tree per sentence; ``impacts`` may be None for decoders that need no model.

    Args:
        sentences: the corpus sentences (gold roots are read from them with ``root="gold"``).
        impacts: one :class:`Impact` (``F`` [n, n]) or None (skipped) per sentence.
        settings: decoder, root mode, faithful, multiroot, seed (the seed of sentence k is seed + k).
        summary: counts are added to it.

    What depends on the probe the impacts were read with (layer 0, ``faithful``) is the caller's to
    check (:func:`check_settings` with the probe); an all-zero matrix is refused here.

    Yields:
        One :class:`Parsed` per sentence, in order.
    """
    check_settings(settings, sentences, None)
    dec = get_decoder(settings.decoder)
    task, gold_root = task_entry(dec.task), settings.root == "gold" and "root" in dec.settings
    spans = dec.spans   # a chart of 2 words has one tree: it may be all zeros (sub, layer 0)
    summary = summary if summary is not None else ParseSummary()
    impact_iter = iter(impacts) if impacts is not None else None
    try:
        for index, sent in enumerate(sentences):
            summary.sentences += 1
            impact = next(impact_iter) if impact_iter is not None else None
            if impact_iter is not None and impact is None:
                summary.skipped.append(sent.id)
                yield Parsed(sent, skipped="too long for the model")
                continue
            if impact is not None and len(sent.words) > (2 if spans else 1) and not np.any(impact.F):
                raise SettingError(f"{sent.where()}: the impact matrix at {{layer}} {settings.layer} is all zeros, "
                                   f"so every tree would tie; layer 0 (the embeddings) is always all zeros because "
                                   f"masking word j cannot change word i's embedding: choose a layer from 1 up")
            x = DecodeInput(words=list(sent.words), F=impact.F if impact is not None else None,
                            F_cls=impact.F_cls if impact is not None else None,
                            root=sent.root if gold_root else None,
                            multiroot=settings.multiroot, faithful=settings.faithful, seed=settings.seed + index,
                            where=sent.where(), distance=bool(getattr(impact, "distance", False)),
                            bias=settings.bias, symmetrize=settings.symmetrize, absolute=settings.absolute,
                            keep=None if sent.upos is None else [u != "PUNCT" for u in sent.upos], unit=sent.unit)
            out = decode(settings.decoder, x)
            summary.parsed += 1
            tree: dict[str, Any] = {task.field: np.asarray(out) if task.per_word else out}
            yield Parsed(sent, impact=impact, **tree)
    finally:   # stop a streaming engine (and close its progress bar) before an error reaches the user
        close = getattr(impact_iter, "close", None)
        if close is not None:
            close()


@dataclass
class ParseResult:
    """What :func:`parse_corpus` wrote: the trees file, its provenance and the counts."""

    output: Path
    provenance: Provenance

    def describe(self) -> str:
        """One line: ``OUTPUT: N <task> trees[, K skipped (too long): ids][ (only K of N sentences: …)]``."""
        p = self.provenance
        skipped = f", {len(p.skipped)} skipped (too long): {', '.join(p.skipped[:5])}" if p.skipped else ""
        part = (p.corpus or {}).get("unfinished_store")
        partial = (f" (only {part['sentences']} of {part['of']} sentences: the store {part['store']} is unfinished)"
                   if part else "")
        return f"{self.output}: {plural(p.parsed, f'{p.task} tree')}{skipped}{partial}"


def parse_corpus(source: ImpactSourceLike, output: str | Path, settings: ParseSettings, *, deprel: str = "_",
                 command: list[str] | None = None) -> ParseResult:
    """Induce a tree for every sentence of ``source`` and write them with their provenance.

    Args:
        source: an opened impact source (``ImpactSource.open(...)``); baselines read only its sentences.
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
    check_outputs([output, None if is_stdout(output) else meta_path(output)], source.inputs())   # before any work
    check_trees_file(output, settings.decoder, source.sentences)
    check_settings(settings, source.sentences,
                   str(source.impact_settings().get("probe", "pair")) if dec.needs_model else "pair")
    impacts = model_desc = impact = None
    if dec.needs_model:
        impacts = source.impacts(settings.layer, include_cls=settings.faithful)
        model_desc, impact = source.describe_model(), source.impact_settings()
        check_settings(settings, source.sentences, str(impact.get("probe", "pair")))   # a cache store's own probe
        own = metric_recipe(impact.get("metric")) if settings.faithful else None
        if own and settings.decoder not in own.decoders:
            raise SettingError(f"{{faithful}} with {{metric}} {impact.get('metric')} is {own.authors}'s pipeline, "
                               f"which decodes with {either(own.decoders)}, not {settings.decoder}")
    summary = ParseSummary()
    parsed = list(parse_sentences(source.sentences, impacts, settings, summary))
    if impacts is not None and summary.sentences and not summary.parsed:   # never an empty output with exit 0
        raise ModelError(f"no tree to write to {output}: every sentence ({summary.sentences}) was skipped as too "
                         f"long for the model ({', '.join(summary.skipped[:5])})")
    corpus = corpus_record(source.corpus, source.selection.format, source.selection.limit, source.selection.max_words)
    coverage = getattr(source, "coverage", None)   # an unfinished store read anyway (sources may lack it)
    if coverage:
        corpus["unfinished_store"] = coverage
    write_trees(parsed, output, dec.task, deprel)
    provenance = Provenance(
        task=dec.task, settings=settings.to_dict(), model=model_desc, impact=impact, corpus=corpus,
        sentences=summary.sentences, parsed=summary.parsed, skipped=summary.skipped,
        seconds=round(time.perf_counter() - t0, 3), command=command)
    provenance.write(output)
    return ParseResult(output=output, provenance=provenance)
