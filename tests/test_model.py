"""Model loading: local directories, random initialisation, devices, dtypes, errors."""
from __future__ import annotations

import json

import pytest
import torch

from pmask.errors import ModelError
from pmask.perturb import RANDOM_SEED, LoadedModel, load_model


@pytest.fixture(scope="module")
def bert(tiny_bert_dir):
    return load_model(tiny_bert_dir, device="cpu")


def test_load_local(bert):
    assert isinstance(bert, LoadedModel)
    assert bert.num_layers == 3 and bert.max_length == 64
    assert bert.device.type == "cpu" and bert.dtype == torch.float32    # CPU default
    assert not bert.model.training and bert.tokenizer.is_fast
    assert not bert.random_init and bert.seed is None


def test_describe_is_json(bert):
    d = bert.describe()
    json.dumps(d)
    assert d["num_layers"] == 3 and d["dtype"] == "float32" and d["tokenizer"]["do_lower_case"]
    assert d["tokenizer"]["mask_token"] == "[MASK]"


def test_roberta_limits_and_prefix_space(tiny_roberta_dir):
    lm = load_model(tiny_roberta_dir, device="cpu")
    assert lm.max_length == 64                       # 66 positions minus padding_idx + 1
    assert lm.tokenizer.add_prefix_space
    assert lm.describe()["tokenizer"]["add_prefix_space"] is True


def test_random_init(tmp_path):
    from pmask.testing import make_tiny_bert

    trained = make_tiny_bert(tmp_path, seed=RANDOM_SEED + 1)   # stands in for trained weights
    bert = load_model(trained, device="cpu")
    r1 = load_model(f"random:{trained}", device="cpu")
    r2 = load_model(trained, device="cpu", random_init=True)
    assert r1.random_init and r1.seed == RANDOM_SEED and r1.name == str(trained)
    w = lambda lm: lm.model.base_model.encoder.layer[0].attention.self.query.weight  # noqa: E731
    assert torch.equal(w(r1), w(r2))                  # seeded: reproducible
    assert not torch.equal(w(r1), w(bert))            # but not the saved weights
    assert r1.describe()["random_init"] is True


def test_dtypes(tiny_bert_dir):
    assert load_model(tiny_bert_dir, device="cpu", dtype="bfloat16").dtype == torch.bfloat16
    assert load_model(tiny_bert_dir, device="cpu", dtype=torch.float16).dtype == torch.float16
    with pytest.raises(ModelError, match="unsupported dtype"):
        load_model(tiny_bert_dir, device="cpu", dtype="int8")


def test_bad_device(tiny_bert_dir):
    with pytest.raises(ModelError, match="device"):
        load_model(tiny_bert_dir, device="tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ModelError, match="CUDA is not available"):
            load_model(tiny_bert_dir, device="cuda")


def test_missing_model_is_one_line_model_error(tmp_path):
    missing = tmp_path / "no-such-model"
    with pytest.raises(ModelError) as info:
        load_model(str(missing), device="cpu")
    msg = str(info.value)
    assert "no-such-model" in msg and "\n" not in msg


def test_directory_without_weights(tmp_path, tiny_bert_dir):
    import shutil

    d = tmp_path / "noweights"
    d.mkdir()
    for f in tiny_bert_dir.iterdir():
        if not f.name.endswith(".safetensors"):
            shutil.copy(f, d / f.name)
    with pytest.raises(ModelError, match="noweights"):
        load_model(str(d), device="cpu")
    assert load_model(f"random:{d}", device="cpu").random_init


@pytest.mark.parametrize("family", ["distilbert", "electra"])
def test_other_families_fast_path(tmp_path, tiny_bert_dir, family):
    """DistilBERT and ELECTRA-generator layers take the fast path and agree with the generic one."""
    import numpy as np
    from transformers import (AutoTokenizer, DistilBertConfig, DistilBertForMaskedLM, ElectraConfig,
                              ElectraForMaskedLM)

    from pmask.perturb import ImpactStats, impact_matrices

    tok = AutoTokenizer.from_pretrained(tiny_bert_dir)
    torch.manual_seed(0)
    if family == "distilbert":
        model = DistilBertForMaskedLM(DistilBertConfig(vocab_size=len(tok), dim=32, n_layers=2, n_heads=2,
                                                       hidden_dim=64, max_position_embeddings=64,
                                                       initializer_range=0.5))
    else:
        model = ElectraForMaskedLM(ElectraConfig(vocab_size=len(tok), embedding_size=16, hidden_size=32,
                                                 num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                                                 max_position_embeddings=64, initializer_range=0.5))
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    lm = load_model(str(tmp_path), device="cpu", dtype="float64")
    sents = [["She", "walked", "home", "."], ["the", "new", "bank", "account"]]
    for metric in ("dist", "prob"):
        fast_stats, gen_stats = ImpactStats(), ImpactStats()
        fast = list(impact_matrices(lm, sents, layers=[0, 1, 2], metric=metric, stats=fast_stats))
        gen = list(impact_matrices(lm, sents, layers=[0, 1, 2], metric=metric, fast_path=False, stats=gen_stats))
        assert fast_stats.fast_path and not gen_stats.fast_path
        for a, b in zip(fast, gen):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
            assert np.abs(a[-1]).max() > 0
