"""What a store records about the run that filled it: the model's full settings and the package
versions (shared by :mod:`pmask.perturb.fill.compute` and :mod:`pmask.perturb.fill.add_layers`)."""
from __future__ import annotations

import contextlib
import importlib.metadata
import platform
from typing import Any, Sequence

from pmask.common.options import has_attention_heads, resolve_layers
from pmask.perturb.engine.impact_settings import ImpactSettings
from pmask.perturb.store import StoreSettings
from pmask.perturb.store.store_settings import norm_model


def versions() -> dict[str, str]:
    """Versions of the packages whose behaviour the numbers depend on (no imports needed)."""
    out = {"python": platform.python_version()}
    for dist in ("pmask", "torch", "transformers", "tokenizers", "numpy", "safetensors"):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            out[dist] = importlib.metadata.version(dist)
    return out


def _dtype_name(dtype: Any) -> str | None:
    return None if dtype is None else str(dtype).removeprefix("torch.")


def store_settings(model: Any, impact: ImpactSettings, layers: Sequence[int] | str, *,
                   resolved: Sequence[int] | None = None, include_cls: bool = True) -> StoreSettings:
    """Full :class:`StoreSettings` of a loaded model (``pmask.perturb.models.load.LoadedModel``).

    Args:
        model: the loaded model.
        impact: metric, subword policy, tokenisation mode and probe.
        layers: the layers as requested (recorded as such in the manifest).
        resolved: ``layers`` already resolved for this model by the caller; None resolves them here.
        include_cls: the store's matrix layout.
    """
    from pmask.perturb.models.load import attention_heads  # torch: this module is read without it

    describe = model.describe() if hasattr(model, "describe") else {}
    tokenizer = describe.get("tokenizer") if isinstance(describe, dict) else None
    num_layers = int(model.num_layers)
    return StoreSettings(
        model=norm_model(str(model.name)), impact=impact,
        layers=layers if isinstance(layers, str) else tuple(int(k) for k in layers),
        include_cls=include_cls, revision=getattr(model, "revision", None), commit=getattr(model, "commit", None),
        random_init=bool(getattr(model, "random_init", False)), dtype=_dtype_name(getattr(model, "dtype", None)),
        tokenizer=tokenizer,
        layers_resolved=tuple(resolved) if resolved is not None else resolve_layers(layers, num_layers),
        num_layers=num_layers, max_length=getattr(model, "max_length", None),
        model_info=describe if isinstance(describe, dict) else None,
        heads=attention_heads(model) if has_attention_heads(impact.probe, impact.metric) else None)
