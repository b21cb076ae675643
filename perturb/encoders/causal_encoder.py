"""The encoder of the ``causal`` family (:mod:`pmask.perturb.encoders.causal`): a decoder-only LM's own forward.

One call per segment of equal-length rows (never padded), the batch's hidden tokens as a 2-D attention mask
(the model combines it with its causal mask) and explicit position ids, so that a hidden token changes
nothing but what attends to it. Hidden states at any layer; log-probabilities at the last layer only, from
the output head at the reads (verified at load, :func:`pmask.perturb.encoders.causal.inspect`) or, where the
head does not reproduce the model's logits, from the model's own logits.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import torch

from pmask.common.errors import ModelError
from pmask.perturb.encoders.batch import PackedBatch
from pmask.perturb.encoders.encoder import Encoder
from pmask.perturb.encoders.mlm_head import token_probs

#: Relative agreement asked of the output head against the model's own logits, per dtype name.
TOLERANCE = {"float64": 1e-9, "float32": 1e-4}
LOW_PRECISION_TOLERANCE = 5e-2
PROBE_WORDS = ["The", "committee", "unexpectedly", "approved", "the", "budget", "on", "Tuesday", "."]


@dataclass
class CausalPaths:
    """What :func:`inspect` verified: whether the output head reproduces the model's logits (else the
    model's own logits are read)."""

    head: bool
    no_prob: str | None = None


def output_head(model: Any) -> Any:
    """The model's output embedding (``lm_head``): logits from the last (normalised) hidden state."""
    return model.get_output_embeddings()


def inspect_head(lm: Any) -> CausalPaths:
    """Check on a probe sentence that the output head applied to the last hidden state gives the model's
    logits (to the dtype's tolerance)."""
    model = lm.model
    ids = lm.tokenizer(PROBE_WORDS, is_split_into_words=True, return_tensors="pt")["input_ids"].to(lm.device)
    tol = TOLERANCE.get(str(lm.dtype).replace("torch.", ""), LOW_PRECISION_TOLERANCE)
    with torch.inference_mode():
        logits = model(input_ids=ids).logits
        last = model.base_model(input_ids=ids).last_hidden_state
        head = output_head(model)
        ok = head is not None and float((head(last) - logits).abs().max()) <= tol * float(logits.abs().max() or 1.0)
    return CausalPaths(head=ok)


class CausalEncoder(Encoder):
    """Hidden states and next-token log-probabilities of a causal LM at the reads, hidden tokens masked."""

    fast = False
    hides_keys = True

    def __init__(self, model: Any, num_layers: int, name: str, paths: CausalPaths):
        super().__init__(model, None, num_layers, name)
        self.paths = paths

    @staticmethod
    def _inputs(ids: torch.Tensor, hidden: torch.Tensor | None) -> dict[str, Any]:
        """The model's inputs for rows ``ids`` [rows, length] with tokens ``hidden`` [rows, length] (or None)."""
        rows, length = ids.shape
        return {"input_ids": ids, "attention_mask": None if hidden is None else (~hidden).to(torch.long),
                "position_ids": torch.arange(length, device=ids.device).expand(rows, length)}

    def states(self, batch: PackedBatch, layers: Sequence[int]) -> Any:
        self.work = batch.work(partial_top=False)
        out = []
        for seg in batch.segments:
            hidden = self.base(**self._inputs(batch.rows(seg), batch.hidden_rows(seg)),
                               output_hidden_states=True).hidden_states
            if hidden is None or len(hidden) != self.num_layers + 1:
                raise ModelError(f"model {self.name!r} returns {0 if hidden is None else len(hidden)} hidden "
                                 f"states, expected {self.num_layers + 1} (embeddings + one per layer)")
            local = batch.read_token[seg.reads] - seg.first_token
            out.append(torch.stack([hidden[k].reshape(-1, hidden[k].shape[-1])[local] for k in layers], dim=1))
        return torch.cat(out)

    def check_prob(self, layers: Sequence[int]) -> None:
        if self.paths.no_prob:
            raise ModelError(self.paths.no_prob)
        if any(k != self.num_layers for k in layers):
            raise ModelError(f"model {self.name!r}: a causal model's log-probabilities are read at its last layer "
                             f"({self.num_layers}) only, its own next-token prediction; use --layers -1")

    def probs(self, batch: PackedBatch, layers: Sequence[int], token_ids: Any, dtype: Any, log: bool = False) -> Any:
        """P(token | the state at the read) at the last layer: token_ids [N] → [N, 1] (natural logs with ``log``);
        a read at position p − 1 gives the probability of the token at p."""
        self.check_prob(layers)
        self.work = batch.work(partial_top=False)
        out = []
        for seg in batch.segments:
            local = batch.read_token[seg.reads] - seg.first_token
            inputs = self._inputs(batch.rows(seg), batch.hidden_rows(seg))
            if self.paths.head:   # the head at the reads only
                last = self.base(**inputs).last_hidden_state
                logits = output_head(self.model)(last.reshape(-1, last.shape[-1])[local])
            else:
                full = self.model(**inputs).logits
                logits = full.reshape(-1, full.shape[-1])[local]
            out.append(token_probs(logits[:, None], token_ids[seg.reads], dtype, log)[:, 0])
        return torch.cat(out)[:, None] if out else torch.zeros((0, 1), dtype=dtype)
