"""One settings model: metric, subword policy and tokenisation are defined once (ImpactSettings) and
held, not repeated, by ModelSpec, StoreSettings, the engine's RunSettings, FillRequest and BenchSettings."""
from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from types import SimpleNamespace

import pytest

from pmask.common.errors import OptionError, SettingError
from pmask.perturb.engine.impact_settings import UNSET, ImpactSettings
from pmask.perturb.fill.model_spec import ModelSpec
from pmask.perturb.store import StoreSettings

IMPACT_FIELDS = {"metric", "subword", "tokenize", "probe", "context"}


def test_defaults_unset_fields_and_order():
    assert ImpactSettings().as_dict() == {"metric": "dist", "subword": "avg", "tokenize": "words", "probe": "pair",
                                          "context": 0}
    assert list(ImpactSettings().as_dict()) == ["metric", "subword", "tokenize", "probe", "context"]   # as recorded
    assert UNSET.with_defaults() == ImpactSettings()
    assert ImpactSettings(None, "first", None).with_defaults() == ImpactSettings("dist", "first", "words")
    assert ImpactSettings(None, None, None, "distance").with_defaults() == ImpactSettings("l2", "avg", "words",
                                                                                          "distance")


@pytest.mark.parametrize("settings, message", [
    (ImpactSettings(metric="euclid"), "unknown metric 'euclid'"),
    (ImpactSettings(subword="mean"), "unknown subword policy 'mean'"),
    (ImpactSettings(tokenize="chars"), "unknown tokenisation mode 'chars'"),
    (ImpactSettings(probe="probing"), "unknown probe 'probing'"),
    (UNSET, "unknown metric None"),   # a check is for settings that are all chosen
])
def test_check_names_the_first_unknown_value(settings, message):
    with pytest.raises(OptionError, match=message):
        settings.check()
    assert ImpactSettings("prob", "max", "text").check() == ImpactSettings("prob", "max", "text")


def test_cpmi_defaults_and_context_checks():
    assert ImpactSettings("cpmi", None, None, None, None).with_defaults() == ImpactSettings("cpmi", "sum", "words",
                                                                                          "pair", 0)
    with pytest.raises(SettingError, match="context"):
        ImpactSettings("cpmi", "sum", "text", "pair", 5).check()
    with pytest.raises(OptionError, match="context"):
        ImpactSettings("cpmi", "sum", "words", "pair", -1).check()
    from pmask.pipeline.request import Decoding, Request, resolve

    def faithful(impact: ImpactSettings) -> ImpactSettings:
        return resolve(Request(ModelSpec("random:tiny", impact=impact), Decoding(faithful=True))).impact

    assert (faithful(ImpactSettings("cpmi", None, None, None, None)).tokenize,
            faithful(ImpactSettings("cpmi", None, None, None, None)).context) == ("words-ptb", 30)
    assert faithful(ImpactSettings("cpmi", None, "words", None, 0)).context == 0   # given values are kept


def test_conflicts_only_for_fields_that_are_set():
    stored = ImpactSettings("cos", "first", "text")
    assert UNSET.conflicts(stored) == []
    assert ImpactSettings("cos", None, "words").conflicts(stored) == [("tokenize", "words", "text")]


def test_no_holder_repeats_the_fields():
    from pmask.eval.studies.bench.run import BenchSettings
    from pmask.perturb.engine.runner import RunSettings
    from pmask.perturb.fill.compute import FillRequest

    for holder in (ModelSpec, StoreSettings, RunSettings, FillRequest, BenchSettings):
        names = {f.name for f in fields(holder)}
        assert not names & IMPACT_FIELDS, f"{holder.__name__} repeats {names & IMPACT_FIELDS}"
        assert "impact" in names or holder is BenchSettings, holder.__name__   # BenchSettings: model.impact


def test_model_spec_takes_a_stores_own_settings_and_refuses_a_conflict():
    store = SimpleNamespace(path=Path("st"), settings=StoreSettings(model="m", impact=ImpactSettings("cos", "first")))
    assert ModelSpec().check_store(store).impact == ImpactSettings("cos", "first", "words")
    assert ModelSpec(impact=ImpactSettings("cos", None, None)).check_store(store).impact.subword == "first"
    with pytest.raises(SettingError, match="metric dist conflicts with the store st, which holds metric cos"):
        ModelSpec().with_defaults().check_store(store)


def test_bench_settings_record_the_same_flat_dict():
    """results.json keeps its shape: one flat dict, keys in the order of earlier releases."""
    from pmask.eval.studies.bench.run import BenchSettings

    settings = BenchSettings(ModelSpec("random:tiny", impact=ImpactSettings(None, "first", None), device="cpu"),
                             layers=(1, -1), limit=3)
    settings.resolve_decoding([])   # as run_bench does with its treebanks, before results.json is written
    assert settings.to_dict() == {
        "model": "random:tiny", "layers": [1, -1], "decoders": None, "root": "gold", "limit": 3, "metric": "dist",
        "subword": "first", "tokenize": "words", "punct": "include", "seed": 0, "device": "cpu", "dtype": None,
        "batch_tokens": None, "random_init": False, "probes": ["pair"], "metrics": {"pair": "dist"}, "head": None,
        "bias": 0.0, "max_words": None, "context": 0, "symmetrize": "none", "absolute": False}
    assert list(settings.to_dict())[:14] == ["model", "layers", "decoders", "root", "limit", "metric", "subword",
                                             "tokenize", "punct", "seed", "device", "dtype", "batch_tokens",
                                             "random_init"]   # new keys come after these
    # a name stands for ModelSpec(name)
    assert BenchSettings("tiny").spec_for("pair") == ModelSpec("tiny").with_defaults()
    several = BenchSettings("tiny", probes=["pair", "distance"]).to_dict()
    assert several["metric"] is None and several["metrics"] == {"pair": "dist", "distance": "l2"}
