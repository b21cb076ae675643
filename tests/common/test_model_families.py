"""The model-family seam (``pmask.common.model_families``): recognition from a config by precedence, one-line
refusals asked of the entry, and a new family added by its entry alone (registered the way
``perturb/encoders/masked.py`` registers ``masked``) that is recognised, loaded by its own class and run through its
own encoder, with no other file edited (issue 46)."""
from __future__ import annotations

import dataclasses
import json
import shutil
from types import SimpleNamespace

import numpy as np
import pytest

from pmask.common.errors import ModelError
from pmask.common.model_families import MODEL_FAMILIES, ModelFamily, detect_family, unrecognised

from entry_checks import model_family_is_whole


def _family(name: str, recognises, precedence: int = 50, **fields) -> ModelFamily:
    masked = MODEL_FAMILIES["masked"]
    return dataclasses.replace(masked, name=name, recognises=recognises, precedence=precedence, **fields)


def test_detection_tries_the_families_by_precedence_then_registration_order():
    everything = _family("everything", lambda config: True, precedence=90)
    marked = _family("marked", lambda config: getattr(config, "marked", False), precedence=10)
    also = _family("also-marked", lambda config: getattr(config, "marked", False), precedence=10)
    with MODEL_FAMILIES.registered(everything, marked, also):
        assert detect_family(SimpleNamespace(marked=True, model_type="bert")) is marked
        assert detect_family(SimpleNamespace(model_type="made-up")) is everything
    assert detect_family(SimpleNamespace(model_type="made-up")) is None


def test_the_zoos_masked_architectures_are_the_masked_family_and_a_made_up_type_is_refused_in_one_line():
    import transformers

    from pmask.perturb.testing.zoo import ARCHITECTURES

    for arch in ARCHITECTURES.values():   # configs only: no model is built
        assert detect_family(getattr(transformers, arch.config)()) is MODEL_FAMILIES["masked"], arch.config
    assert detect_family(transformers.BertConfig(is_decoder=True)) is not MODEL_FAMILIES["masked"]
    message = unrecognised("my/model", SimpleNamespace(model_type="made-up"))
    assert message.startswith("model 'my/model' (type 'made-up') is of no model family pmask runs; pmask needs ")
    assert all(f.accepts in message for f in MODEL_FAMILIES.values()) and "\n" not in message


def test_a_refusal_names_what_the_family_takes():
    narrow = _family("narrow", lambda config: False, probes=("pair",), metrics=("dist", "cos"), units=("word",))
    assert narrow.refusal("pair", "dist", "word") is None and narrow.supports("pair", None, None)
    assert narrow.refusal("single", None, None) == f"narrow models take probe pair, not single ({narrow.description})"
    assert narrow.refusal("pair", "prob", None).startswith("narrow models take metric dist or cos, not prob")
    assert narrow.refusal(None, None, "edu").startswith("narrow models take unit word, not edu")
    assert narrow.default_decoder("dependency") is None
    own = _family("own", lambda config: False, decoders={"dependency": "mst"}, metric_jobs={"cpmi": int})
    assert own.default_decoder("dependency") == "mst" and own.job("cpmi", str) is int and own.job("dist", str) is str


# ---------------------------------------------------------------------------- a new family by its entry alone

def test_a_new_family_is_recognised_loaded_and_run_through_its_own_encoder(tiny_bert_dir, tmp_path):
    from pmask.perturb.encoders import masked
    from pmask.perturb.engine.runner import impact_matrices
    from pmask.perturb.models.config import model_family
    from pmask.perturb.models.load import load_model
    from pmask.perturb.probes.support import check_support

    folder = tmp_path / "marked"
    shutil.copytree(tiny_bert_dir, folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "pmask_marked": True}))
    made = []

    def encoder(lm, fast):
        made.append(fast)
        return masked.encoder(lm, fast)

    marked = ModelFamily("marked", "a test's family: BERT configs marked pmask_marked", precedence=0,
                         recognises=lambda config: getattr(config, "pmask_marked", False),
                         loader="AutoModelForMaskedLM", noun="marked model", accepts="a marked config",
                         hides="the mask token", inspect=masked.inspect, encoder=encoder, probes=("pair",))
    words = [["She", "walked", "home", "."]]
    with MODEL_FAMILIES.registered(marked):
        model_family_is_whole(marked)   # its kind's contract (it lives in this test, not in perturb/encoders/)
        assert model_family(str(folder)) is marked and model_family(str(tiny_bert_dir)).name == "masked"
        lm = load_model(str(folder), device="cpu", dtype="float64")
        assert lm.family is marked and type(lm.model).__name__ == "BertForMaskedLM"
        got = next(impact_matrices(lm, words, layers=[1, 2], metric="dist", subword="avg", tokenize="words"))
        assert made == [None]
        with pytest.raises(ModelError) as info:
            check_support(lm, "single", "dist", subword="avg")
        assert str(info.value) == (
            f"model {lm.name!r}: marked models take probe pair, not single ({marked.description})")
    plain = load_model(str(tiny_bert_dir), device="cpu", dtype="float64")
    want = next(impact_matrices(plain, words, layers=[1, 2], metric="dist", subword="avg", tokenize="words"))
    np.testing.assert_array_equal(got, want)
    assert model_family(str(folder)).name == "masked"   # unregistered again: the broader family takes it
