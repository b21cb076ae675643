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

A document longer than the model's positions is never truncated: :func:`check_document_lengths` refuses
them all in one line before any model work.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import torch

from pmask.common.errors import ModelError, PmaskError
from pmask.common.labels import plural
from pmask.corpora.sentence import is_documents
from pmask.perturb.alignment import WordAlignment, get_aligner
from pmask.perturb.engine.impact_settings import DOCUMENT_METRICS, document_sequences
from pmask.perturb.engine.jobs import NO_WORD, SentenceJob
from pmask.perturb.engine.perturbation import Masking, ReadOut, Reads

__all__ = ["DocumentJob", "GroupReads", "check_document_lengths", "document_run", "document_sequences"]


def check_document_lengths(tokenizer: Any, max_length: int, name: str, aligner: Callable, documents: Sequence[Any]
                           ) -> list[WordAlignment]:
    """Every document's model input; a :class:`PmaskError` naming all that exceed ``max_length`` positions.

    Raises:
        PmaskError: "N documents exceed the 512 positions of MODEL: D14-1030 (530 pieces), …".
    """
    alignments = [aligner(tokenizer, doc) for doc in documents]
    long = [(getattr(d, "id", str(k)), len(a)) for k, (d, a) in enumerate(zip(documents, alignments))
            if len(a) > max_length]
    if long:
        listed = ", ".join(f"{doc} ({length} pieces)" for doc, length in long[:10])
        more = f" and {len(long) - 10} more" if len(long) > 10 else ""
        verb = "exceeds" if len(long) == 1 else "exceed"
        raise PmaskError(f"{plural(len(long), 'document')} {verb} the {max_length} positions of {name}: "
                         f"{listed}{more}; "
                         f"pmask never truncates a document: split it, leave it out (--limit, --max-words) or use a "
                         f"model with more positions")
    return alignments


def _pool(values: torch.Tensor, counts: np.ndarray) -> torch.Tensor:
    """[G, L, D] float64 means of consecutive runs of ``counts`` rows of ``values`` [R, L, D]: differences of
    a running sum (index_add_ in float64 on CPU is about 500x slower for a batch's few hundred reads)."""
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

    def result(self, subword: str = "pool") -> np.ndarray:
        """Impacts float32 ``[L, U, U]`` (U = n, or n + 1 with the [CLS] unit 0), diagonal 0."""
        return self.values.astype(np.float32)


def document_run(model: Any, sentences: Any, metric: str, subword: str, tokenize: str,
                 job_type: type[SentenceJob]) -> tuple[Any, type[SentenceJob]]:
    """The engine's inputs and job class: documents (the first input has ``unit == "edu"``) run as
    :class:`DocumentJob` after every one is checked against the model's positions; anything else as given.

    Raises:
        PmaskError: a metric or subword policy that does not pool, or documents too long for the model.
    """
    if isinstance(sentences, Sequence):
        first = sentences[:1]
    else:
        iterator = iter(sentences)
        first = list(itertools.islice(iterator, 1))
        sentences = itertools.chain(first, iterator)
    if not is_documents(first):
        return sentences, job_type
    refusal = model.family.refusal(unit=getattr(first[0], "unit", None))   # a family that reads words only
    if refusal:
        raise ModelError(f"model {model.name!r}: {refusal}")
    if metric not in DOCUMENT_METRICS:
        raise PmaskError(f"documents of EDUs take metric {' or '.join(DOCUMENT_METRICS)} (on the mean of each EDU's "
                         f"piece states), not {metric}")
    if subword != "avg" or job_type is not SentenceJob:
        raise PmaskError("documents of EDUs pool each EDU's pieces by the mean of their states (Wu et al.): they "
                         f"take subword avg and probe pair only, not subword {subword}")
    sentences = list(sentences)
    check_document_lengths(model.tokenizer, model.max_length, model.name, get_aligner(tokenize), sentences)
    return sentences, DocumentJob
