"""The perturbed-masking impact engine: word-level impact matrices F[l, i, j].

For a sentence of n words, masking word i replaces all its pieces by the mask token (special
tokens are never masked). With H_l(x)_p the layer-l hidden state at piece p:

- ``dist``: f_p(i, j) = || H_l(x∖{i})_p − H_l(x∖{i,j})_p ||_2          (p a piece of word i)
- ``cos``:  f_p(i, j) = 1 − cos(H_l(x∖{i})_p, H_l(x∖{i,j})_p)
- ``prob``: f_p(i, j) = P_l(orig_p | x∖{i}) − P_l(orig_p | x∖{i,j}), P_l = softmax of the model's
  MLM head applied to layer l's state (at the last layer the model's own logits); a drop in the
  probability of the original piece, so it can be negative.

Row i merges word i's pieces with the subword policy: ``avg`` (mean over pieces of each piece's
own value, the paper's default — not the value of averaged vectors), ``first``, ``sum``, ``max``.
F[l, i, j] = impact of word j on word i; F[l, i, i] = 0. Words that share pieces (the words of a
multiword token in a surface tokenisation) are masked together: impact between them is 0.

Exact shortcuts: the input with {i, j} masked is read at i (for F[i, j]) and at j (for F[j, i]),
so a sentence costs n + n(n−1)/2 forward sequences (+1 unmasked one with ``include_cls``); on
the fast path no layer above the highest requested one is run and that top layer is computed
only at the read positions (see ``pmask.perturb.encoders``). Sequences of many sentences are
packed into batches of at most ``batch_tokens`` tokens, never padded.

:class:`BatchRunner` is the one engine loop of every perturbing probe: it runs *jobs*
(:mod:`pmask.perturb.engine.perturbation`: a sentence's sequences, their reads, and what is done with the
values read), whichever the probe; pair and single (:mod:`pmask.perturb.engine.jobs`), CPMI
(:mod:`pmask.perturb.probes.cpmi`) and contextual distortion (:mod:`pmask.perturb.probes.distortion`).
"""
from __future__ import annotations

import logging
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Collection, Iterable, Iterator, Sequence, Sized

import numpy as np
import torch

from pmask.common.errors import ModelError
from pmask.common.options import metric_entry, resolve_layers
from pmask.common.progress import progress_bar, watched
from pmask.perturb.alignment import WordAlignment, align_sentence, get_aligner, sentence_words
from pmask.perturb.alignment.surface import grouped_alignment_notes
from pmask.perturb.encoders.batch import pack
from pmask.perturb.encoders.encoder import Encoder
from pmask.perturb.engine.impact_settings import ImpactSettings
from pmask.perturb.engine.jobs import SentenceJob, SkippedSentence
from pmask.perturb.engine.perturbation import BatchPart, Job, ReadOut, hidden_tokens, last_fitting
from pmask.perturb.engine.resume import ResumePlan
from pmask.perturb.engine.stats import ImpactStats
from pmask.perturb.engine.units import unit_run
from pmask.perturb.models.load import LoadedModel

logger = logging.getLogger(__name__)

# Tokens per forward batch. CPU: 2048 keeps bert-base's activations (2048 × 3072 float32
# = 25 MB) small and is on the flat part of the throughput curve (1024 and 4096 measured 4–10 %
# slower end to end, benchmarks/impact_speed.py --batch-tokens); GPUs want far bigger batches.
DEFAULT_BATCH_TOKENS = {"cpu": 2048, "cuda": 32768}


@dataclass
class RunSettings:
    """What one ``impact_matrices`` call computes."""

    layers: tuple[int, ...]       # absolute hidden-state indices
    impact: ImpactSettings        # metric, subword policy, tokenisation mode
    include_cls: bool


