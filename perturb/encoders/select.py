"""Choosing an encoder path for a model, verified on a probe input at load time.

``inspect_model`` runs a probe sentence (unmasked, one word masked, two words masked) through
the model's own forward and, for a class in ``FAST_PATH_CLASSES``, through the fast path: the
fast path is used only if its hidden states agree at every layer within the dtype's tolerance
(else the generic path, logged at info level). It also identifies the MLM head by checking
that it reproduces the model's logits from the last hidden state.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from pmask.perturb.alignment import align
from pmask.perturb.encoders.batch import PackedBatch, pack
from pmask.perturb.encoders.bert import BertFamilyEncoder, fast_path_family
from pmask.perturb.encoders.encoder import Encoder
from pmask.perturb.encoders.generic import GenericEncoder
from pmask.perturb.encoders.mlm_head import MlmHead, find_head

logger = logging.getLogger(__name__)

PROBE_WORDS = ["The", "committee", "unexpectedly", "approved", "Clinton", "'s", "budget", "on", "Tuesday", "."]
# relative agreement asked of the fast path (and of a head) against the model's own forward
TOLERANCE = {torch.float64: 1e-9, torch.float32: 1e-4}
LOW_PRECISION_TOLERANCE = 5e-2


@dataclass
class ModelPaths:
    """What ``inspect_model`` found: the fast-path family (None = generic only) and the MLM head;
    ``no_prob``: why metric ``prob`` must be refused whatever the head (None when nothing forbids it)."""

    fast_family: str | None
    head: MlmHead | None
    no_prob: str | None = None


def probe_batch(tokenizer: Any, device: torch.device) -> PackedBatch:
    """Two rows of the probe sentence (unmasked; words 1 and 3 masked), every position read."""
    al = align(tokenizer, PROBE_WORDS)
    ids = np.array(al.input_ids, dtype=np.int64)
    masked = ids.copy()
    for k in (1, 3):
        masked[al.pieces(k)] = tokenizer.mask_token_id
    length = len(ids)
    return pack(np.concatenate([ids, masked]), np.full(2, length), np.repeat(np.arange(2), length),
                np.tile(np.arange(length), 2), device)


def inspect_model(model: torch.nn.Module, tokenizer: Any, num_layers: int, name: str) -> ModelPaths:
    """Verify the fast path and find the MLM head of ``model`` on the probe sentence.

    Args:
        model: a ``*ForMaskedLM`` in eval mode.
        tokenizer: its fast tokenizer (with a mask token).
        num_layers: L; hidden states 0 … L are compared.
        name: the model's name for messages.

    Returns:
        :class:`ModelPaths`; ``fast_family`` is None when the class has no fast path or it disagrees.
    """
    param = next(model.parameters())
    tol = TOLERANCE.get(param.dtype, LOW_PRECISION_TOLERANCE)
    batch = probe_batch(tokenizer, param.device)
    layers = list(range(num_layers + 1))
    with torch.inference_mode():
        out = model(input_ids=batch.rows(batch.segments[0]), output_hidden_states=True)
        head = find_head(model, out.hidden_states[-1], out.logits, tol) if out.hidden_states else None
        family = fast_path_family(model)
        if family is None:
            return ModelPaths(None, head)
        if out.hidden_states is None or len(out.hidden_states) != num_layers + 1:
            return ModelPaths(None, head)
        # the model's own hidden states at every position, as the fast path returns them: [rows·T, L+1, D]
        generic = torch.stack([h.reshape(-1, h.shape[-1]) for h in out.hidden_states], dim=1)
        try:
            fast = BertFamilyEncoder(model, head, num_layers, name, family).states(batch, layers)
            scale = generic.abs().amax(dim=(0, 2)).clamp_min(1e-30)
            error = float(((fast - generic).abs().amax(dim=(0, 2)) / scale).max())
        except Exception as err:  # noqa: BLE001 - a layout the fast path does not handle: use the generic path
            logger.info("model %r: fast path failed on the probe sentence (%s); using the generic path", name, err)
            return ModelPaths(None, head)
    if not error <= tol:
        logger.info("model %r: fast path differs from the model's own forward by %.2g (relative) on the probe "
                    "sentence; using the generic path", name, error)
        return ModelPaths(None, head)
    return ModelPaths(family, head)


def make_encoder(model: torch.nn.Module, paths: ModelPaths, num_layers: int, name: str, fast: bool | None) -> Encoder:
    """The encoder for one run: the verified fast path unless ``fast`` is False (True requires it)."""
    from pmask.common.errors import ModelError

    if fast and paths.fast_family is None:
        raise ModelError(f"no fast path for model {name!r} ({type(model).__name__}); use the generic path")
    if fast is False or paths.fast_family is None:
        encoder: Encoder = GenericEncoder(model, paths.head, num_layers, name)
    else:
        encoder = BertFamilyEncoder(model, paths.head, num_layers, name, paths.fast_family)
    encoder.no_prob = paths.no_prob
    return encoder
