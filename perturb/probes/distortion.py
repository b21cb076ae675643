"""Probe ``distortion``: contextual distortion (Li & Lu, ACL 2023), a span chart per layer.

A word's vector is the mean of its pieces' hidden states at one layer; the distortion of a group
of k words between the sentence and a perturbed input is d(G, P) = ||G - P||²_F / k. For every
span [l, r) but the whole sentence (0-based words l..r-1), three perturbations:

- ``sub`` (substitution): ``x[:l] [MASK] x[r:]``; one term, the words outside the span;
- ``dc`` (decontextualization): ``[MASK] x[l:r] [MASK]``, a mask only on a side that has context
  (the authors' batched scripts; their ``perturb_parse.py`` feeds the span alone); one term, the
  span's words;
- ``move`` (movement): ``x[l:r] , x[:l] , x[r:]`` (to the front) and ``x[:l] , x[r:] , x[l:r]``
  (to the end), a literal ``,`` between the non-empty parts (never compared); one term per part
  (span, prefix, suffix) and order: 6 inside the sentence, 4 at an edge.

A span's score (``--metric``) is the mean of the terms of the chosen perturbations: ``all`` (the
paper's: (6 move + sub + dc) / 8 inside, / 6 at an edge), or one of ``sub``, ``dc``, ``move``.
The chart is ``F[l, r-1]`` (upper triangle; the whole sentence and the lower triangle are 0);
with ``include_cls`` (the store layout) it is shifted by one, index 0 unused and 0. The
per-length normalisation and the tree are the decoder's (:mod:`pmask.trees.cky`). Sequences per
sentence: 1 + 4 (n(n+1)/2 - 1) with ``all`` (1 + (n(n+1)/2 - 1) for ``sub`` or ``dc``, twice that
for ``move``), built by :mod:`pmask.perturb.engine.rewrite`; each sentence is a :class:`DistortionJob` of
the one engine loop (:class:`pmask.perturb.engine.runner.BatchRunner`), batched with its neighbours by
the same token budget as the masking probes. The probe's entry and its four metrics' are registered
here; the engine and torch are imported when :func:`distortion_charts` runs.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Collection, Iterable, Iterator, Sequence

import numpy as np

from pmask.common.errors import ModelError
from pmask.common.options import check_choice, check_probe, resolve_layers
from pmask.common.probe_entries import METRIC_ENTRIES, PROBE_ENTRIES, SPAN_CHART, AuthorsRecipe, MetricEntry, ProbeEntry
from pmask.perturb.alignment import WordAlignment, get_aligner
from pmask.perturb.engine.impact_settings import ImpactSettings
from pmask.perturb.engine.perturbation import ReadOut, Reads
from pmask.perturb.engine.rewrite import (
    COMMA,
    MASK,
    Rewriting,
    SentencePieces,
    comma_pieces,
)

if TYPE_CHECKING:
    import torch

logger = logging.getLogger(__name__)

#: The perturbations of a span, in the order a span's rewrites are planned.
PERTURBATIONS = ("sub", "dc", "move")


def perturbations(metric: str) -> tuple[str, ...]:
    """The perturbations a ``distortion`` metric averages (its entry's, :data:`AVERAGED`: ``all``, every one).

    Example:
        >>> perturbations("all"), perturbations("dc")
        (('sub', 'dc', 'move'), ('dc',))
    """
    return AVERAGED[check_choice("metric of probe distortion", metric, AVERAGED)]


def spans(n: int) -> list[tuple[int, int]]:
    """Every span [l, r) of n words but the whole sentence, by length then start (the authors' order)."""
    return [(left, left + length) for length in range(1, n + 1) for left in range(n + 1 - length)
            if (left, left + length) != (0, n)]


@dataclass
class SpanPlan:
    """One sentence's rewrites and what each of their word units is compared with.

    ``unit_word[g]``: the original word of word unit g (over all rewrites end to end);
    ``unit_term[g]``: the term g's distortion adds to; ``term_span[t]``: the span (index into
    :func:`spans`) of term t; ``term_size[t]``: its number of words.
    """

    rewrites: list[list[int]] = field(default_factory=list)
    unit_word: list[int] = field(default_factory=list)
    unit_term: list[int] = field(default_factory=list)
    term_span: list[int] = field(default_factory=list)
    term_size: list[int] = field(default_factory=list)

    def add(self, units: list[int], parts: list[list[int]], span: int) -> None:
        """A rewrite ``units`` whose word units form the compared groups ``parts`` (in unit order)."""
        self.rewrites.append(units)
        for part in parts:
            term = len(self.term_span)
            self.term_span.append(span)
            self.term_size.append(len(part))
            self.unit_word.extend(part)
            self.unit_term.extend([term] * len(part))


def span_plan(n: int, metric: str) -> SpanPlan:
    """The rewrites and terms of a sentence of n words (the unperturbed sentence is not in it)."""
    chosen = perturbations(metric)
    plan = SpanPlan()
    words = list(range(n))
    for k, (left, right) in enumerate(spans(n)):
        before, inside, after = words[:left], words[left:right], words[right:]
        if "sub" in chosen:
            plan.add(before + [MASK] + after, [before + after], k)
        if "dc" in chosen:
            plan.add(([MASK] if before else []) + inside + ([MASK] if after else []), [inside], k)
        if "move" in chosen:
            rest = [p for p in (before, after) if p]
            front, end = [*inside], [*rest[0]]
            for part in rest:
                front += [COMMA, *part]
            for part in rest[1:] + [inside]:
                end += [COMMA, *part]
            plan.add(front, [inside, *rest], k)
            plan.add(end, [*rest, inside], k)
    return plan


def chart_from_squared(n: int, plan: SpanPlan, squared: np.ndarray) -> np.ndarray:
    """The span chart ``[L, n, n]`` (float64) from ``squared`` [G, L]: each of the plan's word units'
    squared distance ||P_g - G_word||² to the same word's vector in the sentence; each span's mean term."""
    L = squared.shape[1]
    chart = np.zeros((L, n, n))
    if not plan.term_span:
        return chart
    terms = np.zeros((len(plan.term_span), L))
    np.add.at(terms, np.asarray(plan.unit_term), squared)
    terms /= np.asarray(plan.term_size, dtype=np.float64)[:, None]
    span_index = np.asarray(plan.term_span)
    totals = np.zeros((len(spans(n)), L))
    np.add.at(totals, span_index, terms)
    counts = np.bincount(span_index, minlength=len(totals)).astype(np.float64)
    for k, (left, right) in enumerate(spans(n)):
        chart[:, left, right - 1] = totals[k] / counts[k]
    return chart


@dataclass
class UnitReads(Reads):
    """Reads at the pieces of word units; ``group``: the word unit, numbered in run order (sequence 0,
    the sentence itself, holds groups 0 … n-1, its words)."""

    group: np.ndarray


class DistortionJob:
    """One sentence's sequences under probe ``distortion``: the sentence itself first, then the rewrites of
    :func:`span_plan`, shortest first (rows of one length share an attention call). A batch's values
    are pooled into word-unit vectors (the mean of their pieces' states, float64) and each unit's
    squared distance to the same word in the sentence is kept ([G, L]); :meth:`result` averages them
    into the chart (:func:`chart_from_squared`).

    Args:
        index: the sentence's position in the engine's input.
        alignment: its model input (words must own their pieces).
        mask_id, comma: the tokenizer's mask token and pieces of ",".
        metric: ``all``, ``sub``, ``dc`` or ``move``.
        n_layers: layers read.
        include_cls: shift the chart by one (the store layout).
    """

    def __init__(self, index: int, alignment: WordAlignment, mask_id: int, comma: Sequence[int], metric: str,
                 n_layers: int, include_cls: bool):
        self.index = index
        self.n_words = n = alignment.n_words
        self.include_cls = include_cls
        self.plan = span_plan(n, metric)
        pieces = SentencePieces(alignment, mask_id, comma)
        rewrites = [list(range(n))] + self.plan.rewrites
        order = np.concatenate([[0], 1 + np.argsort(pieces.lengths(rewrites)[1:], kind="stable")])
        self.sequences = seqs = Rewriting(pieces, [rewrites[k] for k in order])
        self.n_sequences = len(order)
        self.next_sequence = self.done_sequences = 0
        # word unit (group) g in run order is the plan's unit group_unit[g] (the sentence's own words: < 0)
        units_run = np.bincount(seqs.unit_sequence, minlength=len(order))     # word units per sequence
        units = np.empty_like(units_run)
        units[order] = units_run
        first_unit = np.cumsum(units) - units - n
        group_first = np.cumsum(units_run) - units_run
        self.group_unit = np.repeat(first_unit[order] - group_first, units_run) + np.arange(units_run.sum())
        group = np.repeat(np.arange(len(seqs.unit_length)), seqs.unit_length)
        position = seqs.unit_position[group] + np.arange(len(group)) - np.repeat(
            np.cumsum(seqs.unit_length) - seqs.unit_length, seqs.unit_length)
        sequence = seqs.unit_sequence[group]
        self.reads = UnitReads(sequence, position, seqs.ids[seqs.offsets[sequence] + position], group)
        self.base: torch.Tensor | None = None                                 # [n, L, D] the sentence's words
        self.squared = np.zeros((len(self.plan.unit_word), n_layers))        # [G, L]
        self.unit_word = np.asarray(self.plan.unit_word, dtype=np.int64)     # [G] the word of each unit

    @property
    def finished(self) -> bool:
        return self.done_sequences == self.n_sequences

    def read_range(self, start: int, stop: int) -> slice:
        lo, hi = np.searchsorted(self.reads.sequence, [start, stop])
        return slice(int(lo), int(hi))

    @classmethod
    def take(cls, batch: ReadOut) -> Callable[[], None]:
        """Pool each part's reads into word units and compare them with the sentence's words."""
        import torch

        kept = []
        for p, r, lo, hi in zip(batch.parts, batch.ranges, batch.first[:-1].tolist(), batch.first[1:].tolist()):
            job = p.job
            group = job.reads.group[r]
            g0, g1 = int(group[0]), int(group[-1]) + 1
            local = torch.as_tensor(group - g0, device=batch.values.device)
            states = batch.values[lo:hi].to(torch.float64)                            # [reads, L, D]
            sums = torch.zeros((g1 - g0,) + tuple(states.shape[1:]), dtype=torch.float64, device=states.device)
            sums.index_add_(0, local, states)
            pooled = sums / torch.bincount(local, minlength=g1 - g0).to(torch.float64)[:, None, None]
            units = job.group_unit[g0:g1]
            if p.start == 0:   # the sentence itself: its words' vectors, before any rewrite's
                job.base = pooled[:job.n_words]
            perturbed = units >= 0
            if perturbed.any():
                assert job.base is not None   # sequence 0 runs first
                word = torch.as_tensor(job.unit_word[units[perturbed]], device=states.device)
                chosen = pooled[torch.as_tensor(np.flatnonzero(perturbed), device=states.device)]
                kept.append((job, units[perturbed], ((chosen - job.base[word]) ** 2).sum(dim=-1).cpu().numpy()))

        def record() -> None:
            for job, units, squared in kept:
                job.squared[units] = squared
        return record

    def result(self, subword: str) -> np.ndarray:
        """The chart, float32 ``[L, n, n]`` (``[L, n+1, n+1]`` with ``include_cls``)."""
        chart = chart_from_squared(self.n_words, self.plan, self.squared)
        if self.include_cls:
            chart = np.pad(chart, ((0, 0), (1, 0), (1, 0)))
        return chart.astype(np.float32)


def distortion_charts(model: Any, sentences: Iterable[Any], *, layers: Sequence[int] | int | str, metric: str,
                      subword: str, tokenize: str, **kwargs: Any) -> Iterator[np.ndarray | None]:
    """Yield probe ``distortion``'s span chart for each sentence, in input order.

    Args:
        model: a ``pmask.perturb.models.load.LoadedModel``.
        sentences: lists of words, or objects with ``.words``.
        layers: hidden-state indices or "all" (0 = embeddings).
        metric: ``all``, ``sub``, ``dc`` or ``move`` (see the module docstring).
        subword: ``avg`` (a word's vector is the mean of its pieces' states).
        tokenize: the tokenisation mode (:data:`pmask.common.tokenization.TOKENIZE_ENTRIES`).
        kwargs: ``batch_tokens``, ``include_cls``, ``progress``, ``stats``, ``fast_path``, ``done``, as for
            :func:`pmask.perturb.engine.runner.impact_matrices`.

    Returns:
        An iterator of float32 ``[len(layers), n, n]`` charts (``n + 1`` with ``include_cls``, index 0
        unused), ``F[.., l, r-1]`` = the distortion of span l..r-1; None for a sentence too long.

    Example:
        >>> F = next(distortion_charts(lm, [["The", "cat", "sat"]], layers=[2], metric="all", subword="avg",
        ...                            tokenize="words"))   # doctest: +SKIP
        >>> F.shape                                                                # doctest: +SKIP
        (1, 3, 3)
    """
    return _charts(model, sentences, layers=layers, metric=metric, subword=subword, tokenize=tokenize, **kwargs)


def _charts(model: Any, sentences: Iterable[Any], *, layers: Sequence[int] | int | str, metric: str, subword: str,
            tokenize: str, batch_tokens: int | None = None, include_cls: bool = False, progress: bool = False,
            stats: Any = None, fast_path: bool | None = None,
            done: Collection[int] = ()) -> Iterator[np.ndarray | None]:
    from pmask.perturb.engine.runner import DEFAULT_BATCH_TOKENS, BatchRunner, ImpactStats, RunSettings
    from pmask.perturb.probes.support import probe_encoder

    check_probe("distortion", metric, subword)
    get_aligner(tokenize)   # an unknown tokenisation mode is refused before any model work
    run_layers = resolve_layers(layers, model.num_layers)
    budget = int(batch_tokens or DEFAULT_BATCH_TOKENS.get(model.device.type, 4096))
    if budget < 1:
        raise ValueError(f"batch_tokens must be positive, got {batch_tokens}")
    stats = stats if stats is not None else ImpactStats()
    encoder = probe_encoder(model, False, fast_path)
    stats.fast_path = encoder.fast
    if model.tokenizer.mask_token_id is None:
        raise ModelError(f"model {model.name!r}: its tokenizer has no mask token, which probe distortion writes into "
                         f"every perturbed input")
    comma = comma_pieces(model.tokenizer)
    mask_id = model.tokenizer.mask_token_id
    settings = RunSettings(run_layers, ImpactSettings(metric, subword, tokenize, "distortion", 0), False)

    def make_job(index: int, alignment: WordAlignment) -> DistortionJob:
        return DistortionJob(index, alignment, mask_id, comma, metric, len(run_layers), include_cls)

    return BatchRunner(model, encoder, settings, budget, stats, make_job=make_job, desc="distortion").run(
        sentences, progress, done)


def sequences(n: int, metric: str) -> int:
    """Forward sequences for a sentence of n words with ``metric``: the unperturbed one and each span's rewrites."""
    per_span = sum(2 if p == "move" else 1 for p in perturbations(metric))
    return 1 + per_span * len(spans(n))


def all_sequences(n: int) -> int:
    """The probe's count for a sentence of n words: metric ``all``'s (each metric's entry counts its own)."""
    return sequences(n, ALL.name)


def _metric_sequences(metric: str) -> Callable[[list[int]], int]:
    """A metric entry's count, from the pieces of each word (only their number matters here)."""
    def count(pieces: list[int]) -> int:
        return sequences(len(pieces), metric)
    return count


# ---------------------------------------------------------------------------- entries

ALL = METRIC_ENTRIES.register(MetricEntry(
    "all", "the mean of every distortion term of a span: substitution, decontextualization and movement (probe "
           "distortion)", sequences=_metric_sequences("all")))
SUB = METRIC_ENTRIES.register(MetricEntry(
    "sub", "substitution: the span replaced by one mask, distortion of the words outside it (probe distortion)",
    sequences=_metric_sequences("sub")))
DC = METRIC_ENTRIES.register(MetricEntry(
    "dc", "decontextualization: the span alone between masks, distortion of its words (probe distortion)",
    sequences=_metric_sequences("dc")))
MOVE = METRIC_ENTRIES.register(MetricEntry(
    "move", "movement: the span moved to the front and to the end, distortion of every part (probe distortion)",
    sequences=_metric_sequences("move")))

#: The perturbations each metric of the probe averages.
AVERAGED: dict[str, tuple[str, ...]] = {ALL.name: PERTURBATIONS, SUB.name: ("sub",), DC.name: ("dc",),
                                        MOVE.name: ("move",)}

PROBE = PROBE_ENTRIES.register(ProbeEntry(
    "distortion", "contextual distortion (Li & Lu 2023), a span chart, low = constituent: F[l][r-1] = how far the "
                  "words' states move when span l..r-1 is substituted, decontextualized or moved; about 2n(n+1) "
                  "sequences",
    metrics=(ALL.name, SUB.name, DC.name, MOVE.name), subwords=("avg",), yields=SPAN_CHART, decodes_layer_zero=True,
    runner=distortion_charts, sequences=all_sequences, faithful=AuthorsRecipe("Li & Lu", ("cky",))))
