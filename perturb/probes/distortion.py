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
for ``move``), built by :mod:`pmask.perturb.engine.rewrite`.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Sequence, Sized

import numpy as np
import torch

from pmask.common.errors import ModelError
from pmask.common.options import check_probe, resolve_layers
from pmask.common.progress import progress_bar
from pmask.perturb.alignment import get_aligner
from pmask.perturb.engine.rewrite import COMMA, MASK, RewriteStats, SentencePieces, comma_pieces, rewrite_vectors
from pmask.perturb.engine.runner import checked_alignment
from pmask.perturb.probes.support import probe_encoder

logger = logging.getLogger(__name__)

PERTURBATIONS = ("sub", "dc", "move")


def perturbations(metric: str) -> tuple[str, ...]:
    """The perturbations a ``distortion`` metric averages (``all``: every one)."""
    return PERTURBATIONS if metric == "all" else (metric,)


def spans(n: int) -> list[tuple[int, int]]:
    """Every span [l, r) of n words but the whole sentence, by length then start (the authors' order)."""
    return [(left, left + length) for length in range(1, n + 1) for left in range(n + 1 - length)
            if (left, left + length) != (0, n)]


def sequences(n: int, metric: str = "all") -> int:
    """Forward sequences for a sentence of n words: the unperturbed one and each span's rewrites."""
    per_span = sum(2 if p == "move" else 1 for p in perturbations(metric))
    return 1 + per_span * len(spans(n))


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


def span_plan(n: int, metric: str = "all") -> SpanPlan:
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


def chart_from_vectors(n: int, plan: SpanPlan, base: torch.Tensor, perturbed: torch.Tensor) -> np.ndarray:
    """The span chart ``[L, n, n]`` (float64) from the sentence's word vectors ``base`` [n, L, D] and the
    plan's word-unit vectors ``perturbed`` [G, L, D]: each span's mean term."""
    L = base.shape[1]
    chart = np.zeros((L, n, n))
    if not plan.term_span:
        return chart
    word = torch.as_tensor(plan.unit_word)
    squared = ((perturbed - base[word]) ** 2).sum(dim=-1).numpy()              # [G, L]
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


def distortion_charts(model: Any, sentences: Iterable[Any], *, layers: Sequence[int] | int | str = (-1,),
                      metric: str | None = None, subword: str = "avg", batch_tokens: int | None = None,
                      include_cls: bool = False, progress: bool = False, stats: Any = None,
                      fast_path: bool | None = None, tokenize: str = "words") -> Iterator[np.ndarray | None]:
    """Yield probe ``distortion``'s span chart for each sentence, in input order.

    Args:
        model: a ``pmask.perturb.LoadedModel``.
        sentences: lists of words, or objects with ``.words``.
        layers: hidden-state indices or "all" (0 = embeddings).
        metric: ``all`` (default), ``sub``, ``dc`` or ``move`` (see the module docstring).
        subword: ``avg`` (a word's vector is the mean of its pieces' states).
        batch_tokens, include_cls, progress, stats, fast_path, tokenize: as for
            :func:`pmask.perturb.engine.runner.impact_matrices`.

    Returns:
        An iterator of float32 ``[len(layers), n, n]`` charts (``n + 1`` with ``include_cls``, index 0
        unused), ``F[.., l, r-1]`` = the distortion of span l..r-1; None for a sentence too long.

    Example:
        >>> F = next(distortion_charts(lm, [["The", "cat", "sat"]], layers=[2]))   # doctest: +SKIP
        >>> F.shape                                                                # doctest: +SKIP
        (1, 3, 3)
    """
    from pmask.perturb.engine.runner import DEFAULT_BATCH_TOKENS, ImpactStats

    metric = metric or "all"
    check_probe("distortion", metric, subword)
    aligner = get_aligner(tokenize)
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
    return _stream(model, encoder, aligner, sentences, run_layers, metric, budget, include_cls, stats, comma,
                   progress)


def _stream(lm: Any, encoder: Any, aligner: Any, sentences: Iterable[Any], layers: Sequence[int], metric: str,
            budget: int, include_cls: bool, stats: Any, comma: list[int], progress: bool
            ) -> Iterator[np.ndarray | None]:
    bar = progress_bar(total=len(sentences) if isinstance(sentences, Sized) else None, unit="sent",
                       desc="distortion", enabled=progress)
    try:
        for index, sentence in enumerate(sentences):
            alignment = checked_alignment(lm, aligner, index, sentence, stats, False)
            if alignment is None:
                yield None
                bar.update(1)
                continue
            started = time.perf_counter()
            pieces = SentencePieces(alignment, lm.tokenizer.mask_token_id, comma)
            n = alignment.n_words
            plan = span_plan(n, metric)
            counters = RewriteStats()
            vectors = rewrite_vectors(lm, encoder, pieces, [list(range(n))] + plan.rewrites, layers, budget,
                                      counters, dtype=torch.float64)
            chart = chart_from_vectors(n, plan, vectors[:n], vectors[n:])
            stats.forward_sequences += counters.sequences
            stats.tokens += counters.tokens
            stats.padded_tokens += counters.tokens
            stats.batches += counters.batches
            stats.seconds += time.perf_counter() - started
            if include_cls:
                chart = np.pad(chart, ((0, 0), (1, 0), (1, 0)))
            bar.update(1)
            yield chart.astype(np.float32)
    finally:
        bar.close()
