"""Metric ``cpmi`` of the pair probe: conditional PMI from a masked LM (Hoover, Du, Sordoni & O'Donnell, EMNLP 2021).

For words i and j of a sentence x (natural logs, the MLM head applied to the layer's state):

    log_p[i, j] = Σ_k log p(piece k of i | x with pieces k, k+1, … of i masked and, if j != i, all of j masked)
    CPMI[i, j]  = log_p[i, i] − log_p[i, j]          (F[i, j]; the diagonal is 0)

so a word of m pieces is scored left to right by the chain rule (its earlier pieces visible).
For k = 0 the input is the pair probe's own (word i masked; words i and j masked), read at
word i's first piece only, so those sequences are shared with the pair probe's scheme: the
sequence with i and j masked gives F[i, j] (read at i) and F[j, i] (read at j). Only words of
several pieces need more: for each later piece k of word i, one sequence with pieces k… of i
masked and one for each other word j with j masked too. A sentence of n words with P pieces in
all costs ``1 + n + n(n−1)/2 + (P − n)·n`` sequences (their code: n·P, with the MLM head at
every position of each).

:class:`CpmiJob` is a :class:`pmask.perturb.engine.jobs.SentenceJob` with these sequences and reads,
the ``job`` of the metric's entry (registered here): the engine runs it in place of the pair probe's
job, compares log-probabilities as ``prob`` compares probabilities (base − current,
:func:`log_probability_drop`) and sums a word's pieces (subword policy ``sum``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pmask.common.probe_entries import METRIC_ENTRIES, AuthorsRecipe, MetricEntry
from pmask.perturb.engine.jobs import NO_WORD, PlanBuilder, ReadPlan, SentenceJob

if TYPE_CHECKING:
    import torch


def cpmi_sequences(piece_counts: list[int]) -> int:
    """Forward sequences of a sentence whose words have these numbers of pieces (include_cls layout).

    Example:
        >>> cpmi_sequences([1, 1, 1]), cpmi_sequences([1, 3, 1])   # the pair probe's 7; 7 + 2 pieces x 3
        (7, 13)
    """
    n, pieces = len(piece_counts), sum(piece_counts)
    return 1 + n + n * (n - 1) // 2 + (pieces - n) * n


class CpmiJob(SentenceJob):
    """The sequences and reads of metric ``cpmi`` for one sentence (see the module docstring).

    Masked units: 0 … n−1 are whole words, n is "nothing", n+1 … are the partial units (word i,
    piece k ≥ 1: pieces k… of word i), listed in :attr:`partial`.
    """

    partial: list[tuple[int, int]]

    def _masked_words(self) -> tuple[list[int], list[int]]:
        n = self.n_words
        self.partial = [(i, k) for i in range(n) for k in range(1, len(self.alignment.pieces(i)))]
        rows = []
        for i, k in self.partial:
            row = np.zeros(self.length, dtype=bool)
            row[self.alignment.pieces(i)[k:]] = True
            rows.append(row)
        if rows:
            self.covers = np.concatenate([self.covers, np.stack(rows)])
        units = [n + 1 + u for u in range(len(self.partial))]
        first = ([NO_WORD] if self.include_cls else []) + list(range(n)) + units
        second = [NO_WORD] * len(first)
        for i in range(n):                       # pieces k = 0: the pair probe's sequences
            first.extend([i] * (n - i - 1))
            second.extend(range(i + 1, n))
        for u, (i, _) in zip(units, self.partial):
            others = [j for j in range(n) if j != i]
            first.extend([u] * len(others))
            second.extend(others)
        return first, second

    def _plan_reads(self) -> ReadPlan:
        n = self.n_words
        plan = PlanBuilder(self)
        for s, (a, b) in enumerate(zip(self.masked_first.tolist(), self.masked_second.tolist())):
            if a == NO_WORD:                                   # unmasked: the special token's base state
                plan.add(s, self.cls_position, self.cls_slot, True, -1)
            elif a < n:                                        # word a masked (and b): first pieces
                pa = self.alignment.pieces(a)[0]
                plan.add(s, pa, int(self.slot_start[a]), b == NO_WORD, -1 if b == NO_WORD else b)
                if b == NO_WORD:
                    if self.include_cls:
                        plan.add(s, self.cls_position, self.cls_slot, False, a)
                else:
                    plan.add(s, self.alignment.pieces(b)[0], int(self.slot_start[b]), False, a)
            else:                                              # pieces k… of word i masked (and b)
                i, k = self.partial[a - n - 1]
                plan.add(s, self.alignment.pieces(i)[k], int(self.slot_start[i]) + k, b == NO_WORD,
                         -1 if b == NO_WORD else b)
        return plan.build()


def log_probability_drop(base: torch.Tensor, current: torch.Tensor) -> torch.Tensor:
    """log p(piece | x∖{i}) − log p(piece | x∖{i, j}), [N, layers] → [N, layers]: a piece's term of CPMI[i, j]."""
    return base - current


# ---------------------------------------------------------------------------- entry

CPMI = METRIC_ENTRIES.register(MetricEntry(
    "cpmi", "conditional PMI (Hoover et al. 2021): log p(word i | x without i) - log p(word i | x without i, j) in "
            "nats under the MLM head, word i's pieces by the left-to-right chain rule",
    mlm_head=True, log_prob=True, subword="sum",
    subword_reason="the chain rule sums the log-probabilities of word i's pieces",
    compare=log_probability_drop, job=CpmiJob, sequences=cpmi_sequences,
    faithful=AuthorsRecipe("Hoover et al.", ("mst-projective", "mst"), tokenize="words-ptb", context=30,
                           symmetrize="sum")))
