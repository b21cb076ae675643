"""The ``masked`` model family: BERT and its kin (a ``*ForMaskedLM`` encoder), registered beside its code.

A masked LM hides a word by writing its mask token in place of each of the word's pieces, and a word's state
sees both sides of the sentence. Its models load through ``AutoModelForMaskedLM``; its encoder paths are the
generic path (:mod:`.generic`, the model's own forward) and the verified fast path (:mod:`.bert`), chosen
and checked on a probe sentence at load by :mod:`.select`, which also finds the MLM head.

This module is torch-free at import (it registers the family when ``pmask`` is imported); the code that runs
the family is imported when a model is loaded.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from pmask.common.model_families import MODEL_FAMILIES, ModelFamily


def recognises(config: Any) -> bool:
    """A config transformers loads into a masked-LM class, neither a decoder nor an encoder-decoder."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_MASKED_LM_MAPPING_NAMES

    return (getattr(config, "model_type", None) in MODEL_FOR_MASKED_LM_MAPPING_NAMES
            and not getattr(config, "is_decoder", False) and not getattr(config, "is_encoder_decoder", False))


def inspect(lm: Any) -> Any:
    """The verified fast-path family and MLM head of a loaded model (:func:`.select.inspect_model`); a checkpoint
    without a trained masked-LM head has none (the head transformers made up is no head of this model)."""
    from pmask.perturb.encoders.select import inspect_model

    paths = inspect_model(lm.model, lm.tokenizer, lm.num_layers, lm.name)
    refusal = lm.checkpoint.refusal(lm.name, None) if lm.checkpoint else None
    return replace(paths, head=None, no_prob=refusal) if refusal else paths


def encoder(lm: Any, fast: bool | None) -> Any:
    """The encoder of one run (:func:`.select.make_encoder`): the verified fast path unless ``fast`` is False."""
    from pmask.perturb.encoders.select import make_encoder

    return make_encoder(lm.model, lm.paths(), lm.num_layers, lm.name, fast)


FAMILY = MODEL_FAMILIES.register(ModelFamily(
    "masked", "masked language models (BERT, RoBERTa, ELECTRA, ...): a word hidden by the mask token, read on both "
              "sides",
    recognises=recognises, precedence=30, loader="AutoModelForMaskedLM", noun="masked language model",
    accepts="a masked language model encoder (a *ForMaskedLM class, neither decoder-only nor encoder-decoder)",
    hides="the mask token in place of each of its pieces", inspect=inspect, encoder=encoder, recorded=False))