def impact_matrices(model: LoadedModel, sentences: Iterable[Sequence[str] | Any],
                    layers: Sequence[int] | int | str = (-1,), *, metric: str, subword: str, tokenize: str,
                    batch_tokens: int | None = None, include_cls: bool = False, progress: bool = False,
                    stats: ImpactStats | None = None, fast_path: bool | None = None,
                    job_type: type[SentenceJob] = SentenceJob, checkpoint: Any = None,
                    done: Collection[int] = ()) -> Iterator[np.ndarray | None]:
    """Yield one impact array per input sentence, in input order (streaming).

    Args:
        model: from :func:`pmask.perturb.models.load.load_model`.
        sentences: lists of n words, or objects with ``.words`` (and ``.space_after`` for
            tokenisation modes that rebuild the running text).
        layers: hidden-state indices (0 = embeddings … ``num_layers`` = last; negative count from
            the end) or ``"all"`` (1 … num_layers); see :func:`pmask.common.options.resolve_layers`.
        metric: ``dist`` | ``cos`` | ``prob`` | ``cpmi`` (:data:`pmask.common.options.METRICS`), computed by its
            entry's ``compare``; ``cpmi`` with its entry's ``job`` (:mod:`pmask.perturb.probes.cpmi`, its own
            sequences and reads).
        subword: ``avg`` | ``first`` | ``sum`` | ``max`` (:data:`pmask.common.options.SUBWORD_POLICIES`; ``cpmi``
            takes ``sum`` only).
        batch_tokens: tokens per forward batch (default 2048 on CPU, 32768 on CUDA).
        include_cls: add row/column 0 for the first special token (row 0 = impact of word j on
            that token's state, unmasked vs j masked; column 0 = 0).
        progress: show a tqdm bar over sentences.
        stats: an :class:`ImpactStats` to accumulate counters into.
        fast_path: None = the verified fast path where available, False = force the generic path,
            True = require the fast path (``ModelError`` if the model has none).
        tokenize: a tokenisation mode registered in :data:`pmask.common.tokenization.TOKENIZE_ENTRIES`
            (``"words"``: each word tokenised on its own, the paper's scheme).
        job_type: which sequences are run and read per sentence: :class:`SentenceJob` (the paper's
            pairs) or a subclass (``pmask.perturb.probes.single.SingleMaskJob`` for probe single).
        checkpoint: keeps work across a hard kill: ``checkpoint.restore(job)`` is called on each new
            job (it may set the job's state, as ``SentenceJob.restore``), ``checkpoint.between_batches(jobs)``
            after each batch's finished sentences are yielded, with the jobs still in flight (see
            ``pmask.perturb.fill.compute``: a store keeps the sentence under way).
        done: positions of ``sentences`` already stored by the run this one resumes: planned into batches
            as that run did, run only with sentences still to compute, never yielded
            (:mod:`pmask.perturb.engine.resume`).

    Returns:
        An iterator of float32 arrays ``[len(layers), n, n]`` (``[len(layers), n+1, n+1]`` with
        ``include_cls``), F[l, i, j] = impact of word j on word i at ``layers[l]``; None for a
        sentence longer than ``model.max_length`` tokens (skipped with a warning). Memory is
        bounded by one batch plus the sentences it touches.

    Example:
        >>> lm = load_model("bert-base-uncased")                        # doctest: +SKIP
        >>> F = next(impact_matrices(lm, [["The", "cat", "sat"]], layers=[-1], metric="dist", subword="avg",
        ...                          tokenize="words"))  # doctest: +SKIP
        >>> F.shape                                                     # doctest: +SKIP
        (1, 3, 3)
    """
    # OptionError, a ValueError like every bad argument here: a metric is asked of its entry (any probe's,
    # registered beside its computation), and one the masking jobs cannot compute is refused below
    entry = metric_entry(metric)
    impact = ImpactSettings(entry.name, subword, tokenize, None, 0).check()   # the engine's: no probe of its own
    settings = RunSettings(resolve_layers(layers, model.num_layers), impact, include_cls)
    if batch_tokens is None:
        batch_tokens = DEFAULT_BATCH_TOKENS.get(model.device.type, 4096)
    if int(batch_tokens) < 1:
        raise ValueError(f"batch_tokens must be positive, got {batch_tokens}")
    stats = stats if stats is not None else ImpactStats()
    encoder = model.encoder(fast_path)
    stats.fast_path = encoder.fast
    if entry.mlm_head:
        encoder.check_prob(settings.layers)
    own_job = model.family.job(metric, entry.job)   # the family's reading of the metric, else the metric's own
    if own_job and job_type is SentenceJob:   # a metric with its own sequences and reads (cpmi's chain rule)
        job_type = own_job
    job_type = model.family.reading(job_type)   # how the family hides a word (causal: the attention mask)
    entry.comparison()   # a metric the masking jobs cannot compute is refused before any batch
    sentences, job_type = unit_run(model, sentences, impact, job_type)   # documents of EDUs run as their unit's job
    return BatchRunner(model, encoder, settings, int(batch_tokens), stats, job_type, checkpoint).run(sentences,
                                                                                                progress, done)


