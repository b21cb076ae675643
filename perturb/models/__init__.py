"""Model loading: a masked language model with its fast tokenizer (:mod:`.load`, :mod:`.tokenizer`),
what a checkpoint really provided (:mod:`.checkpoint`) and the models shipped inside the package
(:mod:`.bundled`, torch-free). Which model to run with which settings is
:class:`pmask.perturb.fill.model_spec.ModelSpec`.

May import ``pmask.common``, ``pmask.perturb.alignment`` and ``pmask.perturb.encoders``; nothing
else of ``pmask.perturb`` (the engine, the probes and the stores run what is loaded here).
"""
