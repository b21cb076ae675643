"""Whether a loaded model can give what a probe needs, checked once before any sentence is run.

Attention weights (probe ``attention``, and ``distance`` with ``jsd``/``hellinger``) come from the
model's own forward with eager attention (SDPA and flash kernels return none) on the generic
path, or from the fast path (:mod:`pmask.perturb.encoders.bert`), which is used for attention only
after its weights agree with the model's own ``output_attentions`` on the probe sentence at every
layer. A model that returns no attention weights, or no MLM head for ``prob``, is refused in one
line (:class:`~pmask.common.errors.ModelError`); nothing falls back silently.
"""
from __future__ import annotations

import logging
from typing import Any, Sequence

import torch

from pmask.common.errors import ModelError
from pmask.common.options import (
    check_attention_layers,
    check_probe,
    has_attention_heads,
    metric_entry,
    resolve_layers,
)
from pmask.perturb.encoders.bert import BertFamilyEncoder
from pmask.perturb.encoders.encoder import Encoder
from pmask.perturb.encoders.select import LOW_PRECISION_TOLERANCE, TOLERANCE, probe_batch
from pmask.perturb.models.load import attention_heads
from pmask.perturb.probes.attention_heads import check_attention_head

logger = logging.getLogger(__name__)

_KEY = "attention_path"   # LoadedModel.extra: "fast" or "generic", once verified


def attention_path(lm: Any) -> str:
    """``"fast"`` when the fast path's attention weights equal the model's own on the probe
    sentence, else ``"generic"``; a :class:`ModelError` when the model gives no attention weights.
    Checked once per loaded model (kept in ``lm.extra``)."""
    if _KEY in lm.extra:
        return lm.extra[_KEY]
    paths = lm.paths()
    batch = probe_batch(lm.tokenizer, lm.device) if lm.tokenizer.mask_token_id is not None else \
        clean_batch(lm.tokenizer, lm.device)   # a model family without a mask token: the sentence as it is
    layers = list(range(1, lm.num_layers + 1))
    with torch.inference_mode():
        own = lm.encoder(False).attentions(batch, layers)[0]   # the model's own forward, eager attention
        rows = own.sum(-1)
        if not torch.allclose(rows, torch.ones_like(rows), atol=1e-3):
            raise ModelError(f"model {lm.name!r}: its attention weights do not sum to 1 over the keys, so they are "
                             "not the attention distributions the attention-based probes read")
        path = "generic"
        if getattr(paths, "fast_family", None) is not None:
            fast = BertFamilyEncoder(lm.model, paths.head, lm.num_layers, lm.name, paths.fast_family)
            error = float((fast.attentions(batch, layers)[0] - own).abs().max())
            tol = TOLERANCE.get(lm.dtype, LOW_PRECISION_TOLERANCE)
            if error <= tol:
                path = "fast"
            else:
                logger.info("model %r: fast-path attention differs from the model's own by %.2g; using the "
                            "generic path for attention", lm.name, error)
    lm.extra[_KEY] = path
    return path


def clean_batch(tokenizer: Any, device: torch.device) -> Any:
    """The probe sentence once, unmasked, every position read (:func:`pmask.perturb.encoders.select.probe_batch`'s
    first row)."""
    import numpy as np

    from pmask.perturb.alignment import align
    from pmask.perturb.encoders.batch import pack
    from pmask.perturb.encoders.select import PROBE_WORDS

    ids = np.array(align(tokenizer, PROBE_WORDS).input_ids, dtype=np.int64)
    return pack(ids, np.array([len(ids)]), np.zeros(len(ids), dtype=np.int64), np.arange(len(ids)), device)


def probe_encoder(lm: Any, needs_attention: bool, fast_path: bool | None) -> Encoder:
    """The encoder path for a probe run: as the engine's, but for attention only a verified one."""
    encoder = lm.encoder(fast_path)
    if needs_attention and encoder.fast and attention_path(lm) != "fast":
        if fast_path:
            raise ModelError(f"model {lm.name!r}: the fast path's attention weights differ from the model's own; "
                             "use the generic path")
        return lm.encoder(False)
    if needs_attention:
        attention_path(lm)   # refuses a model without attention weights before any sentence
    return encoder


def check_support(lm: Any, probe: str, metric: str, layers: Sequence[int] | int | str = (-1,), *, subword: str,
                  head: str | int | None = None) -> None:
    """Refuse now, in one line, a probe setting the loaded model cannot compute.

    Args:
        lm: a ``pmask.perturb.models.load.LoadedModel``.
        probe, metric, subword: the probe settings (resolved).
        layers: the layers it will read.
        head: the head decoded (a head number must exist in the model).

    Raises:
        ModelError: a probe or metric the model's family does not run, no attention weights (attention, jsd,
            hellinger) or no MLM head (prob).
        LayerError, SettingError, OptionError: settings the probe does not take.
    """
    check_probe(probe, metric, subword, head)
    refusal = lm.family.refusal(probe, metric, None)   # what its model family cannot run
    if refusal:
        raise ModelError(f"model {lm.name!r}: {refusal}")
    absolute = resolve_layers(layers, lm.num_layers)
    check_attention_layers(probe, metric, absolute, lm.num_layers)
    if has_attention_heads(probe, metric):
        check_attention_head(head, attention_heads(lm))
        attention_path(lm)
    if metric_entry(metric).mlm_head:
        if hasattr(lm, "check_metric"):   # no trained head: one line naming the metric asked for
            lm.check_metric(metric)
        lm.encoder(None).check_prob(absolute)
