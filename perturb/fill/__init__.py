"""Filling impact stores: planning first, the model loaded only if some store has work left.

:mod:`.stores` plans every store and runs what is left (:func:`fill_stores`, the one code path of
``pmask impact``, ``parse``/``sweep``/``heatmap --store`` and ``pmask bench``); :mod:`.compute`
fills one store with a loaded model (:func:`compute_store`, :func:`iter_impacts`);
:mod:`.add_layers` adds layers to an existing store; :mod:`.record` is what a store records about
the run; :mod:`.model_spec` says which model to run and how (:class:`ModelSpec`, torch-free);
:mod:`.distributed` runs under ``torchrun``. May import ``pmask.common``, ``pmask.corpora`` and
the rest of ``pmask.perturb`` except :mod:`pmask.perturb.source` (which reads through this).

Each name is imported from its module (this package imports nothing, so :mod:`.model_spec` loads no torch).
"""
