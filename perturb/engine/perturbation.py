"""The perturbation model: what the impact engine runs for a sentence, and what a job does with it.

Every probe that perturbs its input (pair, single, CPMI's chain rule, contextual distortion) is a
*job* per sentence that lists its model inputs and their reads; the engine
(:class:`pmask.perturb.engine.runner.BatchRunner`) knows nothing else about it. It packs the sequences of
consecutive jobs into batches of at most ``batch_tokens`` tokens, runs each batch once and hands
the values read back to the jobs (:meth:`Job.take`). A new perturbation is a new job: nothing in
the engine changes.

A job's sequences are one of two kinds, both described here as data:

- :class:`Masking`: the sentence's own tokens with *units* masked in place, any number per
  sequence; a unit is any set of token positions (a word's pieces, the pieces k… of a word for
  CPMI's chain rule, a span). Pair: {i} and {i, j}; single: {} and {j}.
- :class:`pmask.perturb.engine.rewrite.Rewriting`: the sentence rewritten from its words' pieces, masks
  and commas (a span replaced by one mask, a span alone between masks, spans moved);
- :class:`Hiding`: the sentence's own tokens with units hidden from the model's attention (their keys
  masked in every layer; a causal model's way to hide a word) and/or replaced by a replacement token.

Their reads (:class:`Reads`) say which token of which sequence is read; what a read is *for*
(the base state of a piece, a comparison for column j, a word unit to pool) is the job's own
extension of :class:`Reads`.

Example:
    >>> covers = np.array([[0, 1, 0, 0], [0, 0, 1, 1]], dtype=bool)       # word 0: token 1; word 1: tokens 2, 3
    >>> seqs = Masking(np.array([101, 7, 8, 9]), covers, np.array([[0, -1], [0, 1]]), mask_id=103)
    >>> seqs.tokens(0, 2).reshape(2, 4).tolist()                          # {0} masked, then {0, 1}
    [[101, 103, 8, 9], [101, 103, 103, 103]]
    >>> seqs.offsets.tolist()                                             # token offsets of the sequences
    [0, 4, 8]
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence

import numpy as np

from pmask.common.probe_entries import MetricEntry

if TYPE_CHECKING:   # the jobs of the probes import this module with the probes, where torch is not loaded yet
    import torch


class Sequences(Protocol):
    """A job's model inputs, in run order."""

    @property
    def offsets(self) -> np.ndarray:
        """[S + 1] int64: sequence s holds tokens ``offsets[s]`` … ``offsets[s + 1] - 1`` of the job."""

    def tokens(self, start: int, stop: int) -> np.ndarray:
        """Token ids of sequences ``start`` … ``stop - 1`` end to end (int64)."""


class Masking:
    """Sequences that mask units of one tokenised sentence in place (every other token stays where it was).

    Args:
        input_ids: [T] the sentence's model input.
        covers: [U, T] bool, masking unit u masks the tokens ``covers[u]`` (any set of positions).
        masked: [S, K] int, the units masked in sequence s; -1 = none (so K is the most per sequence).
        mask_id: the tokenizer's mask token.
    """

    def __init__(self, input_ids: np.ndarray, covers: np.ndarray, masked: np.ndarray, mask_id: int):
        self.input_ids = np.asarray(input_ids, dtype=np.int64)
        length = len(self.input_ids)
        # a last all-False row: unit -1 masks nothing
        self._covers = np.concatenate([np.asarray(covers, dtype=bool).reshape(-1, length),
                                       np.zeros((1, length), dtype=bool)])
        self.masked = np.asarray(masked, dtype=np.int64).reshape(len(masked), -1)
        self.mask_id = mask_id
        self.offsets = np.arange(len(self.masked) + 1, dtype=np.int64) * length

    def tokens(self, start: int, stop: int) -> np.ndarray:
        units = self.masked[start:stop]
        mask = self._covers[units[:, 0]]
        for k in range(1, units.shape[1]):
            mask = mask | self._covers[units[:, k]]
        return np.where(mask, self.mask_id, self.input_ids[None, :]).reshape(-1)


