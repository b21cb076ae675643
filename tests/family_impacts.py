"""``impacts(lm, sentences, probe, metric=..., tokenize=..., **kwargs)``: a probe's arrays with the settings given
and the rest as the resolver would choose them below the pipeline (subword ``sum`` for cpmi, else ``avg``; no
context), for the tests of the model families (``tests/perturb/encoders/``, ``tests/perturb/probes/test_cpmi_*``)."""
from __future__ import annotations

from typing import Any

from pmask.perturb.engine.impact_settings import ImpactSettings
from pmask.perturb.probes import probe_matrices

DEFAULT_METRIC = {"pair": "dist", "single": "dist", "distance": "l2", "attention": "weight"}


def impacts(lm: Any, sentences: Any, probe: str = "pair", *, metric: str | None = None, tokenize: str = "words",
            layers: Any = (-1,), **kwargs: Any):
    """``pmask.perturb.probes.probe_matrices`` with ``ImpactSettings(metric, subword, tokenize, probe, 0)``."""
    metric = metric or DEFAULT_METRIC[probe]
    settings = ImpactSettings(metric, "sum" if metric == "cpmi" else "avg", tokenize, probe, 0)
    return probe_matrices(lm, sentences, settings, layers=layers, **kwargs)
