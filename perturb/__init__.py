"""Impacts: models, the perturbed-masking engine, its on-disk store and impact sources.

Grouped by role, each a subpackage, from the bottom up: word alignment (:mod:`.alignment`, with
``--context`` neighbours), running a model (:mod:`.encoders`), model loading (:mod:`.models`:
a model with its tokenizer, checkpoints, bundled models), the engine (:mod:`.engine`: jobs of
perturbed sequences batched by a token budget,
:class:`~pmask.perturb.engine.impact_settings.ImpactSettings`), the probes (:mod:`.probes`: perturbed
masking and the other parameter-free ways to read syntax out of a model), the store
(:mod:`.store`: layout, writer, reader, planning without a model), filling stores (:mod:`.fill`:
which model (``ModelSpec``), plan, load the model only if needed, compute, add layers, across
ranks) and, on top, :class:`~pmask.perturb.source.ImpactSource` (a store, or a corpus and a
model). :mod:`.testing` builds tiny local models for tests. May import ``pmask.common`` and ``pmask.corpora``; never
``pmask.trees`` (the two are independent).

    from pmask.perturb.models.load import load_model
    from pmask.perturb.engine.runner import impact_matrices
    lm = load_model("bert-base-uncased")
    for F in impact_matrices(lm, [["The", "cat", "sat", "."]], layers=[-1]):
        ...   # float32 [len(layers), n, n]; F[l, i, j] = impact of word j on word i

This package imports nothing itself (each name is imported from its module), so importing
``pmask.perturb`` or reading a store (``pmask.perturb.store``) loads no torch.
"""
