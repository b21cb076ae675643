"""Probe ``single``: mask one word j and read the unmasked word i, F[i][j] = d(H(x)_i, H(x∖{j})_i).

A sentence of n words runs n + 1 sequences: the unmasked input (the *base* states of every
piece, and of the first special token for the ``include_cls`` row) and one sequence per word j
with j's pieces masked, read at the pieces of every other word. Metrics and subword policies are
the pair probe's (``dist``, ``cos``; ``prob`` = P(original piece | x) − P(original piece | x∖{j}),
the drop when j is masked; each computed by its entry's ``compare``, :mod:`.pair`), computed by the same
engine (:mod:`pmask.perturb.engine.runner`) with this module's :class:`SingleMaskJob` in place of the pairs
of :class:`~pmask.perturb.engine.jobs.SentenceJob`.
Words that share pieces (a multiword token in a surface tokenisation) are masked together:
their impacts on each other are 0. Row 0 of the ``include_cls`` layout is the special token's
change, column 0 is 0 (a special token is never masked).
"""
from __future__ import annotations

from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from pmask.common.probe_entries import PROBE_ENTRIES, ProbeEntry
from pmask.perturb.engine.jobs import NO_WORD, PlanBuilder, ReadPlan, SentenceJob


class SingleMaskJob(SentenceJob):
    """The sequences and reads of one sentence under probe ``single`` (n + 1 sequences)."""

    def _masked_words(self) -> tuple[list[int], list[int]]:
        n = self.n_words
        return [NO_WORD, *range(n)], [NO_WORD] * (n + 1)

    def _plan_reads(self) -> ReadPlan:
        plan = PlanBuilder(self)
        n = self.n_words
        for word in range(n):                       # sequence 0, unmasked: every piece's base state
            plan.add_word(0, word, True, -1)
        if self.include_cls:
            plan.add(0, self.cls_position, self.cls_slot, True, -1)
        for j in range(n):                          # sequence j + 1: word j masked, read every other word
            for i in range(n):
                if i != j:
                    plan.add_word(j + 1, i, False, j)
            if self.include_cls:
                plan.add(j + 1, self.cls_position, self.cls_slot, False, j)
        return plan.build()

    def _no_impact(self) -> np.ndarray:
        """[n, n] bool: the diagonal, and words that share a piece (masking j masks part of i)."""
        covers = self.covers[:self.n_words].astype(np.int64)
        return (covers @ covers.T) > 0


def single_matrices(model: Any, sentences: Iterable[Any], *, layers: Sequence[int] | int | str, metric: str,
                    subword: str, tokenize: str, **kwargs: Any) -> Iterator[np.ndarray | None]:
    """Probe ``single``'s impact arrays, one per sentence (None = too long); ``kwargs`` as for
    :func:`pmask.perturb.engine.runner.impact_matrices` (include_cls, batch_tokens, ...)."""
    from pmask.perturb.engine.runner import impact_matrices

    return impact_matrices(model, sentences, layers, metric=metric, subword=subword, tokenize=tokenize,
                           job_type=SingleMaskJob, **kwargs)


def sequences(n: int) -> int:
    """Forward sequences of probe single for n words: the unmasked one and one per masked word."""
    return n + 1


# ---------------------------------------------------------------------------- entry

PROBE = PROBE_ENTRIES.register(ProbeEntry(
    "single", "single masking, word i left unmasked: F[i][j] = d(H(x)_i, H(x without j)_i); n + 1 sequences",
    metrics=("dist", "cos", "prob"), runner=single_matrices, sequences=sequences, checkpoint=True))
