"""One sentence in flight through the impact engine: its masked sequences, reads and partial results.

A sentence of n words runs as sequences (optionally the unmasked one, for the ``include_cls``
row), then one per word i (word i masked: the *base* states of i's pieces), then one per pair
i < j (words i and j masked): that sequence is read at i's pieces for F[i, j] and at j's
pieces for F[j, i]. Values are kept per *slot* (one per piece of each word, plus one for the
special token of ``include_cls``), so words that share pieces never overwrite each other.

The sequences are a :class:`~pmask.perturb.engine.perturbation.Masking` (``_masked_units``: which units
each sequence masks, any number), the reads a :class:`ReadPlan` (``_plan_reads``); a subclass
that overrides these two (and ``_no_impact`` where its zeros differ) is a new perturbation, run
by the same engine (:mod:`pmask.perturb.probes.single`, :mod:`pmask.perturb.probes.cpmi`). What a
comparison read computes is the run's metric's own (``MetricEntry.compare``, beside the metric's entry
in :mod:`pmask.perturb.probes`).

Torch is imported where a job first uses it: the probes define their jobs here at import, and
importing ``pmask`` (which imports the probes) loads no torch.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import numpy as np

from pmask.perturb.alignment import WordAlignment
from pmask.perturb.engine.perturbation import Masking, ReadOut, Reads, Sequences

if TYPE_CHECKING:
    import torch

NO_WORD = -1   # "no word masked" in a sequence's masked-word pair


@dataclass
class ReadPlan(Reads):
    """The reads of one sentence (:class:`Reads`: sequence, position, token), and what each is for."""

    slot: np.ndarray       # [R] result slot: a piece of the measured word (or the special-token slot)
    is_base: np.ndarray    # [R] bool: a base state (measured word alone masked), else a comparison
    column: np.ndarray     # [R] the other masked word j (comparison reads), -1 for base reads


class SentenceJob:
    """Sequences, reads and accumulated piece-level values of one sentence."""

    def __init__(self, index: int, alignment: WordAlignment, mask_id: int, n_layers: int, include_cls: bool,
                 value_shape: tuple[int, ...], value_dtype: torch.dtype, device: torch.device):
        import torch

        n = self._take_input(index, alignment, mask_id, include_cls)
        # covers[k, t]: masking word k masks token t; row n masks nothing
        self.covers = np.zeros((n + 1, self.length), dtype=bool)
        for k in range(n):
            self.covers[k, alignment.pieces(k)] = True
        masked = self._masked_units()   # [S, K]: may add rows to covers (units other than whole words)
        self.masked_first = masked[:, 0]
        self.masked_second = masked[:, 1] if masked.shape[1] > 1 else np.full(len(masked), NO_WORD)
        self.sequences: Sequences = Masking(self.input_ids, self.covers, masked, mask_id)
        self.n_sequences = len(masked)
        self.slot_start = np.concatenate([[0], np.cumsum([len(alignment.pieces(k)) for k in range(n)])]).astype(int)
        self.cls_slot = int(self.slot_start[-1])
        self.cls_position = alignment.word_index.index(NO_WORD) if include_cls else -1
        self.reads = self._plan_reads()
        self.next_sequence = 0          # first sequence not yet scheduled
        self.done_sequences = 0
        n_slots = self.cls_slot + 1
        self.base = torch.zeros((n_layers, n_slots) + value_shape, dtype=value_dtype, device=device)
        self.values = np.zeros((n_layers, n_slots, n), dtype=np.float32)   # [layer, slot, column word]

    def _take_input(self, index: int, alignment: WordAlignment, mask_id: int, include_cls: bool) -> int:
        """Keep the input every job of a sentence reads (its ids, length, layout); returns its words."""
        self.index = index
        self.mask_id = mask_id
        self.alignment = alignment
        self.n_words = n = alignment.n_words
        self.length = len(alignment)
        self.include_cls = include_cls
        self.input_ids = np.array(alignment.input_ids, dtype=np.int64)
        return n

    def _masked_units(self) -> np.ndarray:
        """[S, K] int64: the units (rows of ``covers``) masked in each sequence, in run order (``NO_WORD``
        pads a sequence that masks fewer than K). Here: nothing (``include_cls``), each word, each pair."""
        return np.stack(self._masked_words(), axis=1).astype(np.int64)

    def _masked_words(self) -> tuple[list[int], list[int]]:
        """The words masked in each sequence (first, second; ``NO_WORD`` for none), in run order."""
        n = self.n_words
        first = ([NO_WORD] if self.include_cls else []) + list(range(n))
        second = [NO_WORD] * len(first)
        for i in range(n):
            first.extend([i] * (n - i - 1))
            second.extend(range(i + 1, n))
        return first, second

    def _plan_reads(self) -> ReadPlan:
        plan = PlanBuilder(self)
        add, add_word = plan.add, plan.add_word
        for s, (a, b) in enumerate(zip(self.masked_first.tolist(), self.masked_second.tolist())):
            if a == NO_WORD:                 # unmasked: the special token's base state
                add(s, self.cls_position, self.cls_slot, True, -1)
            elif b == NO_WORD:               # word a masked: base states of a's pieces
                add_word(s, a, True, -1)
                if self.include_cls:
                    add(s, self.cls_position, self.cls_slot, False, a)
            else:                            # words a, b masked: F[a, b] read at a, F[b, a] read at b
                add_word(s, a, False, b)
                add_word(s, b, False, a)
        return plan.build()

    @property
    def finished(self) -> bool:
        return self.done_sequences == self.n_sequences

    def state(self) -> dict[str, np.ndarray]:
        """What this job has computed so far (its first ``done_sequences`` sequences), as arrays:
        enough for :meth:`restore` to continue it in another process."""
        return {"base": self.base.cpu().numpy().copy(), "values": self.values.copy(),
                "input_ids": self.input_ids.copy(), "done_sequences": np.array([self.done_sequences], dtype=np.int64)}

    def restore(self, state: dict[str, np.ndarray]) -> bool:
        """Continue from a :meth:`state` of the same sentence and settings (False, unchanged, when it is
        not: other tokens or array shapes); only the sequences after it are run."""
        import torch

        done = int(state["done_sequences"][0])
        if (self.next_sequence or not 0 < done < self.n_sequences
                or not np.array_equal(state["input_ids"], self.input_ids)
                or tuple(state["base"].shape) != tuple(self.base.shape)
                or tuple(state["values"].shape) != self.values.shape):
            return False
        self.base.copy_(torch.as_tensor(state["base"]).to(self.base.dtype))
        self.values[...] = state["values"]
        self.next_sequence = self.done_sequences = done
        return True

    def read_range(self, start: int, stop: int) -> slice:
        """The reads of sequences ``start`` … ``stop - 1``."""
        lo, hi = np.searchsorted(self.reads.sequence, [start, stop])
        return slice(int(lo), int(hi))

    @classmethod
    def take(cls, batch: ReadOut) -> Callable[[], None]:
        """Keep the batch's base values, compare the others with theirs (one gather and one metric call
        for the whole batch: a comparison's base may sit in this very batch, so bases go first) and
        return the recording of the impacts into each job's ``values``."""
        import torch

        metric = batch.metric.comparison()
        values = batch.values
        device = values.device
        current_rows, base, targets = [], [], []
        for p, r, lo in zip(batch.parts, batch.ranges, batch.first.tolist()):
            plan = p.job.reads
            is_base = plan.is_base[r]
            slots = plan.slot[r]
            if is_base.any():
                p.job.base[:, torch.as_tensor(slots[is_base], device=device)] = \
                    values[torch.as_tensor(lo + np.flatnonzero(is_base), device=device)].transpose(0, 1)
            compare = np.flatnonzero(~is_base)
            if len(compare):
                current_rows.append(lo + compare)
                base.append(p.job.base[:, torch.as_tensor(slots[compare], device=device)].transpose(0, 1))
                targets.append((p.job, slots[compare], plan.column[r][compare]))
        impacts = None
        if current_rows:
            current = values[torch.as_tensor(np.concatenate(current_rows), device=device)]
            impacts = metric(torch.cat(base), current).cpu().numpy()

        def record() -> None:
            offset = 0
            for job, slots, columns in targets:
                assert impacts is not None   # targets come with current_rows
                job.values[:, slots, columns] = impacts[offset:offset + len(slots)].T
                offset += len(slots)
        return record

    def result(self, subword: str) -> np.ndarray:
        """Word-level impacts [n_layers, n, n] (or [n_layers, n+1, n+1] with the special-token row 0)."""
        reduce: dict[str, Callable[..., np.ndarray]] = {"avg": np.mean, "sum": np.sum, "max": np.max}
        rows = []
        for k in range(self.n_words):
            block = self.values[:, self.slot_start[k]:self.slot_start[k + 1], :]     # [n_layers, pieces, n]
            rows.append(block[:, 0, :] if subword == "first" else reduce[subword](block.astype(np.float64), axis=1))
        impact = np.stack(rows, axis=1).astype(np.float32)
        impact[:, self._no_impact()] = 0.0
        if not self.include_cls:
            return np.ascontiguousarray(impact)
        out = np.zeros((impact.shape[0], self.n_words + 1, self.n_words + 1), dtype=np.float32)
        out[:, 1:, 1:] = impact
        out[:, 0, 1:] = self.values[:, self.cls_slot, :]
        return out


    def _no_impact(self) -> np.ndarray:
        """[n, n] bool: pairs whose impact is 0 by definition. Masking i already masks all of j's
        pieces (words of one multiword token): the same input, so impact 0."""
        covers = self.covers[:self.n_words]
        return np.asarray(~(covers[None, :, :] & ~covers[:, None, :]).any(-1))   # [i, j]: covers[j] ⊆ covers[i]


