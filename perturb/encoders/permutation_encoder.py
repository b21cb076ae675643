"""The encoder of the ``permutation`` family (:mod:`pmask.perturb.encoders.permutation`): XLNet's two streams.

XLNet predicts a token from its *query stream*, which sees the position but not the content of the token
it predicts. Hoover et al.'s XLNet reading hides a set of tokens from every position with a permutation
mask whose columns are those tokens (``perm_mask[:, :, hidden] = 1``; their tokens are also replaced by the
mask token) and names the predicted position with a target mapping. A batch's hidden tokens
(:attr:`pmask.perturb.encoders.batch.PackedBatch.hidden`) are those columns; its reads are the targets, all
the reads of one row predicted at once (each target's query stream is its own, so a row read at two
positions gives what two rows read at one each would). Log-probabilities at the last layer only.
"""
from __future__ import annotations

from typing import Sequence

import torch

from pmask.common.errors import ModelError
from pmask.perturb.encoders.batch import PackedBatch
from pmask.perturb.encoders.encoder import Encoder
from pmask.perturb.encoders.mlm_head import token_probs


class PermutationEncoder(Encoder):
    """XLNet's log-probability of the token at each read, the batch's hidden tokens masked by permutation."""

    fast = False
    hides_keys = True

    def states(self, batch: PackedBatch, layers: Sequence[int]) -> torch.Tensor:
        raise ModelError(f"model {self.name!r} (XLNet, permutation language model) is read through its "
                         "predictions only: metric cpmi")

    def check_prob(self, layers: Sequence[int]) -> None:
        if any(k != self.num_layers for k in layers):
            raise ModelError(f"model {self.name!r}: XLNet's log-probabilities are read at its last layer "
                             f"({self.num_layers}) only; use --layers -1")

    def probs(self, batch: PackedBatch, layers: Sequence[int], token_ids: torch.Tensor, dtype: torch.dtype,
              log: bool = False) -> torch.Tensor:
        """P(token at the read | the tokens not hidden) from the query stream: token_ids [N] → [N, 1]."""
        self.check_prob(layers)
        self.work = batch.work(partial_top=False)
        out = []
        for seg in batch.segments:
            ids = batch.rows(seg)
            hidden = batch.hidden_rows(seg)
            if hidden is None:
                hidden = torch.zeros_like(ids, dtype=torch.bool)
            perm = hidden[:, None, :].expand(seg.rows, seg.length, seg.length).to(self._dtype())
            slots = batch.read_slot[seg.reads] - seg.first_slot          # row * slots_per_row + rank
            targets = torch.zeros((seg.rows * seg.slots_per_row, seg.length), dtype=perm.dtype, device=ids.device)
            targets[slots, batch.read_pos[seg.reads]] = 1.0
            logits = self.model(input_ids=ids, perm_mask=perm,
                                target_mapping=targets.view(seg.rows, seg.slots_per_row, seg.length)).logits
            picked = logits.reshape(-1, logits.shape[-1])[slots]
            out.append(token_probs(picked[:, None], token_ids[seg.reads], dtype, log)[:, 0])
        return torch.cat(out)[:, None] if out else torch.zeros((0, 1), dtype=dtype)

    def _dtype(self) -> torch.dtype:
        return next(self.model.parameters()).dtype
