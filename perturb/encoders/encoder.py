"""The interface every encoder path implements: hidden states and MLM probabilities at reads."""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Sequence

import torch

from pmask.common.errors import ModelError
from pmask.perturb.encoders.batch import ForwardWork, PackedBatch
from pmask.perturb.encoders.mlm_head import MlmHead, gather_probs


class Encoder(ABC):
    """Computes what the impact engine reads from one :class:`PackedBatch`.

    Hidden-state layer 0 is the embedding output, layer k the output of encoder layer k
    (k = 1 … ``num_layers``), as in the model's own ``output_hidden_states``.
    """

    fast: bool = False
    hides_keys: bool = False     # honours PackedBatch.hidden (a causal model's attention mask)
    no_prob: str | None = None   # why metric 'prob' is refused (a checkpoint without a trained head)

    def __init__(self, model: torch.nn.Module, head: MlmHead | None, num_layers: int, name: str):
        self.model = model
        self.base: Any = model.base_model   # its submodules are reached by name (typed Tensor | Module)
        self.head = head
        self.num_layers = num_layers
        self.name = name
        self.work = ForwardWork(0, 0, 0, 0)   # what the last call computed

    @abstractmethod
    def states(self, batch: PackedBatch, layers: Sequence[int]) -> torch.Tensor:
        """Hidden states at the reads.

        Args:
            batch: the packed input and its N reads.
            layers: absolute layer indices (0 = embeddings … ``num_layers``), any order.

        Returns:
            [N, len(layers), D] in the model's dtype.
        """

    def attentions(self, batch: PackedBatch, layers: Sequence[int]) -> list[torch.Tensor]:
        """Attention probabilities of encoder layers ``layers`` (1 … ``num_layers``; layer k's
        attention produces hidden state k), one tensor per segment of ``batch``.

        Returns:
            Per segment, [rows, len(layers), heads, length, length]: row t of head h is the
            distribution of query token t over the key tokens, as the model's own
            ``output_attentions`` (eager attention) gives it.
        """
        raise ModelError(f"model {self.name!r}: this encoder path computes no attention weights")

    def check_prob(self, layers: Sequence[int]) -> None:
        """Raise ``ModelError`` now if metric ``prob`` cannot be computed at ``layers``."""
        if self.no_prob:
            raise ModelError(self.no_prob)
        if self.head is None:
            raise ModelError(f"metric 'prob' (or 'cpmi') is not supported for model {self.name!r}: no MLM head that "
                             "reproduces the model's own logits was found")

    def probs(self, batch: PackedBatch, layers: Sequence[int], token_ids: torch.Tensor,
              dtype: torch.dtype, log: bool = False) -> torch.Tensor:
        """P(original token | layer-l state) at the reads: token_ids [N] → [N, len(layers)] in ``dtype``
        (natural-log probabilities with ``log``)."""
        self.check_prob(layers)
        assert self.head is not None   # check_prob refused a missing head
        return gather_probs(self.head, self.states(batch, layers), token_ids, dtype, log=log)
