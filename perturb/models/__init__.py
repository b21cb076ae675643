"""Model loading: which model to run (:mod:`.spec`, torch-free), loading it with its fast tokenizer
(:mod:`.load`, :mod:`.tokenizer`), what a checkpoint really provided (:mod:`.checkpoint`) and the
models shipped inside the package (:mod:`.bundled`, torch-free).

May import ``pmask.common``, ``pmask.perturb.encoders``, ``pmask.perturb.alignment`` and the
engine's torch-free settings; nothing in ``pmask.perturb`` that fills or reads stores.
"""
