"""One unmasked forward pass per sentence: the machinery of probes ``attention`` and ``distance``.

Sentences are packed into batches of at most ``batch_tokens`` tokens (never padded; rows of equal
length share one attention call), run once through the model's encoder path, and read at every
token: hidden states ``[L, T, D]``, or attention weights ``[L, H, T, T]`` for a probe and metric that
keep every head (:func:`pmask.common.options.has_attention_heads`). :mod:`.pooling` gives each sentence its
pooling matrices, and the probe's *word matrix* (``OnePass.word_matrix``, given by the probe's
module: :mod:`.attention`, :mod:`.distance`) turns the token-level output into the sentence's array.

Layer k's attention is the one that produces hidden state k (k = 1 … L; the embeddings, layer 0,
have none). The diagonal, and pairs of words that share a piece, are 0. With ``include_cls``
index 0 is the first special token, treated as one more word; a tokenisation without special tokens
(``--tokenize bare``) gets a row and a column 0 of zeros in that layout.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Callable, Collection, Iterable, Iterator, Sequence, Sized

import numpy as np
import torch

from pmask.common.options import check_probe, has_attention_heads, resolve_layers
from pmask.common.progress import progress_bar
from pmask.common.tokenization import tokenize_mode
from pmask.perturb.alignment import WordAlignment, align_sentence, get_aligner
from pmask.perturb.encoders.batch import pack
from pmask.perturb.encoders.encoder import Encoder
from pmask.perturb.engine.resume import ResumePlan
from pmask.perturb.engine.runner import checked_alignment
from pmask.perturb.probes.pooling import WordPooling, word_pooling
from pmask.perturb.probes.support import check_support, probe_encoder

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class OnePass:
    """What one run computes: the probe, its metric and subword policy, the layers, the layout, and the
    probe's word matrix: ``word_matrix(run, pool, output)``, one sentence's token-level output (states
    ``[L, T, D]`` or attentions ``[L, H, T, T]``) with its pooling matrices to its array ``[L(, H), m, m]``."""

    probe: str
    metric: str
    subword: str
    layers: tuple[int, ...]
    include_cls: bool
    tokenize: str
    word_matrix: Callable[[OnePass, WordPooling, torch.Tensor], torch.Tensor]
    pad_cls: bool = False   # an input without special tokens (tokenize bare) in the [CLS] layout: row/column 0 = 0

    @property
    def needs_attention(self) -> bool:
        return has_attention_heads(self.probe, self.metric)


def one_pass_matrices(model: Any, sentences: Iterable[Any], *, probe: str,
                      word_matrix: Callable[[OnePass, WordPooling, torch.Tensor], torch.Tensor],
                      layers: Sequence[int] | int | str, metric: str, subword: str, tokenize: str,
                      batch_tokens: int | None = None, include_cls: bool = False, progress: bool = False,
                      stats: Any = None, fast_path: bool | None = None,
                      done: Collection[int] = ()) -> Iterator[np.ndarray | None]:
    """Yield a one-pass probe's array for each sentence, in input order.

    Args:
        model: a ``pmask.perturb.models.load.LoadedModel``.
        sentences: lists of words, or objects with ``.words``.
        probe: the probe (``attention``, ``distance``), whose entry says which metrics read attention weights.
        word_matrix: the probe's computation of one sentence's array (see :class:`OnePass`).
        layers, batch_tokens, include_cls, progress, stats, fast_path, tokenize, done: as for
            :func:`pmask.perturb.engine.runner.impact_matrices`.
        metric: one of the probe's metrics.
        subword: ``avg`` (or ``first`` for distance between hidden states).

    Returns:
        An iterator of float32 arrays (None for a sentence too long for the model):
        ``[len(layers), H, n, n]`` for the metrics that read attention weights, ``[len(layers), n, n]``
        otherwise (``n + 1`` with ``include_cls``).

    Example:
        >>> from pmask.perturb.probes.attention import merged_attention
        >>> F = next(one_pass_matrices(lm, [["The", "cat", "sat"]], probe="attention",         # doctest: +SKIP
        ...                            word_matrix=merged_attention, layers=[1], metric="weight", subword="avg",
        ...                            tokenize="words"))
        >>> F.shape                                                                            # doctest: +SKIP
        (1, 12, 3, 3)
    """
    from pmask.perturb.engine.runner import DEFAULT_BATCH_TOKENS, ImpactStats

    check_probe(probe, metric, subword)
    get_aligner(tokenize)
    pad = include_cls and not tokenize_mode(tokenize).special_tokens
    run = OnePass(probe, metric, subword, resolve_layers(layers, model.num_layers), include_cls and not pad, tokenize,
                  word_matrix, pad)
    if run.needs_attention:
        check_support(model, probe, metric, run.layers, subword=subword)   # layer 0, no attention weights: refused
    budget = int(batch_tokens or DEFAULT_BATCH_TOKENS.get(model.device.type, 4096))
    if budget < 1:
        raise ValueError(f"batch_tokens must be positive, got {batch_tokens}")
    stats = stats if stats is not None else ImpactStats()
    encoder = probe_encoder(model, run.needs_attention, fast_path)
    stats.fast_path = encoder.fast
    return _stream(model, encoder, run, sentences, budget, stats, progress, ResumePlan.of(done))


def _aligned(lm: Any, aligner: Any, run: OnePass, index: int, sentence: Any, stats: Any,
             resume: ResumePlan) -> WordAlignment | None:
    """The sentence's model input (None: too long); a stored one's quietly (:mod:`pmask.perturb.engine.resume`)."""
    if not resume.stored(index):
        return checked_alignment(lm, aligner, index, sentence, stats, run.include_cls)
    alignment = align_sentence(lm.tokenizer, sentence, run.tokenize, warn=False)
    return alignment if len(alignment) <= lm.max_length else None


def _stream(lm: Any, encoder: Encoder, run: OnePass, sentences: Iterable[Any], budget: int, stats: Any,
            progress: bool, resume: ResumePlan) -> Iterator[np.ndarray | None]:
    """Align, batch and run the sentences; yield their arrays in input order (but the stored ones')."""
    aligner = get_aligner(run.tokenize)
    total = len(sentences) - len(resume.done) if isinstance(sentences, Sized) else None
    bar = progress_bar(total=total, unit="sent", desc=run.probe, enabled=progress)
    pending: list[tuple[int, WordAlignment | None]] = []
    tokens = 0
    try:
        for index, sentence in enumerate(sentences):
            alignment = _aligned(lm, aligner, run, index, sentence, stats, resume)
            length = 0 if alignment is None else len(alignment)
            if pending and tokens + length > budget:
                yield from _flush(lm, encoder, run, pending, stats, bar, resume)
                pending, tokens = [], 0
            pending.append((index, alignment))
            tokens += length
        if pending:
            yield from _flush(lm, encoder, run, pending, stats, bar, resume)
    finally:
        bar.close()


def _flush(lm: Any, encoder: Encoder, run: OnePass, pending: list[tuple[int, WordAlignment | None]], stats: Any,
           bar: Any, resume: ResumePlan) -> Iterator[np.ndarray | None]:
    """Run one batch (a stored sentence's row too, unless the batch holds only stored ones) and yield the
    arrays of the sentences still wanted."""
    if not any(resume.wanted(k) for k, _ in pending):
        return
    started = time.perf_counter()
    needed = any(resume.wanted(k) and a is not None for k, a in pending)
    present = [a for _, a in pending if a is not None] if needed else []
    outputs = iter(_forward(lm, encoder, run, present, stats) if present else [])
    done = []
    for k, a in pending:
        output = next(outputs) if present and a is not None else None
        if resume.wanted(k):
            done.append(None if a is None or output is None else _word_matrix(run, a, output, lm))
    if run.pad_cls:
        done = [None if m is None else np.pad(m, [(0, 0)] * (m.ndim - 2) + [(1, 0), (1, 0)]) for m in done]
    stats.seconds += time.perf_counter() - started
    if bar is not None:
        bar.update(len(done))
    yield from done


def _forward(lm: Any, encoder: Encoder, run: OnePass, alignments: list[WordAlignment],
             stats: Any) -> list[torch.Tensor]:
    """One batch: per sentence its states [L, T, D] or attentions [L, H, T, T] (in ``alignments`` order)."""
    order = sorted(range(len(alignments)), key=lambda k: len(alignments[k]))   # equal lengths: one segment
    lengths = np.array([len(alignments[k]) for k in order])
    rows = np.repeat(np.arange(len(order)), lengths)
    positions = np.concatenate([np.arange(t) for t in lengths])
    batch = pack(np.concatenate([alignments[k].input_ids for k in order]), lengths, rows, positions, lm.device)
    dtype = torch.float64 if lm.dtype == torch.float64 else torch.float32
    with torch.inference_mode():
        if run.needs_attention:
            per_row = [a for seg in encoder.attentions(batch, run.layers) for a in seg.to(dtype)]
        else:
            states = encoder.states(batch, run.layers).to(dtype)                   # [tokens, L, D]
            per_row = list(states.transpose(0, 1).split(lengths.tolist(), dim=1))  # each [L, T, D]
    work = encoder.work
    stats.batches += 1
    stats.forward_sequences += len(order)
    stats.tokens += int(lengths.sum())
    stats.padded_tokens += work.tokens
    stats.reads += batch.n_reads
    stats.attention_pairs += work.attention_pairs
    out: list[Any] = [None] * len(order)
    for rank, k in enumerate(order):
        out[k] = per_row[rank]
    return out


def _word_matrix(run: OnePass, alignment: WordAlignment, output: torch.Tensor, lm: Any) -> np.ndarray:
    """The sentence's word-level array from its token-level ``output`` (the probe's ``word_matrix``)."""
    with torch.inference_mode():
        pool = word_pooling(alignment, run.include_cls, output.dtype, output.device)
        F = run.word_matrix(run, pool, output).masked_fill(pool.zero, 0.0)
        return F.to(torch.float32).cpu().numpy()