class Hiding:
    """Sequences that hide units of one tokenised sentence from the model: their keys masked in every layer
    (no query attends to them) and, with ``replacement``, their tokens replaced by it.

    Args:
        input_ids: [T] the sentence's model input.
        covers: [U, T] bool, unit u is the tokens ``covers[u]``.
        hidden: [S, K] int, the units hidden in sequence s; -1 = none.
        keys: hide the units' keys (the attention mask); False: only replace their tokens.
        replacement: the token written in place of a hidden unit's tokens (None: the tokens stay).

    Example:
        >>> covers = np.array([[0, 1, 0], [0, 0, 1]], dtype=bool)
        >>> seqs = Hiding(np.array([1, 7, 8]), covers, np.array([[-1], [0]]))
        >>> seqs.tokens(0, 2).tolist(), seqs.hidden(0, 2).astype(int).tolist()
        ([1, 7, 8, 1, 7, 8], [0, 0, 0, 0, 1, 0])
    """

    def __init__(self, input_ids: np.ndarray, covers: np.ndarray, hidden: np.ndarray, *, keys: bool = True,
                 replacement: int | None = None):
        self._masking = Masking(input_ids, covers, hidden, -1 if replacement is None else replacement)
        self.keys = keys
        self.replacement = replacement
        self.offsets = self._masking.offsets

    def _hidden_tokens(self, start: int, stop: int) -> np.ndarray:
        masking = self._masking
        units = masking.masked[start:stop]
        mask = masking._covers[units[:, 0]]
        for k in range(1, units.shape[1]):
            mask = mask | masking._covers[units[:, k]]
        return mask

    def tokens(self, start: int, stop: int) -> np.ndarray:
        if self.replacement is None:
            return np.tile(self._masking.input_ids, stop - start)
        return self._masking.tokens(start, stop)

    def hidden(self, start: int, stop: int) -> np.ndarray:
        """[tokens] bool of sequences ``start`` … ``stop - 1`` end to end: the tokens whose keys are masked."""
        if not self.keys:
            return np.zeros(int(self.offsets[stop] - self.offsets[start]), dtype=bool)
        return self._hidden_tokens(start, stop).reshape(-1)


@dataclass
class Reads:
    """A job's reads, grouped by sequence in run order (arrays of equal length R); jobs extend it with
    what each read is for."""

    sequence: np.ndarray   # [R] sequence the read is taken from
    position: np.ndarray   # [R] token position in that sequence
    token: np.ndarray      # [R] token id at the position (what an MLM-head metric scores)


class Job(Protocol):
    """What the engine needs of one sentence's job (:class:`pmask.perturb.engine.jobs.SentenceJob`,
    ``pmask.perturb.probes.distortion.DistortionJob``, …)."""

    index: int
    n_sequences: int
    next_sequence: int    # first sequence not yet scheduled (the engine advances it)
    done_sequences: int   # sequences whose values were taken (the engine advances it)

    @property
    def sequences(self) -> Sequences: ...

    @property
    def reads(self) -> Reads: ...

    @property
    def finished(self) -> bool: ...

    def read_range(self, start: int, stop: int) -> slice: ...

    @classmethod
    def take(cls, batch: ReadOut) -> Callable[[], None]:
        """Use a batch's values (device work, under ``torch.inference_mode``); returns the host-side
        bookkeeping, which the engine runs once nothing can fail any more (an out-of-memory batch is
        retried in halves, so nothing may be half-recorded)."""

    def result(self, subword: str) -> np.ndarray: ...


@dataclass
class BatchPart:
    """Sequences ``start`` … ``stop - 1`` of one sentence's job, scheduled into a batch."""

    job: Any   # a Job
    start: int
    stop: int

    @property
    def rows(self) -> int:
        return self.stop - self.start

    @property
    def tokens(self) -> int:
        offsets = self.job.sequences.offsets
        return int(offsets[self.stop] - offsets[self.start])

    @property
    def longest(self) -> int:
        return int(np.diff(self.job.sequences.offsets[self.start:self.stop + 1]).max())


@dataclass
class ReadOut:
    """What one batch read, handed back to its jobs: part k's reads are ``job.reads[ranges[k]]``,
    at rows ``first[k]`` … ``first[k + 1] - 1`` of ``values``."""

    parts: Sequence[BatchPart]
    ranges: Sequence[slice]
    first: np.ndarray      # [P + 1] each part's first row in values
    values: torch.Tensor   # [N, n_layers] (MLM-head metrics) or [N, n_layers, D] (hidden states)
    metric: MetricEntry    # the run's metric (its ``compare`` is what a masking job computes)


def last_fitting(offsets: np.ndarray, start: int, room: int) -> int:
    """The largest ``stop`` ≥ ``start`` whose sequences ``start`` … ``stop - 1`` hold at most ``room`` tokens."""
    return int(np.searchsorted(offsets, offsets[start] + room, side="right")) - 1


def hidden_tokens(parts: Sequence[BatchPart], hides_keys: bool, name: str) -> np.ndarray | None:
    """A batch's tokens hidden from attention, end to end (:class:`Hiding` sequences; None when none hides any);
    a one-line ``ModelError`` when they would go to an encoder that cannot hide them (``hides_keys`` False)."""
    hiding = [hasattr(p.job.sequences, "hidden") for p in parts]
    if not any(hiding):
        return None
    if not hides_keys:
        from pmask.common.errors import ModelError

        raise ModelError(f"model {name!r}: its encoder cannot hide tokens from attention")
    return np.concatenate([p.job.sequences.hidden(p.start, p.stop) if hides else np.zeros(p.tokens, dtype=bool)
                           for p, hides in zip(parts, hiding)])
