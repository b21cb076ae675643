"""A resumed run computes its sentences in the batches of the run it continues, so a resumed store is
bit-identical to an uninterrupted one.

Batches pack the sequences of consecutive sentences up to a token budget, so where a run starts
decides every batch boundary after it, and a sequence's values depend, at float32 rounding
(~1e-7 relative), on the rows it is batched with (matrix kernels pick their blocking by shape).
A run that resumes a store is therefore given the whole selection from its first sentence, with
``done`` = the positions already stored: their sequences are planned into batches exactly as in
the uninterrupted run, a batch that holds only stored sequences is not run, and a batch that
holds stored sequences *and* sequences still to compute (the one batch that spans the resume
point) runs whole, its stored sentences' results dropped. A sentence kept under way (its first
``s`` sequences, :class:`pmask.perturb.fill.compute` keeps it between batches) continues from the
batch that began at its sequence ``s``. The cost is the planning of the stored sentences
(tokenising them and laying out their sequences: milliseconds each) and at most one batch.

The same batches need the same budget (``--batch-tokens``), the same machine and device, the same
number of threads and one process; a resumed ``torchrun`` job, or a store extended to more sentences
(its last stored sentences were computed in a shorter last batch), agrees to float32 rounding instead.

Example:
    >>> plan = ResumePlan(done=frozenset({0, 1}), kept={2: 5})
    >>> plan.stored(0), plan.wanted(2)
    (True, True)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Collection, Sequence


@dataclass
class ResumePlan:
    """Which planned sequences a resumed run has already: ``done`` input positions (stored sentences,
    never yielded) and, per sentence kept under way, the sequences it holds (``kept``)."""

    done: frozenset[int] = frozenset()
    kept: dict[int, int] = field(default_factory=dict)

    @classmethod
    def of(cls, done: Collection[int] = ()) -> ResumePlan:
        return cls(done=frozenset(int(k) for k in done))

    def stored(self, index: int) -> bool:
        """Whether input ``index`` is stored (its sequences are planned, its result is not wanted)."""
        return index in self.done

    def wanted(self, index: int) -> bool:
        return index not in self.done

    def keep(self, job: Any) -> None:
        """A job restored from a kept state (``done_sequences`` > 0): plan its sequences from the first again
        (the batches before the kept point are not run) and end a batch at the kept point."""
        if job.done_sequences:
            self.kept[job.index] = job.done_sequences
            job.next_sequence = 0

    def cut(self, job: Any, stop: int) -> tuple[int, bool]:
        """``(stop, ends)``: a planned part of ``job`` from its ``next_sequence`` ends at its kept point, and the
        batch with it (the uninterrupted run began a batch there)."""
        kept = self.kept.get(job.index)
        if kept is None or not job.next_sequence < kept <= stop:
            return stop, False
        return kept, True

    def has(self, part: Any) -> bool:
        """Whether a planned part is had already: a stored sentence's, or below a kept sentence's kept point."""
        kept = self.kept.get(part.job.index)
        return self.stored(part.job.index) or (kept is not None and part.stop <= kept)

    def to_run(self, parts: Sequence[Any]) -> list[Any]:
        """The parts of a planned batch that run: none when every part is had already; else all of them, so
        that the batch is the one planned (the values of the parts had already are then not taken)."""
        return [] if all(self.has(p) for p in parts) else list(parts)
