"""The causal family's readings of probes ``pair`` and ``single``: word j perturbed, the words after it read.

In a causal LM word j can move only the states of the words after it, so F[i, j] is read for i > j and is 0
for i < j (the lower triangle; decode it with the undirected decoders, ``mst`` and ``mst-projective``, and
score it by UUAS):

- ``single`` (:class:`CausalSingleJob`): F[i, j] = d(H(x)_i, H(x∖j)_i), word j hidden by the attention mask
  (its pieces' keys masked in every layer, as Hoover et al.'s GPT-2 code hides a word): the clean input and
  one input per word j that has a word after it, each read at the pieces of every later word (n inputs);
- ``pair`` (:class:`CausalPairJob`): F[i, j] = d(H(x∖i)_i, H(x∖{i, j})_i), the paper's pairs with the
  pieces of the hidden words replaced by the input's start token (the attention mask alone would leave a
  word's own state untouched: its token reaches it through the residual stream); the input with words
  j < i hidden is read at i only (F[j, i] = 0), so a sentence runs n + n(n−1)/2 inputs as for a masked LM.

In the ``include_cls`` layout (stores) row and column 0, the start token's, are 0: a causal model's first
token sees no word. Each job is the masked one's bookkeeping (:class:`pmask.perturb.engine.jobs.SentenceJob`)
with its own sequences and reads; the causal family runs it in place of the probe's own (``ModelFamily.readings``).
"""
from __future__ import annotations

import numpy as np

from pmask.perturb.encoders.causal import COSTS, READINGS
from pmask.perturb.engine.jobs import NO_WORD, PlanBuilder, ReadPlan, SentenceJob
from pmask.perturb.engine.perturbation import Hiding, Masking
from pmask.perturb.probes import pair, single
from pmask.perturb.probes.cpmi_causal import causal_sequences
from pmask.perturb.probes.single import SingleMaskJob


class CausalSingleJob(SingleMaskJob):
    """Probe ``single`` on a causal model (see the module docstring): n inputs for n words."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        units = np.stack([self.masked_first, self.masked_second], axis=1)
        self.sequences = Hiding(self.input_ids, self.covers, units, keys=True)

    def _masked_words(self) -> tuple[list[int], list[int]]:
        n = self.n_words
        return [NO_WORD, *range(n - 1)], [NO_WORD] * n

    def _plan_reads(self) -> ReadPlan:
        plan = PlanBuilder(self)
        for word in range(self.n_words):                 # the clean input: every piece's base state
            plan.add_word(0, word, True, -1)
        for j in range(self.n_words - 1):                # word j hidden: read every later word
            for i in range(j + 1, self.n_words):
                plan.add_word(j + 1, i, False, j)
        return plan.build()


class CausalPairJob(SentenceJob):
    """Probe ``pair`` on a causal model (see the module docstring): hidden pieces replaced by the start token."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        units = np.stack([self.masked_first, self.masked_second], axis=1)
        self.sequences = Masking(self.input_ids, self.covers, units, mask_id=int(self.input_ids[0]))

    def _masked_words(self) -> tuple[list[int], list[int]]:
        n = self.n_words                 # no unmasked input: the start token's row is 0 (it sees no word)
        first, second = list(range(n)), [NO_WORD] * n
        for i in range(n):
            first.extend([i] * (n - i - 1))
            second.extend(range(i + 1, n))
        return first, second

    def _plan_reads(self) -> ReadPlan:
        plan = PlanBuilder(self)
        for s, (a, b) in enumerate(zip(self.masked_first.tolist(), self.masked_second.tolist())):
            if b == NO_WORD:                 # word a hidden: the base states of a's pieces
                plan.add_word(s, a, True, -1)
            else:                            # words a < b hidden: F[b, a] read at b (F[a, b] = 0)
                plan.add_word(s, b, False, a)
        return plan.build()


def pair_sequences(pieces: list[int]) -> int:
    """Inputs of the causal pair reading for a sentence: each word hidden, each pair i < j (n + n(n−1)/2).

    Example:
        >>> pair_sequences([1, 2, 1])
        6
    """
    n = len(pieces)
    return n + n * (n - 1) // 2


# the causal family's readings of probes single and pair, and what they cost
READINGS[SingleMaskJob] = CausalSingleJob
READINGS[SentenceJob] = CausalPairJob
COSTS[single.PROBE.name] = causal_sequences
COSTS[pair.PROBE.name] = pair_sequences
