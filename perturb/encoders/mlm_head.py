"""Masked-LM heads: MLM logits for hidden states, found and verified on the model itself.

A head is usable for metric ``prob`` at an intermediate layer only if applying it to the
model's last hidden state reproduces the model's own logits (checked on a probe input at
load time); the paper applies the same head to every layer's state.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import torch

# name -> (attributes the model must have, logits from hidden states [..., D]); the model is Any:
# its heads are reached by attribute name
_CANDIDATES: dict[str, tuple[tuple[str, ...], Callable[[Any, torch.Tensor], torch.Tensor]]] = {
    "cls": (("cls",), lambda m, h: m.cls(h)),                                  # BERT and many relatives
    "lm_head": (("lm_head",), lambda m, h: m.lm_head(h)),                      # RoBERTa, XLM-R, I-BERT
    "predictions": (("predictions",), lambda m, h: m.predictions(h)),          # ALBERT
    "electra": (("generator_lm_head", "generator_predictions"),
                lambda m, h: m.generator_lm_head(m.generator_predictions(h))),
    "distilbert": (("vocab_projector", "vocab_transform"),
                   lambda m, h: m.vocab_projector(m.vocab_layer_norm(m.activation(m.vocab_transform(h))))),
    "deberta": (("lm_predictions",),                                           # DeBERTa-v2/v3, non-legacy
                lambda m, h: m.lm_predictions(h, m.base_model.embeddings.word_embeddings)),
    "modernbert": (("head", "decoder"), lambda m, h: m.decoder(m.head(h))),
}


@dataclass
class MlmHead:
    """A verified MLM head of ``model``: ``head(h)`` [..., D] → logits [..., V]."""

    name: str
    model: torch.nn.Module

    def __call__(self, hidden: torch.Tensor) -> torch.Tensor:
        return _CANDIDATES[self.name][1](self.model, hidden)


def find_head(model: torch.nn.Module, last_hidden: torch.Tensor, logits: torch.Tensor, rtol: float) -> MlmHead | None:
    """The first candidate head whose output on ``last_hidden`` [B, T, D] matches ``logits`` [B, T, V].

    Returns None when no candidate exists or none reproduces the logits.
    """
    scale = float(logits.abs().max()) or 1.0
    for name, (attrs, fn) in _CANDIDATES.items():
        if not all(hasattr(model, a) for a in attrs):
            continue
        try:
            got = fn(model, last_hidden)
        except Exception:  # noqa: BLE001 - a candidate that does not fit this model is skipped
            continue
        if got.shape == logits.shape and float((got - logits).abs().max()) <= rtol * scale:
            return MlmHead(name, model)
    return None


def gather_probs(logits_fn: Callable[[torch.Tensor], torch.Tensor], states: torch.Tensor, token_ids: torch.Tensor,
                 dtype: torch.dtype, chunk: int = 256, log: bool = False) -> torch.Tensor:
    """P(token_ids[r] | states[r, l]) under ``logits_fn``: states [N, nl, D], token_ids [N] → [N, nl]
    (natural-log probabilities with ``log``).

    Computed in chunks of reads so that the [chunk, nl, V] logits stay small for big vocabularies.
    """
    out = [token_probs(logits_fn(states[s:s + chunk]), token_ids[s:s + chunk], dtype, log)
           for s in range(0, states.shape[0], chunk)]
    return torch.cat(out) if out else states.new_zeros((0, states.shape[1]), dtype=dtype)


def token_probs(logits: torch.Tensor, token_ids: torch.Tensor, dtype: torch.dtype, log: bool = False) -> torch.Tensor:
    """Softmax probability of ``token_ids`` [N] under ``logits`` [N, nl, V] → [N, nl] in ``dtype``
    (its natural log with ``log``)."""
    logp = torch.log_softmax(logits.to(dtype), dim=-1)
    idx = token_ids[:, None, None].expand(-1, logits.shape[1], 1)
    picked = logp.gather(-1, idx)[..., 0]
    return picked if log else picked.exp()
