"""Shared basics that every wing may import, torch-free: :mod:`.errors` (one-line exceptions),
:mod:`.options` (every named setting, defined once), :mod:`.files` (outputs that behave like
shell redirection), :mod:`.display` (the notebook display hook and ``ImpactMap``), :mod:`.frames`
(pandas data frames, an optional extra), :mod:`.command_line` (a ``pmask`` command line spelled
from settings, for messages that say what to run). May import nothing else of pmask.
"""
