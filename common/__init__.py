"""Shared basics that every wing may import, torch-free: :mod:`.errors` (one-line exceptions),
:mod:`.options` (every named setting, defined once), :mod:`.files` (outputs that behave like
shell redirection). May import nothing else of pmask.
"""
