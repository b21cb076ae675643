"""From impacts to trees: the parse pipeline behind ``pmask parse`` (the pipeline wing).

Impacts come from any *impact source* (:class:`ImpactSourceLike`: in practice
:class:`pmask.perturb.source.ImpactSource`, a store or a corpus and a model, opened by
the caller); decoders come from :mod:`pmask.trees.registry`. Matrices follow the engine's
convention ``F[i, j]`` = impact of word j on word i (0-based, n×n); faithful decoding uses the
authors' (n+1)×(n+1) layout whose index 0 is ``[CLS]``.

It decodes with a resolved and checked :class:`~pmask.pipeline.decoding.Decoding`
(:func:`pmask.pipeline.request.resolve`, :func:`pmask.pipeline.request.check_request`: the one gate, run
before any model work); what it refuses here is what only the impacts show (an all-zero matrix).

Example:
    >>> from pmask.corpora import Sentence
    >>> s = Sentence(id="1", words=["the", "cat", "sat"], heads=[2, 3, 0], path="x")
    >>> decoding = Decoding("right-chain", -1, "gold", symmetrize="none")
    >>> [p.heads.tolist() for p in parse_sentences([s], None, decoding)]
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
from pmask.common.labels import plural
from pmask.common.output_checks import check_outputs
from pmask.common.units import unit_entry, unit_of
from pmask.corpora import Sentence
from pmask.corpora.corpus_spec import CorpusSpec
from pmask.corpora.provenance import Provenance, corpus_record, meta_path
from pmask.pipeline.decoding import Decoding
from pmask.pipeline.trees_output import check_trees_file, write_trees
from pmask.trees.registry import DecodeInput, decode, decoder_needs_model, decoder_task, get_decoder
from pmask.trees.tasks import task_entry
from pmask.trees.undirected import symmetrize

__all__ = [
    "ImpactLike", "ImpactSourceLike", "Parsed", "ParseSummary", "ParseResult", "check_trees_file",
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
                         title=f"{unit_entry(self.sentence.unit).record} {self.sentence.id}")

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
        size = unit_entry(self.sentence.unit).units(len(words))   # "3 EDUs" for a document
        return f"Parsed({self.sentence.id!r}, {size}: {text!r}; {what}{impact})"


@dataclass
class ParseSummary:
    sentences: int = 0
    parsed: int = 0
    skipped: list[str] = field(default_factory=list)


def parse_sentences(sentences: Sequence[Sentence], impacts: Iterable[ImpactLike | None] | None,
                    decoding: Decoding, summary: ParseSummary | None = None) -> Iterator[Parsed]:
    """Decode one tree per sentence; ``impacts`` may be None for decoders that need no model.

    Args:
        sentences: the corpus sentences (gold roots are read from them with ``root="gold"``).
        impacts: one :class:`Impact` (``F`` [n, n]) or None (skipped) per sentence.
        decoding: a resolved and checked decoding of one layer (:meth:`Decoding.at`; the seed of sentence k is
            seed + k); F is made symmetric as it says before the decoder reads it.
        summary: counts are added to it.

    Yields:
        One :class:`Parsed` per sentence, in order.

    Raises:
        SettingError: an all-zero matrix (every tree would tie).
    """
    decoder = str(decoding.decoder)
    dec = get_decoder(decoder)
    task = task_entry(dec.task)
    spans = dec.spans   # a chart of 2 words has one tree: it may be all zeros (sub, layer 0)
    discourse = unit_of(sentences).discourse   # a document's tree under --faithful: Wu et al.'s discourse pipeline
    gold = decoding.root == "gold" and "root" in dec.settings
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
                raise SettingError(f"{sent.where()}: the impact matrix at {{layer}} {decoding.layer} is all zeros, "
                                   f"so every tree would tie; layer 0 (the embeddings) is always all zeros because "
                                   f"masking word j cannot change word i's embedding: choose a layer from 1 up")
            if gold and sent.root is None:   # check_request refuses it; a direct call must not decode a free root
                raise SettingError(f"{{root}} gold needs gold heads, but {sent.where()} has none")
            x = DecodeInput(words=list(sent.words), F=_symmetric(impact, decoding),
                            F_cls=impact.F_cls if impact is not None else None, root=sent.root if gold else None,
                            multiroot=decoding.multiroot, faithful=decoding.faithful, seed=decoding.seed + index,
                            where=sent.where(), distance=bool(getattr(impact, "distance", False)), bias=decoding.bias,
                            keep=None if sent.upos is None else [u != "PUNCT" for u in sent.upos], discourse=discourse)
            out = decode(decoder, x)
            summary.parsed += 1
            tree: dict[str, Any] = {task.field: np.asarray(out) if task.per_word else out}
            yield Parsed(sent, impact=impact, **tree)
    finally:   # stop a streaming engine (and close its progress bar) before an error reaches the user
        close = getattr(impact_iter, "close", None)
        if close is not None:
            close()


def _symmetric(impact: ImpactLike | None, decoding: Decoding) -> np.ndarray | None:
    """The F a decoder reads: made symmetric after ``|F|`` as ``decoding`` says (Hoover et al.), else as it is."""
    if impact is None or (decoding.symmetrize == "none" and not decoding.absolute):
        return None if impact is None else impact.F
    return symmetrize(np.asarray(impact.F, dtype=np.float64), str(decoding.symmetrize), decoding.absolute)


@dataclass
class ParseResult:
    """What :func:`parse_corpus` wrote: the trees file, its provenance and the counts."""

    output: Path
    provenance: Provenance
    record: str   # what a record is: "sentence", "document" (its unit's noun)

    def describe(self) -> str:
        """One line: ``OUTPUT: N <task> trees[, K skipped (too long): ids][ (only K of N sentences: …)]``."""
        p = self.provenance
        skipped = f", {len(p.skipped)} skipped (too long): {', '.join(p.skipped[:5])}" if p.skipped else ""
        part = (p.corpus or {}).get("unfinished_store")
        partial = (f" (only {part['sentences']} of {plural(part['of'], self.record)}: the store {part['store']} is "
                   f"unfinished)" if part else "")
        return f"{self.output}: {plural(p.parsed, f'{p.task} tree')}{skipped}{partial}"


def parse_corpus(source: ImpactSourceLike, output: str | Path, decoding: Decoding, *, deprel: str = "_",
                 command: list[str] | None = None) -> ParseResult:
    """Induce a tree for every sentence of ``source`` and write them with their provenance.

    Args:
        source: an opened impact source (``ImpactSource.open(...)``) whose model settings are resolved
            (:func:`pmask.pipeline.request.prepare`); baselines read only its sentences.
        output: CoNLL-U (dependency decoders: the input with HEAD replaced) or one bracketed tree
            per line (constituency decoders); ``<output>.meta.json`` is written beside it.
        decoding: a resolved and checked decoding of one layer (:func:`pmask.pipeline.request.check_request`).
        deprel: DEPREL written for every word.
        command: the command line, recorded in the provenance.

    Returns:
        A :class:`ParseResult`.
    """
    t0 = time.perf_counter()
    output = Path(output)
    dec = get_decoder(str(decoding.decoder))
    check_outputs([output, None if is_stdout(output) else meta_path(output)], source.inputs())   # before any work
    check_trees_file(output, str(decoding.decoder), source.sentences)
    impacts = model_desc = impact = None
    if dec.needs_model:
        impacts = source.impacts(decoding.layer, include_cls=decoding.faithful)
        model_desc, impact = source.describe_model(), source.impact_settings()
    summary = ParseSummary()
    parsed = list(parse_sentences(source.sentences, impacts, decoding, summary))
    unit = unit_of(source.sentences)
    if impacts is not None and summary.sentences and not summary.parsed:   # never an empty output with exit 0
        raise ModelError(f"no tree to write to {output}: every {unit.record} ({summary.sentences}) was skipped as "
                         f"too long for the model ({', '.join(summary.skipped[:5])})")
    corpus = corpus_record(source.corpus, source.selection.format, source.selection.limit, source.selection.max_words)
    coverage = getattr(source, "coverage", None)   # an unfinished store read anyway (sources may lack it)
    if coverage:
        corpus["unfinished_store"] = coverage
    write_trees(parsed, output, dec.task, deprel)
    provenance = Provenance(
        task=dec.task, settings=decoding.to_dict(), model=model_desc, impact=impact, corpus=corpus,
        sentences=summary.sentences, parsed=summary.parsed, skipped=summary.skipped,
        seconds=round(time.perf_counter() - t0, 3), command=command)
    provenance.write(output)
    return ParseResult(output=output, provenance=provenance, record=unit.record)
