"""``ModelSpec``: a model and its impact settings, as given in a request and resolved below the pipeline wing
(its defaults are chosen by :func:`pmask.pipeline.request.resolve` alone: ``tests/pipeline/test_request.py``
pins the order of the layers); a store's own settings refused when a given one differs; a load needs a
resolved spec."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from pmask.common.errors import SettingError
from pmask.perturb.engine.impact_settings import UNSET, ImpactSettings
from pmask.perturb.fill.model_spec import ModelSpec
from pmask.perturb.store import StoreSettings

STORED = ImpactSettings("cos", "first", "words", "pair", 0)


def test_a_given_setting_that_differs_from_the_stores_is_refused_naming_the_stores():
    store = SimpleNamespace(path=Path("st"), settings=StoreSettings(model="m", impact=STORED), heads=None)
    ModelSpec(impact=UNSET).check_store(store)                                   # nothing given: nothing refused
    ModelSpec(impact=ImpactSettings("cos", None, None, None, None)).check_store(store)   # the store's own value
    with pytest.raises(SettingError, match="metric dist conflicts with the store st, which holds metric cos"):
        ModelSpec(impact=ImpactSettings("dist", None, None, None, None)).check_store(store)
    with pytest.raises(SettingError, match="model other conflicts with the store st, which was made with m"):
        ModelSpec("other", impact=UNSET).check_store(store)


def test_a_spec_is_loaded_only_once_resolved():
    with pytest.raises(ValueError, match="resolve the request first"):
        ModelSpec(impact=UNSET).load()
