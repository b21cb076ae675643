"""The perturbed-masking engine: word-level impact matrices F[l, i, j] from a loaded model.

:mod:`.runner` batches sequences by a token budget and runs them (:func:`impact_matrices`,
:class:`BatchRunner`); :mod:`.jobs` says which sequences a sentence needs and what is read from
them; :mod:`.rewrite` builds rewritten inputs for span probes; :mod:`.settings` holds
:class:`ImpactSettings` (metric, subword policy, tokenisation, probe; torch-free) and
:mod:`.stats` the run's counters. May import ``pmask.common``, ``pmask.corpora``,
``pmask.perturb.alignment``, ``pmask.perturb.encoders`` and ``pmask.perturb.models``.

Names are imported on first use, so :mod:`.settings` does not load torch.
"""
from __future__ import annotations

from pmask.common.lazy import lazy_exports

_EXPORTS = {"impact_matrices": ".runner", "BatchRunner": ".runner", "RunSettings": ".runner", "BatchPart": ".runner",
            "checked_alignment": ".runner", "DEFAULT_BATCH_TOKENS": ".runner",
            "ImpactStats": ".stats", "ImpactSettings": ".settings"}
__all__ = list(_EXPORTS)

__getattr__ = lazy_exports(__name__, _EXPORTS)
