"""Filling impact stores: planning first, the model loaded only if some store has work left.

:mod:`.stores` plans every store and runs what is left (:func:`fill_stores`, the one code path of
``pmask impact``, ``parse``/``sweep``/``heatmap --store`` and ``pmask bench``); :mod:`.compute`
fills one store with a loaded model (:func:`compute_store`, :func:`iter_impacts`);
:mod:`.add_layers` adds layers to an existing store; :mod:`.record` is what a store records about
the run; :mod:`.spec` says which model to run and how (:class:`ModelSpec`, torch-free);
:mod:`.distributed` runs under ``torchrun``. May import ``pmask.common``, ``pmask.corpora`` and
the rest of ``pmask.perturb`` except :mod:`pmask.perturb.source` (which reads through this).

Names are imported on first use.
"""
from __future__ import annotations

from pmask.common.lazy import lazy_exports

_EXPORTS = {"compute_store": ".compute", "iter_impacts": ".compute", "FillRequest": ".compute",
            "StoreSummary": ".compute", "describe_stats": ".compute", "fill_stores": ".stores",
            "build_store": ".stores", "StoreRun": ".stores", "ModelSpec": ".spec"}
__all__ = list(_EXPORTS)

__getattr__ = lazy_exports(__name__, _EXPORTS)
