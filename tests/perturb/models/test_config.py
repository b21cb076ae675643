"""A model's config and family read before any weights load (``pmask.perturb.models.config``)."""
from __future__ import annotations

import pytest

from pmask.common.errors import ModelError
from pmask.common.model_families import MODEL_FAMILIES
from pmask.perturb.models.config import hub_reachable, model_family


def test_hub_reachable_honours_offline_flag(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert not hub_reachable()


def test_the_family_of_a_model_is_read_from_its_config_alone(tiny_bert_dir, tmp_path, monkeypatch):
    from transformers import T5Config

    loaded = []
    monkeypatch.setattr("pmask.perturb.models.load.load_model", lambda *a, **k: loaded.append(a))
    for name in ("pmask-tiny-en", "random:pmask-tiny-en", str(tiny_bert_dir)):
        assert model_family(name) is MODEL_FAMILIES["masked"]
    assert not loaded
    T5Config(num_layers=1, d_model=8, d_kv=4, d_ff=8, num_heads=2, vocab_size=20).save_pretrained(tmp_path / "t5")
    with pytest.raises(ModelError) as info:
        model_family(str(tmp_path / "t5"))
    assert str(info.value).startswith(f"model {str(tmp_path / 't5')!r} (type 't5') is of no model family pmask runs")
    with pytest.raises(ModelError, match="has no config.json"):
        model_family(str(tmp_path))
    with pytest.raises(ModelError, match="does not exist"):
        model_family(str(tmp_path / "none"))
