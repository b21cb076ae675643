"""Impact settings resolved as a run chooses them (:func:`pmask.pipeline.request.resolve`), for tests that call
the library below the pipeline wing (the engine, the probes, stores), which takes resolved settings only."""
from __future__ import annotations

from pmask.perturb.engine.impact_settings import ImpactSettings


def impact_of(probe: str | None = None, *, model: str = "a-model", **given: object) -> ImpactSettings:
    """The settings a run of ``probe`` with ``given`` (metric, subword, tokenize, context) resolves to, for a
    model that records no defaults of its own (``model``: another name to take its recorded ones).

    Example:
        >>> impact_of("single").as_dict()
        {'metric': 'dist', 'subword': 'avg', 'tokenize': 'words', 'probe': 'single', 'context': 0}
    """
    from pmask.pipeline.request import Request, resolve

    return resolve(Request.build(model=model, probe=probe, **given)).impact  # type: ignore[arg-type]


#: The settings every store of the suite was made with before they had to be given (pair, dist, avg, words).
PAIR_DIST = ImpactSettings("dist", "avg", "words", "pair", 0)


def spec_of(name: str, **given: object) -> object:
    """The resolved ``ModelSpec`` of model ``name`` with ``given`` (``device``, ``probe``, ``metric``, ...), as a
    command resolves it before computing into a store (``build_store`` and ``fill_stores`` take resolved specs)."""
    from pmask.pipeline.request import Request, resolve

    return resolve(Request.build(model=name, **given)).model  # type: ignore[arg-type]
