"""Metric ``cpmi`` read from XLNet (Hoover et al.'s ``XLNet`` class): the masked sequences, hidden by permutation.

Their XLNet reading is the masked LM's (:mod:`pmask.perturb.probes.cpmi`: for word i's piece k, pieces k… of
word i hidden, and all of word j, the probability of piece k read at its position), with each hidden token
replaced by the mask token *and* masked from every position by the permutation mask, the predicted position
named by the target mapping (:mod:`pmask.perturb.encoders.permutation_encoder`). So the sequences are
:class:`pmask.perturb.probes.cpmi.CpmiJob`'s units, as :class:`pmask.perturb.engine.perturbation.Hiding`
sequences (keys hidden, tokens replaced); a sequence with words i and j hidden serves F[i, j] and F[j, i]
(two targets of one row: XLNet's query streams are independent), so a sentence of n words with P pieces costs
``1 + n + n(n−1)/2 + (P − n)·n`` sequences where their code runs n·P.
"""
from __future__ import annotations

import numpy as np

from pmask.perturb.encoders.permutation import METRIC_JOBS
from pmask.perturb.engine.perturbation import Hiding
from pmask.perturb.probes.cpmi import CpmiJob


class PermutationCpmiJob(CpmiJob):
    """:class:`CpmiJob`'s units hidden by XLNet's permutation mask and replaced by the mask token."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        units = np.stack([self.masked_first, self.masked_second], axis=1)
        self.sequences = Hiding(self.input_ids, self.covers, units, keys=True, replacement=self.mask_id)


METRIC_JOBS["cpmi"] = PermutationCpmiJob   # the permutation family's reading of cpmi
