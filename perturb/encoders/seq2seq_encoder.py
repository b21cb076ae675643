"""The encoder of the ``seq2seq`` family (:mod:`pmask.perturb.encoders.seq2seq`): BART's masked encoder input.

BART is a denoising encoder-decoder: given a text with masked tokens, its decoder writes the text out again.
Hoover et al.'s BART reading masks words in the encoder's input and reads the decoder's prediction of the
original token at the masked position, the decoder fed the masked input shifted right (what the model's own
forward does when it is given the input alone). So the masked family's sequences and reads serve as they are
(:class:`pmask.perturb.probes.cpmi.CpmiJob` for ``cpmi``); the log-probabilities are the model's own logits
at the last layer, and the hidden states of metrics ``dist`` and ``cos`` are the encoder's (layer 0 its
embeddings, layer k its k-th layer), the side that reads the masked input.
"""
from __future__ import annotations

from typing import Any, Sequence

import torch

from pmask.common.errors import ModelError
from pmask.perturb.encoders.generic import GenericEncoder


class Seq2SeqEncoder(GenericEncoder):
    """The generic path on an encoder-decoder: the encoder's hidden states, the whole model's logits."""

    def _hidden(self, input_ids: torch.Tensor) -> tuple[torch.Tensor, ...]:
        model: Any = self.model   # a transformers model (nn.Module attributes are typed Tensor | Module)
        encoder = model.get_encoder()
        hidden = encoder(input_ids=input_ids, output_hidden_states=True).hidden_states
        if hidden is None or len(hidden) != self.num_layers + 1:
            raise ModelError(f"model {self.name!r} returns {0 if hidden is None else len(hidden)} encoder hidden "
                             f"states, expected {self.num_layers + 1} (embeddings + one per layer)")
        return hidden

    def check_prob(self, layers: Sequence[int]) -> None:
        if any(k != self.num_layers for k in layers):
            raise ModelError(f"model {self.name!r}: an encoder-decoder's log-probabilities are its decoder's "
                             f"predictions, read at the last layer ({self.num_layers}) only; use --layers -1")
