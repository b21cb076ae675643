"""Impacts: models, the perturbed-masking engine, its on-disk store and impact sources.

Grouped by role, each a subpackage, from the bottom up: word alignment (:mod:`.alignment`, with
``--context`` neighbours), running a model (:mod:`.encoders`), model loading (:mod:`.models`:
a model with its tokenizer, checkpoints, bundled models), the engine (:mod:`.engine`: jobs of
perturbed sequences batched by a token budget,
:class:`~pmask.perturb.engine.settings.ImpactSettings`), the probes (:mod:`.probes`: perturbed
masking and the other parameter-free ways to read syntax out of a model), the store
(:mod:`.store`: layout, writer, reader, planning without a model), filling stores (:mod:`.fill`:
which model (``ModelSpec``), plan, load the model only if needed, compute, add layers, across
ranks) and, on top, :class:`~pmask.perturb.source.ImpactSource` (a store, or a corpus and a
model). :mod:`.testing` builds tiny local models for tests. May import ``pmask.common`` and ``pmask.corpora``; never
``pmask.trees`` (the two are independent).

    from pmask.perturb import load_model, impact_matrices
    lm = load_model("bert-base-uncased")
    for F in impact_matrices(lm, [["The", "cat", "sat", "."]], layers=[-1]):
        ...   # float32 [len(layers), n, n]; F[l, i, j] = impact of word j on word i

Names are imported on first use, so reading a store (``pmask.perturb.store``) does not load torch.
"""
from __future__ import annotations

from pmask.common.lazy import lazy_exports

_EXPORTS = {
    "load_model": ".models.load", "LoadedModel": ".models.load", "RANDOM_SEED": ".models.load",
    "impact_matrices": ".engine.runner", "ImpactStats": ".engine.stats",
    "METRICS": "pmask.common.options", "SUBWORD_POLICIES": "pmask.common.options",
    "align": ".alignment", "WordAlignment": ".alignment", "ALIGNERS": ".alignment",
    "probe_matrices": ".probes", "PROBE_RUNNERS": ".probes",
}
__all__ = list(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
