"""The generic path: the model's own forward with ``output_hidden_states``, one call per segment.

Exact for every ``*ForMaskedLM`` by construction: each call sees only rows of equal length,
without padding or attention mask, exactly as a single sentence would be run.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, Sequence

import torch

from pmask.common.errors import ModelError
from pmask.perturb.encoders.batch import PackedBatch, Segment
from pmask.perturb.encoders.encoder import Encoder
from pmask.perturb.encoders.mlm_head import token_probs

# most logits elements ([rows, length, vocabulary]) one full-model call may produce
_LOGITS_BUDGET = 2 ** 25


class GenericEncoder(Encoder):
    """Hidden states from the base model's full forward; last-layer ``prob`` from the model's logits."""

    fast = False

    def _hidden(self, input_ids: torch.Tensor) -> tuple[torch.Tensor, ...]:
        hidden = self.base(input_ids=input_ids, output_hidden_states=True).hidden_states
        if hidden is None or len(hidden) != self.num_layers + 1:
            raise ModelError(f"model {self.name!r} returns {0 if hidden is None else len(hidden)} hidden states, "
                             f"expected {self.num_layers + 1} (embeddings + one per layer)")
        return hidden

    def states(self, batch: PackedBatch, layers: Sequence[int]) -> torch.Tensor:
        self.work = batch.work(partial_top=False)
        out = []
        for seg in batch.segments:
            hidden = self._hidden(batch.rows(seg))
            local = batch.read_token[seg.reads] - seg.first_token
            out.append(torch.stack([hidden[k].reshape(-1, hidden[k].shape[-1])[local] for k in layers], dim=1))
        return torch.cat(out)

    def attentions(self, batch: PackedBatch, layers: Sequence[int]) -> list[torch.Tensor]:
        self.work = batch.work(partial_top=False)
        out = []
        with eager_attention(self.model, self.name):
            for seg in batch.segments:
                att = self.base(input_ids=batch.rows(seg), output_attentions=True).attentions
                if not att or len(att) != self.num_layers or any(a is None for a in att):
                    raise ModelError(f"model {self.name!r} ({type(self.model).__name__}) returns no attention weights "
                                     f"(output_attentions gave {0 if not att else len(att)} of {self.num_layers} "
                                     "layers), which the attention-based probes need")
                out.append(torch.stack([att[k - 1] for k in layers], dim=1))
        return out

    def check_prob(self, layers: Sequence[int]) -> None:
        if self.no_prob:
            raise ModelError(self.no_prob)
        if self.head is None and any(k != self.num_layers for k in layers):
            raise ModelError(f"metric 'prob' (or 'cpmi') at intermediate layers is not supported for model "
                             f"{self.name!r}: "
                             "its MLM head could not be identified (applying it to the last hidden state does not "
                             "reproduce the model's logits); use the last layer or metric 'dist'")

    def probs(self, batch: PackedBatch, layers: Sequence[int], token_ids: torch.Tensor,
              dtype: torch.dtype, log: bool = False) -> torch.Tensor:
        if self.head is not None:
            return super().probs(batch, layers, token_ids, dtype, log)
        self.check_prob(layers)
        self.work = batch.work(partial_top=False)
        out = [self._segment_logit_probs(batch, seg, token_ids[seg.reads], dtype, log) for seg in batch.segments]
        return torch.cat(out)[:, None].expand(-1, len(layers))

    def _segment_logit_probs(self, batch: PackedBatch, seg: Segment, token_ids: torch.Tensor,
                             dtype: torch.dtype, log: bool = False) -> torch.Tensor:
        """Probabilities [reads] of the original tokens under the model's own logits, in row chunks."""
        rows = batch.rows(seg)
        local = batch.read_token[seg.reads] - seg.first_token
        vocab = int(getattr(self.model.config, "vocab_size", 0) or 1)
        step = max(1, _LOGITS_BUDGET // (seg.length * vocab))
        out = []
        for r0 in range(0, seg.rows, step):
            lo, hi = r0 * seg.length, min(seg.rows, r0 + step) * seg.length
            sel = (local >= lo) & (local < hi)
            logits = self.model(input_ids=rows[r0:r0 + step]).logits
            logits = logits.reshape(-1, logits.shape[-1])
            out.append(token_probs(logits[local[sel] - lo][:, None], token_ids[sel], dtype, log)[:, 0])
        return torch.cat(out)


@contextmanager
def eager_attention(model: torch.nn.Module, name: str) -> Iterator[None]:
    """Run ``model`` with eager attention inside the block (the only implementation that returns
    attention weights; SDPA and flash kernels give none), then restore its own implementation."""
    current = getattr(model.config, "_attn_implementation", None)
    if current in (None, "eager"):
        yield
        return
    switch: Any = model.set_attn_implementation   # a PreTrainedModel method (typed Tensor | Module here)
    try:
        switch("eager")
    except Exception as err:  # noqa: BLE001 - a model without eager attention cannot give its weights
        raise ModelError(f"model {name!r} ({type(model).__name__}) cannot run eager attention, so it gives no "
                         f"attention weights: {err}") from None
    try:
        yield
    finally:
        switch(current)
