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
    """Nothing to verify (the model's own query-stream logits are read, at the last layer only); a model run in
    another dtype than float32 gets its relative positional encoding in that dtype (transformers computes it in
    float32 whatever the model's dtype, which a float64 model cannot multiply)."""
    import torch

    base = lm.model.base_model
    if lm.dtype != torch.float32 and not getattr(base, "_pmask_positions_cast", False):
        encode = base.relative_positional_encoding
        base.relative_positional_encoding = lambda *a, **kw: encode(*a, **kw).to(lm.dtype)
        base._pmask_positions_cast = True
    return SimpleNamespace(head=None, no_prob=None, fast_family=None)


def encoder(lm: Any, fast: bool | None) -> Any:
    """The encoder of one run (:class:`~pmask.perturb.encoders.permutation_encoder.PermutationEncoder`)."""
    from pmask.common.errors import ModelError
    from pmask.perturb.encoders.permutation_encoder import PermutationEncoder

    if fast:
        raise ModelError(f"model {lm.name!r}: XLNet has no fast path (it runs the model's own forward)")
    return PermutationEncoder(lm.model, None, lm.num_layers, lm.name)


FAMILY = MODEL_FAMILIES.register(ModelFamily(
    "permutation", "permutation language models (XLNet): a word hidden by a permutation mask, its pieces predicted "
                   "by the query stream",
    recognises=recognises, precedence=10, loader="AutoModelForCausalLM", noun="permutation language model",
    accepts="a permutation language model (XLNet)",
    hides="the mask token in place of each of its pieces, which no position may attend to (the permutation mask)",
    inspect=inspect, encoder=encoder, probes=("pair",), metrics=("cpmi",), units=("word",),
    metric_jobs=METRIC_JOBS, subword_lists="XLNet",
    head_layer="XLNet's log-probabilities are read at its last layer ({last}) only"))