def _where(sentence: Any, index: int) -> str:
    """Where a sentence is: ``file:line (sentence ID)`` for a read one (its place in the corpus, whichever
    selection the engine was given), else ``sentence INDEX`` (its position in the engine's input)."""
    where = getattr(sentence, "where", None)
    return where() if callable(where) else f"sentence {index}"


def checked_alignment(lm: LoadedModel, aligner: Any, index: int, sentence: Any, stats: ImpactStats,
                      include_cls: bool) -> WordAlignment | None:
    """The model input of sentence ``index`` (``aligner``: one of ``pmask.common.tokenization.TOKENIZE_ENTRIES``),
    counted in ``stats``; None, logged and counted as skipped, when it is too long for the model.

    Raises:
        ValueError: a sentence without words. ModelError: ``include_cls`` with a tokenizer that adds
            no special token.
    """
    try:
        words = sentence_words(sentence)
    except ValueError as err:
        raise ValueError(f"sentence {index}: {err}") from None
    if not words:
        raise ValueError(f"sentence {index} is empty (no words)")
    stats.sentences += 1
    alignment = aligner(lm.tokenizer, sentence)
    if len(alignment) > lm.max_length:
        logger.warning("%s: too long for the model, skipped (%d tokens exceed the model maximum of %d; %r …)",
                       _where(sentence, index), len(alignment), lm.max_length, " ".join(words[:8]))
        stats.skipped += 1
        stats.skipped_indices.append(index)
        return None
    if include_cls and -1 not in alignment.word_index:
        raise ModelError(f"sentence {index}: include_cls needs a special token, tokenizer of {lm.name!r} adds none")
    return alignment


def _is_oom(err: BaseException) -> bool:
    if isinstance(err, torch.OutOfMemoryError):
        return True
    text = str(err).lower()
    return isinstance(err, RuntimeError) and ("out of memory" in text or "can't allocate memory" in text)


