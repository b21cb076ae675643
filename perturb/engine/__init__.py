"""The perturbed-masking engine: word-level impact matrices F[l, i, j] from a loaded model.

:mod:`.runner` batches sequences by a token budget and runs them (:func:`impact_matrices`,
:class:`BatchRunner`); :mod:`.jobs` says which sequences a sentence needs and what is read from
them; :mod:`.rewrite` builds rewritten inputs for span probes; :mod:`.impact_settings` holds
:class:`ImpactSettings` (metric, subword policy, tokenisation, probe; torch-free) and
:mod:`.stats` the run's counters. May import ``pmask.common``, ``pmask.corpora``,
``pmask.perturb.alignment``, ``pmask.perturb.encoders`` and ``pmask.perturb.models``.

Each name is imported from its module (this package imports nothing, so :mod:`.impact_settings` and
:mod:`.stats` load no torch).
"""
