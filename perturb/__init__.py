"""Impacts: models, the perturbed-masking engine, its on-disk store and impact sources.

Holds model loading (:mod:`.model`, :mod:`.tokenizer`, :mod:`.model_spec`), how impacts are
computed (:mod:`.impact_settings`: metric, subword policy, tokenisation, probe), word alignment
(:mod:`.alignment`), the engine (:mod:`.engine` over :mod:`.encoders`), the probes (:mod:`.probes`:
perturbed masking and the other parameter-free ways to read syntax out of a model), the store
(:mod:`.store`, filled by :mod:`.fill` and :mod:`.add_layers`, planned first and the model loaded
only if needed by :mod:`.build`, across ranks by :mod:`.distributed`),
:class:`~pmask.perturb.impact_source.ImpactSource` (a store, or a corpus and a model;
:mod:`.store_corpus` reads a store's corpus with the selection it was made with) and tiny
local models for tests (:mod:`.testing`). May import ``pmask.common`` and
``pmask.corpora``; never ``pmask.trees`` (the two are independent).

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
    "probe_matrices": "probes", "PROBE_RUNNERS": "probes",
}
__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        module = "pmask.common.options" if _EXPORTS[name] == "options" else f"pmask.perturb.{_EXPORTS[name]}"
        return getattr(importlib.import_module(module), name)
    raise AttributeError(f"module 'pmask.perturb' has no attribute {name!r}")
