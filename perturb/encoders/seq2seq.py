"""The ``seq2seq`` model family: denoising encoder-decoders (BART), read through their masked encoder input.

BART hides a word as a masked LM does (its mask token in place of each of the word's pieces, in the encoder's
input); its decoder, fed that input shifted right (the model's own forward given the input alone), predicts
the original token at each position. So the masked family's sequences and reads serve unchanged, CPMI
included (Hoover et al.'s ``Bart`` class); the encoder
(:class:`~pmask.perturb.encoders.seq2seq_encoder.Seq2SeqEncoder`) reads log-probabilities from the model's
own logits (last layer only) and hidden states from its encoder. This module is torch-free at import.
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from pmask.common.model_families import MODEL_FAMILIES, ModelFamily


def recognises(config: Any) -> bool:
    """An encoder-decoder that transformers loads into a masked-LM class (BART, mBART); not T5, whose
    sentinel tokens are no mask token."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_MASKED_LM_MAPPING_NAMES

    return (getattr(config, "model_type", None) in MODEL_FOR_MASKED_LM_MAPPING_NAMES
            and bool(getattr(config, "is_encoder_decoder", False)))


def inspect(lm: Any) -> Any:
    """Nothing to verify: the model's own logits are read (no separate head), at the last layer only."""
    return SimpleNamespace(head=None, no_prob=None, fast_family=None)


def encoder(lm: Any, fast: bool | None) -> Any:
    """The encoder of one run (:class:`~pmask.perturb.encoders.seq2seq_encoder.Seq2SeqEncoder`)."""
    from pmask.common.errors import ModelError
    from pmask.perturb.encoders.seq2seq_encoder import Seq2SeqEncoder

    if fast:
        raise ModelError(f"model {lm.name!r}: an encoder-decoder has no fast path (it runs the model's own forward)")
    return Seq2SeqEncoder(lm.model, None, lm.num_layers, lm.name)


FAMILY = MODEL_FAMILIES.register(ModelFamily(
    "seq2seq", "denoising encoder-decoders (BART): a word hidden by the mask token in the encoder's input, its "
               "original predicted by the decoder",
    recognises=recognises, precedence=20, loader="AutoModelForMaskedLM", noun="encoder-decoder language model",
    accepts="a denoising encoder-decoder with a mask token (BART)",
    hides="the mask token in place of each of its pieces in the encoder's input", inspect=inspect, encoder=encoder,
    probes=("pair", "single"), metrics=("cpmi", "prob", "dist", "cos"), units=("word",), subword_lists="Bart",
    head_layer="an encoder-decoder's log-probabilities are its decoder's predictions, read at the last layer "
               "({last}) only"))
