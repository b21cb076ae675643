"""The perturbed-masking impact engine and its on-disk store.

    from pmask.perturb import load_model, impact_matrices
    lm = load_model("bert-base-uncased")
    for F in impact_matrices(lm, [["The", "cat", "sat", "."]], layers=[-1]):
        ...   # float32 [len(layers), n, n]; F[l, i, j] = impact of word j on word i

Names are imported on first use, so reading a store (``pmask.perturb.store``) does not load torch.
"""
from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "load_model": "model", "LoadedModel": "model", "RANDOM_SEED": "model",
    "impact_matrices": "engine", "ImpactStats": "engine", "METRICS": "options", "SUBWORD_POLICIES": "options",
    "align": "alignment", "WordAlignment": "alignment", "ALIGNERS": "alignment",
}
__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        module = "pmask.options" if _EXPORTS[name] == "options" else f"pmask.perturb.{_EXPORTS[name]}"
        return getattr(importlib.import_module(module), name)
    raise AttributeError(f"module 'pmask.perturb' has no attribute {name!r}")
