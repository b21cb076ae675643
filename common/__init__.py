"""Shared basics that every wing may import, torch-free: :mod:`.errors` (one-line exceptions),
:mod:`.options` (every named setting, defined once), :mod:`.files` (outputs that behave like
shell redirection), :mod:`.display` (the notebook display hook and ``ImpactMap``), :mod:`.frames`
(pandas data frames, an optional extra). May import nothing else of pmask.
"""
