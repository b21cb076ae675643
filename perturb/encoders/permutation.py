"""The ``permutation`` model family: permutation language models (XLNet), read through permutation masks.

XLNet predicts a token from its query stream, which sees the position but not the content of what it
predicts. A word is hidden by its mask token in place of its pieces *and* by a permutation mask that no
position may attend to them (Hoover et al.'s ``XLNet`` class); the position predicted is named by a target
mapping (:class:`~pmask.perturb.encoders.permutation_encoder.PermutationEncoder`). Its reading of ``cpmi``
is :class:`pmask.perturb.probes.cpmi_permutation.PermutationCpmiJob`. This module is torch-free at import.
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from pmask.common.model_families import MODEL_FAMILIES, ModelFamily

#: The permutation family's readings of metrics (filled in by :mod:`pmask.perturb.probes.cpmi_permutation`).
METRIC_JOBS: dict[str, type] = {}


def recognises(config: Any) -> bool:
    """XLNet's config (the one transformers model with permutation masks and target mappings)."""
    return getattr(config, "model_type", None) == "xlnet"


def inspect(lm: Any) -> Any:
    """Nothing to verify: the model's own query-stream logits are read, at the last layer only."""
    return SimpleNamespace(head=None, no_prob=None, fast_family=None)


def encoder(lm: Any, fast: bool | None) -> Any:
    """The encoder of one run; float32 or lower (transformers computes XLNet's relative positions in float32)."""
    import torch

    from pmask.common.errors import ModelError
    from pmask.perturb.encoders.permutation_encoder import PermutationEncoder

    if fast:
        raise ModelError(f"model {lm.name!r}: XLNet has no fast path (it runs the model's own forward)")
    if lm.dtype == torch.float64:
        raise ModelError(f"model {lm.name!r}: XLNet does not run in float64 (transformers computes its relative "
                         "positions in float32); use --dtype float32")
    return PermutationEncoder(lm.model, None, lm.num_layers, lm.name)


FAMILY = MODEL_FAMILIES.register(ModelFamily(
    "permutation", "permutation language models (XLNet): a word hidden by a permutation mask, its pieces predicted "
                   "by the query stream",
    recognises=recognises, precedence=10, loader="AutoModelForCausalLM", noun="permutation language model",
    accepts="a permutation language model (XLNet)",
    hides="the mask token in place of each of its pieces, which no position may attend to (the permutation mask)",
    inspect=inspect, encoder=encoder, probes=("pair",), metrics=("cpmi",), units=("word",),
    metric_jobs=METRIC_JOBS, subword_lists="XLNet"))