class BatchRunner:
    """Schedules sentences' jobs' sequences into batches of at most ``batch_tokens`` tokens and runs them.

    Sentences are aligned (the only call of an aligner in the engine) as the batches need them;
    results are yielded in input order as soon as every earlier sentence is finished. Each
    sentence's job comes from ``make_job(index, alignment)`` (default: ``job_type`` with the run's
    settings); the jobs of one run are of one class, whose ``take`` gets each batch's values
    (:class:`pmask.perturb.engine.perturbation.Job`).
    """

    def __init__(self, lm: LoadedModel, encoder: Encoder, settings: RunSettings, batch_tokens: int,
                 stats: ImpactStats, job_type: type[SentenceJob] = SentenceJob, checkpoint: Any = None, *,
                 make_job: Callable[[int, WordAlignment], Job] | None = None, desc: str = "impact"):
        self.lm = lm
        self.make_job = make_job if make_job is not None else self._masking_job
        self.desc = desc
        self.checkpoint = checkpoint
        self.job_type = job_type
        self.encoder = encoder
        self.settings = settings
        self.batch_tokens = batch_tokens
        self.stats = stats
        self.aligner = get_aligner(settings.impact.tokenize)
        hidden = int(getattr(lm.model.config, "hidden_size", 0) or getattr(lm.model.config, "dim", 0))
        self.metric = metric_entry(settings.impact.metric)   # looked up once, not per batch
        self.value_shape = () if self.metric.mlm_head else (hidden,)
        # distances are accumulated in at least float32
        self.value_dtype = torch.float64 if lm.dtype == torch.float64 else torch.float32
        self.pending: deque[Job | SkippedSentence] = deque()
        self.active: Job | None = None
        self.source: Iterator[tuple[int, Any]] | None = None
        self.exhausted = False
        self.resume = ResumePlan()

    def run(self, sentences: Iterable[Any], progress: bool, done: Collection[int] = ()) -> Iterator[np.ndarray | None]:
        """Yield each sentence's impact array (or None if skipped), in input order, but for the positions
        ``done`` (stored by the run this one resumes: :mod:`pmask.perturb.engine.resume`); the alignment's
        per-word warnings come as one line at the end (:func:`grouped_alignment_notes`)."""
        self.resume = ResumePlan.of(done)
        with grouped_alignment_notes():
            yield from self._run(sentences, progress)

    def _run(self, sentences: Iterable[Any], progress: bool) -> Iterator[np.ndarray | None]:
        self.source = enumerate(sentences)
        subword = self.settings.impact.subword
        assert subword is not None   # checked by impact_matrices
        bar = None
        if progress and watched():   # a bar only where someone watches it (pmask.common.progress)
            total = len(sentences) - len(self.resume.done) if isinstance(sentences, Sized) else None
            bar = progress_bar(total=total, unit="sent", desc=self.desc)
        ran = True
        try:
            while True:
                if self.checkpoint is not None and ran:   # every batch, not every sentence: one may span many
                    self.checkpoint.between_batches(self.pending)
                started = time.perf_counter()
                parts = self._fill_batch()
                running = self.resume.to_run(parts)   # all of them, but in a resumed run (resume.py)
                ran = bool(running)
                if running:
                    self._run_batch(running)
                done = []
                while self.pending and self.pending[0].finished:
                    job = self.pending.popleft()
                    done.append(None if isinstance(job, SkippedSentence) else job.result(subword))
                self.stats.seconds += time.perf_counter() - started
                if bar is not None and done:
                    bar.update(len(done))
                    bar.set_postfix(tok_s=f"{self.stats.tokens / max(self.stats.seconds, 1e-9):.0f}")
                    if bar.total is not None and bar.n >= bar.total:
                        bar.close()   # before the caller logs its summary, so the final line shows once
                yield from done
                if not parts and self.exhausted:
                    break
        finally:
            if bar is not None:
                bar.close()

    def _masking_job(self, index: int, alignment: WordAlignment) -> Job:
        return self.job_type(index, alignment, self.lm.tokenizer.mask_token_id, len(self.settings.layers),
                             self.settings.include_cls, self.value_shape, self.value_dtype, self.lm.device)

    def _next_job(self) -> Job | None:
        """Align the next sentence and queue its job (too-long sentences queue a skip); None at the end."""
        lm, stats = self.lm, self.stats
        assert self.source is not None   # set by run()
        for index, sentence in self.source:
            if self.resume.stored(index):   # planned as in the run resumed, never yielded: no note, no count
                planned = align_sentence(lm.tokenizer, sentence, str(self.settings.impact.tokenize), warn=False)
                if len(planned) <= lm.max_length:
                    return self.make_job(index, planned)
                continue
            alignment = checked_alignment(lm, self.aligner, index, sentence, stats, self.settings.include_cls)
            if alignment is None:
                self.pending.append(SkippedSentence(index))
                continue
            job = self.make_job(index, alignment)
            if self.checkpoint is not None:
                self.checkpoint.restore(job)
                self.resume.keep(job)
            self.pending.append(job)
            return job
        self.exhausted = True
        return None

    def _fill_batch(self) -> list[BatchPart]:
        """Take sequences in order until the next would exceed the token budget (at least one row)."""
        parts: list[BatchPart] = []
        tokens = 0
        while True:
            if self.active is None or self.active.next_sequence >= self.active.n_sequences:
                self.active = self._next_job()
                if self.active is None:
                    return parts
            job = self.active
            stop = last_fitting(job.sequences.offsets, job.next_sequence, self.batch_tokens - tokens)
            if stop <= job.next_sequence:
                if parts:
                    return parts
                stop = job.next_sequence + 1
            stop, ends = self.resume.cut(job, stop)   # a kept sentence's kept point ends a batch
            part = BatchPart(job, job.next_sequence, stop)
            parts.append(part)
            tokens += part.tokens
            job.next_sequence = stop
            if ends:
                return parts

    def _run_batch(self, parts: list[BatchPart]) -> None:
        """Run one batch; on out-of-memory halve it (and the budget) and retry."""
        rows = sum(p.rows for p in parts)
        try:
            self._forward(parts)
            return
        except Exception as err:  # noqa: BLE001 - only OOM is handled, everything else re-raised
            if not _is_oom(err) or rows <= 1:
                raise
        self.stats.oom_retries += 1
        if self.lm.device.type == "cuda":
            torch.cuda.empty_cache()
        longest = max(p.longest for p in parts)
        self.batch_tokens = max(longest, min(self.batch_tokens, sum(p.tokens for p in parts)) // 2)
        logger.warning("out of memory on a batch of %d sequences; retrying in halves (batch_tokens now %d)",
                       rows, self.batch_tokens)
        half = rows // 2
        first: list[BatchPart] = []
        second: list[BatchPart] = []
        seen = 0
        for p in parts:
            if seen + p.rows <= half:
                first.append(p)
            elif seen >= half:
                second.append(p)
            else:
                cut = p.start + (half - seen)
                first.append(BatchPart(p.job, p.start, cut))
                second.append(BatchPart(p.job, cut, p.stop))
            seen += p.rows
        self._run_batch(first)
        self._run_batch(second)

    def _forward(self, parts: list[BatchPart]) -> None:
        """Run the batch's sequences and hand what was read back to the jobs."""
        device = self.lm.device
        ranges = [p.job.read_range(p.start, p.stop) for p in parts]
        row_offset = np.cumsum([0] + [p.rows for p in parts])
        read_row = np.concatenate([p.job.reads.sequence[r] - p.start + off
                                   for p, r, off in zip(parts, ranges, row_offset)])
        read_pos = np.concatenate([p.job.reads.position[r] for p, r in zip(parts, ranges)])
        batch = pack(np.concatenate([p.job.sequences.tokens(p.start, p.stop) for p in parts]),
                     np.concatenate([np.diff(p.job.sequences.offsets[p.start:p.stop + 1]) for p in parts]),
                     read_row, read_pos, device, hidden_tokens(parts, self.encoder.hides_keys, self.lm.name))
        with torch.inference_mode():
            if self.metric.mlm_head:
                tokens = torch.as_tensor(np.concatenate([p.job.reads.token[r] for p, r in zip(parts, ranges)]),
                                         device=device)
                values = self.encoder.probs(batch, self.settings.layers, tokens, self.value_dtype,
                                            log=self.metric.log_prob)    # [N, nl]
            else:
                values = self.encoder.states(batch, self.settings.layers).to(self.value_dtype)  # [N, nl, D]
            first_read = np.cumsum([0] + [r.stop - r.start for r in ranges])
            taken = [k for k, p in enumerate(parts) if not self.resume.has(p)]
            if len(taken) < len(parts):   # a resumed run's batch: what the run resumed has is run, not taken
                rows = [np.arange(first_read[k], first_read[k + 1]) for k in taken]
                values = values[torch.as_tensor(np.concatenate([[], *rows]).astype(np.int64), device=device)]
                ranges, first_read = [ranges[k] for k in taken], np.cumsum([0] + [len(r) for r in rows])
            kept = [parts[k] for k in taken]
            record = type(kept[0].job).take(ReadOut(kept, ranges, first_read, values, self.metric)) if kept else None
        # host-side bookkeeping last, so an OOM above leaves nothing half-done
        if record is not None:
            record()
        for p in kept:
            p.job.done_sequences += p.rows
        self._count(parts, batch.n_reads)

    def _count(self, parts: list[BatchPart], n_reads: int) -> None:
        stats, work = self.stats, self.encoder.work
        stats.batches += 1
        stats.forward_sequences += sum(p.rows for p in parts)
        stats.tokens += sum(p.tokens for p in parts)
        stats.padded_tokens += work.tokens
        stats.reads += n_reads
        stats.query_slots += work.query_slots
        stats.attention_pairs += work.attention_pairs
        stats.query_key_pairs += work.query_key_pairs

