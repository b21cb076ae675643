"""A forward batch without padding: rows of masked inputs packed end to end, and the reads.

The engine never pads: a batch is the concatenation of its rows' tokens, grouped into
*segments* of consecutive rows of equal length. Position-wise work runs on the real tokens
[tokens, D]; attention and every call of a model's own forward run per segment, so no
architecture ever sees a pad token.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


@dataclass(frozen=True)
class Segment:
    """Consecutive rows of one length: ``rows`` × ``length`` tokens from packed token
    ``first_token``; reads ``first_read`` … ``first_read + n_reads - 1`` fall in it; on a partial
    top layer each row has ``slots_per_row`` query slots starting at slot ``first_slot``."""

    rows: int
    length: int
    first_token: int
    first_read: int
    n_reads: int
    slots_per_row: int
    first_slot: int

    @property
    def tokens(self) -> slice:
        return slice(self.first_token, self.first_token + self.rows * self.length)

    @property
    def reads(self) -> slice:
        return slice(self.first_read, self.first_read + self.n_reads)

    @property
    def slots(self) -> slice:
        return slice(self.first_slot, self.first_slot + self.rows * self.slots_per_row)


@dataclass
class ForwardWork:
    """What one forward computed: tokens through full layers, Σ length² of their attention,
    top-layer query slots and their query·key pairs (0 when the top layer ran in full)."""

    tokens: int
    attention_pairs: int
    query_slots: int
    query_key_pairs: int


@dataclass
class PackedBatch:
    """Model input and read positions of one batch (tensors on the model's device).

    Attributes:
        input_ids: [tokens] long, the rows' tokens end to end.
        segments: runs of equal-length rows, in row order.
        read_token: [N] packed token index of each read (reads are grouped by row, in row order).
        read_pos: [N] position of each read inside its row.
        read_slot: [N] query slot of each read on a partial top layer.
        query_token: [Q] packed token of each query slot (rows with fewer reads repeat a token).
        hidden: [tokens] bool, a token hidden from every query of its row (its key masked in every layer: how a
            causal model's word is hidden, :class:`pmask.perturb.engine.perturbation.Hiding`); None: none is.
    """

    input_ids: torch.Tensor
    segments: list[Segment]
    read_token: torch.Tensor
    read_pos: torch.Tensor
    read_slot: torch.Tensor
    query_token: torch.Tensor
    hidden: torch.Tensor | None = None

    @property
    def n_reads(self) -> int:
        return int(self.read_token.shape[0])

    def rows(self, segment: Segment) -> torch.Tensor:
        """The segment's input ids as [rows, length]."""
        return self.input_ids[segment.tokens].view(segment.rows, segment.length)

    def hidden_rows(self, segment: Segment) -> torch.Tensor | None:
        """The segment's hidden tokens as [rows, length] bool, None when none of them is hidden."""
        if self.hidden is None:
            return None
        hidden = self.hidden[segment.tokens].view(segment.rows, segment.length)
        return hidden if bool(hidden.any()) else None

    def work(self, partial_top: bool) -> ForwardWork:
        segs = self.segments
        if not partial_top:
            return ForwardWork(sum(s.rows * s.length for s in segs), sum(s.rows * s.length ** 2 for s in segs), 0, 0)
        return ForwardWork(sum(s.rows * s.length for s in segs), sum(s.rows * s.length ** 2 for s in segs),
                    sum(s.rows * s.slots_per_row for s in segs),
                    sum(s.rows * s.slots_per_row * s.length for s in segs))


def pack(input_ids: np.ndarray, row_length: np.ndarray, read_row: np.ndarray, read_pos: np.ndarray,
         device: torch.device, hidden: np.ndarray | None = None) -> PackedBatch:
    """Build a :class:`PackedBatch`.

    Args:
        input_ids: [tokens] the rows' token ids end to end.
        row_length: [B] length of each row.
        read_row: [N] row of each read, non-decreasing.
        read_pos: [N] position of each read in its row.
        device: where the tensors go.
        hidden: [tokens] bool, the tokens hidden from their row's queries (None: none).

    Returns:
        The packed batch with its segments and query slots.

    Example:
        >>> b = pack(np.array([5, 6, 7, 8, 9]), np.array([2, 3]), np.array([0, 1]), np.array([1, 0]),
        ...          torch.device("cpu"))
        >>> b.read_token.tolist(), [s.rows for s in b.segments]
        ([1, 2], [1, 1])
    """
    n_rows = len(row_length)
    row_first = np.concatenate([[0], np.cumsum(row_length)[:-1]]).astype(np.int64)
    counts = np.bincount(read_row, minlength=n_rows)
    row_first_read = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    rank = np.arange(len(read_row)) - row_first_read[read_row]
    bounds = np.flatnonzero(np.diff(row_length)) + 1
    starts = np.concatenate([[0], bounds]).astype(np.int64)
    stops = np.concatenate([bounds, [n_rows]]).astype(np.int64)
    segments: list[Segment] = []
    read_slot = np.empty(len(read_row), dtype=np.int64)
    query_token: list[np.ndarray] = []
    slot0 = 0
    for r0, r1 in zip(starts.tolist(), stops.tolist()):
        per_row = max(int(counts[r0:r1].max()), 1)
        read0, read1 = int(row_first_read[r0]), int(row_first_read[r1 - 1] + counts[r1 - 1])
        rows = read_row[read0:read1]
        read_slot[read0:read1] = slot0 + (rows - r0) * per_row + rank[read0:read1]
        q = np.repeat(row_first[r0:r1, None], per_row, axis=1)     # unused slots: the row's first token
        q[rows - r0, rank[read0:read1]] += read_pos[read0:read1]
        query_token.append(q.reshape(-1))
        segments.append(Segment(rows=r1 - r0, length=int(row_length[r0]), first_token=int(row_first[r0]),
                                first_read=read0, n_reads=read1 - read0, slots_per_row=per_row, first_slot=slot0))
        slot0 += (r1 - r0) * per_row

    def to(a: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(a, dtype=torch.long, device=device)

    return PackedBatch(input_ids=to(input_ids), segments=segments, read_token=to(row_first[read_row] + read_pos),
                       read_pos=to(read_pos), read_slot=to(read_slot), query_token=to(np.concatenate(query_token)),
                       hidden=None if hidden is None else torch.as_tensor(hidden, dtype=torch.bool, device=device))
