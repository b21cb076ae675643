"""One settings model: metric, subword policy, tokenisation, probe and context are defined once (ImpactSettings,
every field given: None only in a request as given, which the resolver alone fills) and held, not repeated, by
ModelSpec, StoreSettings, the engine's RunSettings, FillRequest and BenchSettings."""
from __future__ import annotations

from dataclasses import fields

import pytest
from resolved import impact_of

from pmask.common.errors import OptionError, SettingError
from pmask.perturb.engine.impact_settings import UNSET, ImpactSettings
from pmask.perturb.fill.model_spec import ModelSpec
from pmask.perturb.store import StoreSettings

IMPACT_FIELDS = {"metric", "subword", "tokenize", "probe", "context"}
CHOSEN = ImpactSettings("dist", "avg", "words", "pair", 0)


def test_every_field_is_given_and_recorded_in_order():
    with pytest.raises(TypeError):
        ImpactSettings("dist")   # type: ignore[call-arg]   # no field has a default: the resolver chooses
    assert list(CHOSEN.as_dict()) == ["metric", "subword", "tokenize", "probe", "context"]   # as recorded
    assert UNSET.as_dict() == dict.fromkeys(IMPACT_FIELDS, None) and CHOSEN.context_words == 0
    with pytest.raises(ValueError, match="resolve the request first"):
        print(UNSET.context_words)


@pytest.mark.parametrize("settings, message", [
    (ImpactSettings("euclid", "avg", "words", "pair", 0), "unknown metric 'euclid'"),
    (ImpactSettings("dist", "mean", "words", "pair", 0), "unknown subword policy 'mean'"),
    (ImpactSettings("dist", "avg", "chars", "pair", 0), "unknown tokenisation mode 'chars'"),
    (ImpactSettings("dist", "avg", "words", "probing", 0), "unknown probe 'probing'"),
    (UNSET, "unknown metric None"),   # a check is for settings that are all chosen
    (ImpactSettings("dist", "avg", "words", "pair", None), "context must be a whole number"),
])
def test_check_names_the_first_unknown_value(settings, message):
    with pytest.raises(OptionError, match=message):
        settings.check()
    assert ImpactSettings("prob", "max", "text", "pair", 0).check() == ImpactSettings("prob", "max", "text", "pair", 0)


def test_context_checks():
    with pytest.raises(SettingError, match="context"):
        ImpactSettings("cpmi", "sum", "text", "pair", 5).check()
    with pytest.raises(OptionError, match="context"):
        ImpactSettings("cpmi", "sum", "words", "pair", -1).check()


def test_conflicts_only_for_fields_that_are_set():
    stored = ImpactSettings("cos", "first", "text", "pair", 0)
    assert UNSET.conflicts(stored) == []
    assert ImpactSettings("cos", None, "words", None, None).conflicts(stored) == [("tokenize", "words", "text")]


def test_no_holder_repeats_the_fields():
    from pmask.eval.studies.bench.run import BenchSettings
    from pmask.perturb.engine.runner import RunSettings
    from pmask.perturb.fill.compute import FillRequest

    for holder in (ModelSpec, StoreSettings, RunSettings, FillRequest, BenchSettings):
        names = {f.name for f in fields(holder)}
        assert not names & IMPACT_FIELDS, f"{holder.__name__} repeats {names & IMPACT_FIELDS}"
        assert "impact" in names or holder is BenchSettings, holder.__name__   # BenchSettings: model.impact


def test_bench_settings_record_the_same_flat_dict():
    """results.json keeps its shape: one flat dict, keys in the order of earlier releases."""
    from pmask.eval.studies.bench.run import BenchSettings

    settings = BenchSettings(ModelSpec("random:tiny", impact=ImpactSettings(None, "first", None, None, None),
                                       device="cpu"), layers=(1, -1), limit=3)
    settings.resolve_decoding([])   # as run_bench does with its treebanks, before results.json is written
    assert settings.to_dict() == {
        "model": "random:tiny", "layers": [1, -1], "decoders": None, "root": "gold", "limit": 3, "metric": "dist",
        "subword": "first", "tokenize": "words", "punct": "include", "seed": 0, "device": "cpu", "dtype": None,
        "batch_tokens": None, "random_init": False, "probes": ["pair"], "metrics": {"pair": "dist"}, "head": None,
        "bias": 0.0, "max_words": None, "context": 0, "symmetrize": "none", "absolute": False}
    assert list(settings.to_dict())[:14] == ["model", "layers", "decoders", "root", "limit", "metric", "subword",
                                             "tokenize", "punct", "seed", "device", "dtype", "batch_tokens",
                                             "random_init"]   # new keys come after these
    # a name stands for ModelSpec(name); the spec of a probe is the resolver's
    assert BenchSettings("tiny").spec_for("pair").impact == impact_of("pair", model="tiny")
    several = BenchSettings("tiny", probes=["pair", "distance"]).to_dict()
    assert several["metric"] is None and several["metrics"] == {"pair": "dist", "distance": "l2"}
