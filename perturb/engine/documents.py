"""The pair probe over a document's elementary discourse units (EDUs): whole units masked, pieces pooled.

A document is a :class:`~pmask.corpora.sentence.Sentence` with ``unit == "edu"`` whose "words" are
its EDUs (:mod:`pmask.corpora.scidtb`, :mod:`pmask.corpora.edus`). Wu et al. (2020, discourse) mask
every piece of EDU i, read EDU i's state as the **mean of its pieces' hidden states** h_i, and set

    F[i][j] = d(h_i(x∖{i}), h_i(x∖{i,j}))       (``dist``: Euclidean; ``cos``: 1 − cosine)

at every requested layer. The mean is taken first and the metric second (the word-level pair probe
does the opposite: the mean of per-piece values); pooling is in float64.

Units: the n EDUs, and with ``include_cls`` (stores, ``--faithful``) unit 0 = the first special token
(``[CLS]``) **masked like any EDU**, the authors' ROOT node. Sequences: ``{u}`` for every unit, then
``{u, v}`` for u < v, so U(U+1)/2 for U units (the authors run U² inputs: the one with {i, j}
masked serves F[i][j], read at i, and F[j][i], read at j, and {i, i} is {i}). There is no unmasked
sequence. The result is ``[L, U, U]`` with a zero diagonal, the store layout when ``include_cls``.

A document longer than the model's positions is never truncated (its unit's ``skips_long`` is False):
:func:`pmask.perturb.engine.units.check_record_lengths` refuses them all in one line (the cost estimate,
before any model work; the engine again, for a library call).

The unit ``edu`` is registered here, beside its job (:data:`EDU`: the engine runs a document of EDUs as a
:class:`DocumentJob` in place of the probe's job). Torch is imported where a job first uses it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from pmask.common.units import UNITS, UnitEntry
from pmask.perturb.alignment import WordAlignment
from pmask.perturb.engine.jobs import NO_WORD, SentenceJob
from pmask.perturb.engine.perturbation import Masking, ReadOut, Reads

if TYPE_CHECKING:
    import torch

__all__ = ["EDU", "DocumentJob", "GroupReads", "document_sequences"]


def document_sequences(units: int) -> int:
    """Forward sequences of the pair probe over a document of ``units`` masked units: U(U+1)/2 (each unit
    alone, each pair u < v once: the input with {u, v} masked serves F[u][v] and F[v][u]); the unit's
    :attr:`~pmask.common.units.UnitEntry.sequences`, so that the cost of a run (:mod:`pmask.perturb.probes.cost`)
    is counted by the engine's own formula.

    Example:
        >>> document_sequences(15)   # 14 EDUs and the [CLS] unit
        120
    """
    return units * (units + 1) // 2


def _pool(values: torch.Tensor, counts: np.ndarray) -> torch.Tensor:
    """[G, L, D] float64 means of consecutive runs of ``counts`` rows of ``values`` [R, L, D]: differences of
    a running sum (index_add_ in float64 on CPU is about 500x slower for a batch's few hundred reads)."""
    import torch

    running = torch.cumsum(values.to(torch.float64), dim=0)
    running = torch.cat([torch.zeros_like(running[:1]), running])
    ends = torch.as_tensor(np.cumsum(counts), device=values.device)
    sizes = torch.as_tensor(counts, dtype=torch.float64, device=values.device)
    return (running[ends] - running[ends - torch.as_tensor(counts, device=values.device)]) / sizes[:, None, None]


@dataclass
class GroupReads(Reads):
    """A document's reads (per read: sequence, position, token, ``group``) and its groups, one per
    (sequence, masked unit): the unit (``slot``), whether it is a base (the unit alone masked) and the
    other masked unit (``column``, ``NO_WORD`` for a base)."""

    group: np.ndarray      # [R]
    slot: np.ndarray       # [G]
    is_base: np.ndarray    # [G]
    column: np.ndarray     # [G]


class DocumentJob(SentenceJob):
    """One document's sequences, reads (every piece of each masked unit, one *group* per (sequence, unit))
    and pooled values. Same constructor as :class:`SentenceJob` (the engine makes either)."""

    def __init__(self, index: int, alignment: WordAlignment, mask_id: int, n_layers: int, include_cls: bool,
                 value_shape: tuple[int, ...], value_dtype: torch.dtype, device: torch.device):
        import torch

        n = self._take_input(index, alignment, mask_id, include_cls)
        self.n_units = units = n + int(include_cls)
        self.covers = np.zeros((units, self.length), dtype=bool)
        if include_cls:
            self.covers[0, alignment.word_index.index(NO_WORD)] = True
        for k in range(n):
            self.covers[k + int(include_cls), alignment.pieces(k)] = True
        masked = self._masked_units()
        self.sequences = Masking(self.input_ids, self.covers, masked, mask_id)
        self.n_sequences = len(masked)
        self.reads = self._plan_groups(masked)   # type: ignore[assignment]  # a ReadPlan's reads, grouped
        self.next_sequence = self.done_sequences = 0
        self.base = torch.zeros((n_layers, units) + value_shape, dtype=torch.float64, device=device)
        self.values = np.zeros((n_layers, units, units), dtype=np.float64)

    def _masked_units(self) -> np.ndarray:
        """[S, 2]: each unit alone, then each pair u < v (``NO_WORD`` pads a single)."""
        units = self.n_units
        pairs = [(u, v) for u in range(units) for v in range(u + 1, units)]
        return np.array([(u, NO_WORD) for u in range(units)] + pairs, dtype=np.int64).reshape(-1, 2)

    def _plan_groups(self, masked: np.ndarray) -> GroupReads:
        """Reads at every piece of each masked unit; per group: its unit (``slot``), base or not, other unit."""
        seq: list[int] = []
        pos: list[int] = []
        group: list[int] = []
        slot: list[int] = []
        base: list[bool] = []
        col: list[int] = []
        for s, (a, b) in enumerate(masked.tolist()):
            for unit, other in ((a, b), (b, a)) if b != NO_WORD else ((a, NO_WORD),):
                g = len(slot)
                positions = np.flatnonzero(self.covers[unit]).tolist()
                seq += [s] * len(positions)
                pos += positions
                group += [g] * len(positions)
                slot.append(unit)
                base.append(other == NO_WORD)
                col.append(other)
        position = np.array(pos, dtype=np.int64)
        return GroupReads(sequence=np.array(seq, dtype=np.int64), position=position, token=self.input_ids[position],
                          group=np.array(group, dtype=np.int64), slot=np.array(slot, dtype=np.int64),
                          is_base=np.array(base, dtype=bool), column=np.array(col, dtype=np.int64))

    @classmethod
    def take(cls, batch: ReadOut) -> Callable[[], None]:
        """Pool each group's reads (float64 mean), keep the bases, compare the others with their unit's base."""
        import torch

        device = batch.values.device
        targets = []
        for p, r, lo, hi in zip(batch.parts, batch.ranges, batch.first[:-1].tolist(), batch.first[1:].tolist()):
            job = p.job
            plan = job.reads
            group = plan.group[r]
            g0, g1 = int(group[0]), int(group[-1]) + 1
            pooled = _pool(batch.values[lo:hi], np.bincount(group - g0, minlength=g1 - g0))
            slots, is_base, columns = plan.slot[g0:g1], plan.is_base[g0:g1], plan.column[g0:g1]
            if is_base.any():   # bases first: a comparison's base may be in this very batch
                job.base[:, torch.as_tensor(slots[is_base], device=device)] = \
                    pooled[torch.as_tensor(np.flatnonzero(is_base), device=device)].transpose(0, 1)
            compare = np.flatnonzero(~is_base)
            if len(compare):
                base = job.base[:, torch.as_tensor(slots[compare], device=device)].transpose(0, 1)   # [G, L, D]
                current = pooled[torch.as_tensor(compare, device=device)]
                targets.append((job, slots[compare], columns[compare],
                                batch.metric.comparison()(base, current).cpu().numpy()))

        def record() -> None:
            for job, rows, cols, impacts in targets:
                job.values[:, rows, cols] = impacts.T
        return record

    def result(self, subword: str) -> np.ndarray:
        """Impacts float32 ``[L, U, U]`` (U = n, or n + 1 with the [CLS] unit 0), diagonal 0."""
        return self.values.astype(np.float32)


def _authors_documents(documents: Sequence[Any]) -> list[Any]:
    """The documents as Wu et al.'s reader leaves them (:func:`pmask.corpora.scidtb.authors_documents`), imported
    when asked: ``import pmask`` registers this unit and loads no corpus reader."""
    from pmask.corpora.scidtb import authors_documents

    return authors_documents(documents)


def _edus(text: str) -> list[str]:
    """The EDUs of a document given as one string: one a line, blank lines left out (as a ``.edus`` block)."""
    return [line.strip() for line in text.splitlines() if line.strip()]


#: Documents of elementary discourse units (SciDTB, ``.edus``): the pair probe over whole EDUs, their pieces'
#: states pooled by the mean, as Wu et al. (2020) probe discourse.
EDU: UnitEntry = UNITS.register(UnitEntry(
    "edu", "a document of elementary discourse units (SciDTB, .edus): Wu et al.'s discourse probe",
    record="document", noun="EDU", split=_edus, least=2, why_least="a discourse tree needs at least two", long=True,
    marked=True, job=DocumentJob,
    sequences=document_sequences, authors_texts=_authors_documents, probes=("pair",), subwords=("avg",),
    tokenize=("words",), takes_context=False, pooled=True, pooling="on the mean of each EDU's piece states",
    discourse=True, skips_long=False))