class PlanBuilder:
    """Collects the reads of one job in sequence order and builds its :class:`ReadPlan`."""

    def __init__(self, job: SentenceJob):
        self.job = job
        self.seq: list[int] = []
        self.pos: list[int] = []
        self.slot: list[int] = []
        self.base: list[bool] = []
        self.col: list[int] = []

    def add(self, s: int, position: int, slot: int, is_base: bool, column: int) -> None:
        """One read: sequence ``s`` at token ``position`` into ``slot``; ``column`` = the other masked word."""
        self.seq.append(s)
        self.pos.append(position)
        self.slot.append(slot)
        self.base.append(is_base)
        self.col.append(column)

    def add_word(self, s: int, word: int, is_base: bool, column: int) -> None:
        """Reads at every piece of ``word`` (into the word's own slots)."""
        for k, p in enumerate(self.job.alignment.pieces(word)):
            self.add(s, p, int(self.job.slot_start[word]) + k, is_base, column)

    def build(self) -> ReadPlan:
        position = np.array(self.pos, dtype=np.int64)
        return ReadPlan(sequence=np.array(self.seq, dtype=np.int64), position=position,
                        token=self.job.input_ids[position], slot=np.array(self.slot, dtype=np.int64),
                        is_base=np.array(self.base, dtype=bool), column=np.array(self.col, dtype=np.int64))


class SkippedSentence:
    """A sentence too long for the model: yields None in its place."""

    finished = True

    def __init__(self, index: int):
        self.index = index
