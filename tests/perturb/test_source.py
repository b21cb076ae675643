"""ImpactSource with a cache store and no model: impact settings left unset take the store's own,
settings given explicitly must match it (never silently replaced by the store's)."""
from __future__ import annotations

from pathlib import Path

import pytest

from pmask.common.errors import SettingError
from pmask.corpora.corpus_spec import CorpusSpec
from pmask.perturb.engine.impact_settings import ImpactSettings
from pmask.perturb.fill.model_spec import ModelSpec
from pmask.perturb.fill.stores import build_store
from pmask.perturb.source import ImpactSource

MINI = CorpusSpec(Path(__file__).resolve().parents[1] / "data" / "mini.conllu", limit=2)


@pytest.fixture(scope="module")
def cos_text_store(tiny_bert_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("cache") / "st"
    model = ModelSpec(str(tiny_bert_dir), impact=ImpactSettings("cos", None, "text"), device="cpu")
    build_store(MINI, model, out, layers=[-1], progress=False)
    return out


def test_unset_settings_take_the_cache_stores_own(cos_text_store):
    source = ImpactSource.open(MINI, store=cos_text_store, progress=False)
    assert all(item is not None for item in source.impacts(-1))
    assert source.impact_settings() == {"metric": "cos", "subword": "avg", "tokenize": "text", "probe": "pair",
                                        "context": 0}


@pytest.mark.parametrize("impact, name", [(ImpactSettings("dist", None, None), "metric"),
                                          (ImpactSettings(None, None, "words"), "tokenize")])
def test_explicit_settings_must_match_the_cache_store(cos_text_store, impact, name):
    source = ImpactSource.open(MINI, model=ModelSpec(impact=impact), store=cos_text_store, progress=False)
    with pytest.raises(SettingError, match=f"{name} .* conflicts with the store"):
        list(source.impacts(-1))


def test_a_corpus_and_a_model_use_the_defaults(tiny_bert_dir):
    source = ImpactSource.open(MINI, model=ModelSpec(str(tiny_bert_dir), device="cpu"), progress=False)
    assert source.impact_settings() == {"metric": "dist", "subword": "avg", "tokenize": "words", "probe": "pair",
                                        "context": 0}
