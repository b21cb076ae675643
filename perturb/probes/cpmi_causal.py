"""Metric ``cpmi`` read from a causal LM: one input per source word, every later word's log-probability at once.

For a causal model (GPT-2, Llama, ...; Hoover et al.'s ``GPT2`` class) CPMI is

    log_p[i, j] = Σ_k log p(piece k of i | the pieces before it, word j hidden)      (j ≠ i)
    log_p[i, i] = Σ_k log p(piece k of i | the pieces before it)
    F[i, j]     = CPMI[i, j] = log_p[i, i] − log_p[i, j]

where the probability of the piece at position p is the model's prediction from position p − 1 and word j
is hidden by the attention mask (its pieces' keys masked in every layer). The chain rule over word i's
pieces is the model's own left-to-right reading, so nothing of word i needs hiding, and a word j after
word i cannot change it: F[i, j] = 0 for j > i (only the lower triangle is read).

Their code runs one full-length input per (source word j, piece of word i) pair, with the future masked
too: a no-op for a causal model. Here one input per source word j (j hidden, read at every piece of every
later word) plus one clean input (read at every piece) give the same numbers: n inputs for n words
(the last word has no later word to move), where their code runs n·P (P pieces).

:class:`CausalCpmiJob` is the job (:class:`pmask.perturb.engine.jobs.SentenceJob`'s bookkeeping: a clean
read is a piece's base, a read with word j hidden its comparison for column j, compared by the metric's
``log_probability_drop`` and summed over the pieces of a word); the causal family runs it for ``cpmi``
(``ModelFamily.metric_jobs``).
"""
from __future__ import annotations

import numpy as np

from pmask.common.errors import ModelError
from pmask.perturb.encoders.causal import COSTS, METRIC_JOBS
from pmask.perturb.engine.jobs import NO_WORD, ReadPlan, SentenceJob
from pmask.perturb.engine.perturbation import Hiding


def causal_sequences(pieces: list[int]) -> int:
    """Inputs of a sentence whose words have these numbers of pieces: the clean one and one per word that has a
    word after it (probes single and cpmi; n for n words).

    Example:
        >>> causal_sequences([1]), causal_sequences([1, 3, 1, 1, 2])
        (1, 5)
    """
    return 1 + max(len(pieces) - 1, 0)


class CausalCpmiJob(SentenceJob):
    """The clean input and one input per source word j < n − 1 (see the module docstring).

    In the ``include_cls`` layout (stores) row and column 0, the start token's, are 0: it sees no word.
    Class attributes say how a source word is hidden: ``hide_keys`` (the attention mask, their reading) and
    ``replacement`` (None: the tokens stay; a subclass may replace them by a token of its tokenizer).
    """

    hide_keys = True
    replacement: int | None = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        units = np.stack([self.masked_first, self.masked_second], axis=1)
        self.sequences = Hiding(self.input_ids, self.covers, units, keys=self.hide_keys,
                                replacement=self.replacement)

    def _masked_words(self) -> tuple[list[int], list[int]]:
        first = [NO_WORD] + list(range(self.n_words - 1))
        return first, [NO_WORD] * len(first)

    def _plan_reads(self) -> ReadPlan:
        seq, pos, slot, base, col = [], [], [], [], []
        for s, j in enumerate(self.masked_first.tolist()):
            for i in range(self.n_words) if j == NO_WORD else range(j + 1, self.n_words):
                for k, p in enumerate(self.alignment.pieces(i)):
                    seq.append(s)
                    pos.append(p - 1)        # the state that predicts the piece at p
                    slot.append(int(self.slot_start[i]) + k)
                    base.append(j == NO_WORD)
                    col.append(-1 if j == NO_WORD else j)
        position = np.array(pos, dtype=np.int64)
        if len(position) and position.min() < 0:
            raise ModelError(f"sentence {self.index}: a causal input must start with a token before its first word "
                             "(the tokenizer's start token)")
        return ReadPlan(sequence=np.array(seq, dtype=np.int64), position=position,
                        token=self.input_ids[position + 1], slot=np.array(slot, dtype=np.int64),
                        is_base=np.array(base, dtype=bool), column=np.array(col, dtype=np.int64))


METRIC_JOBS["cpmi"] = CausalCpmiJob   # the causal family's reading of cpmi, and its cost
COSTS["cpmi"] = causal_sequences
