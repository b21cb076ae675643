"""Model loading: local directories, random initialisation, devices, dtypes, errors."""
from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import torch

from pmask.cli import main
from pmask.common.errors import ModelError
from pmask.perturb.models.load import RANDOM_SEED, LoadedModel, load_model


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
    from pmask.perturb.testing import make_tiny_bert

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
    assert load_model(tiny_bert_dir, device="cpu", dtype="auto").dtype == torch.float32
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
    from transformers import AutoTokenizer, DistilBertConfig, DistilBertForMaskedLM, ElectraConfig, ElectraForMaskedLM

    from pmask.perturb.engine.runner import impact_matrices
    from pmask.perturb.engine.stats import ImpactStats

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
        fast = list(impact_matrices(lm, sents, layers=[0, 1, 2], metric=metric, stats=fast_stats, subword="avg",
                                    tokenize="words"))
        gen = list(impact_matrices(lm, sents, layers=[0, 1, 2], metric=metric, fast_path=False, stats=gen_stats,
                                   subword="avg", tokenize="words"))
        assert fast_stats.fast_path and not gen_stats.fast_path
        for a, b in zip(fast, gen):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
            assert np.abs(a[-1]).max() > 0


def test_model_of_no_family_is_refused(tmp_path, tiny_bert_dir):
    """T5: an encoder-decoder without a mask token (sentinels), in no family's reach."""
    from transformers import T5Config

    T5Config(num_layers=1, d_model=16, num_heads=2, vocab_size=50).save_pretrained(tmp_path)
    with pytest.raises(ModelError, match="of no model family pmask runs") as info:
        load_model(str(tmp_path), device="cpu")
    assert str(tmp_path) in str(info.value) and "\n" not in str(info.value)


def test_remote_code_model_is_refused(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "my-own-lm", "auto_map": {
        "AutoConfig": "configuration_mine.MyConfig", "AutoModelForMaskedLM": "modeling_mine.MyLM"}}))
    with pytest.raises(ModelError, match="trust_remote_code"):
        load_model(str(tmp_path), device="cpu")


def test_tokenizer_without_mask_token_is_refused(tmp_path, tiny_bert_dir):
    import shutil

    for f in tiny_bert_dir.iterdir():
        shutil.copy(f, tmp_path / f.name)
    cfg = json.loads((tmp_path / "tokenizer_config.json").read_text())
    cfg["mask_token"] = None
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(cfg))
    with pytest.raises(ModelError, match="no mask token"):
        load_model(str(tmp_path), device="cpu")


def test_offline_hub_fails_fast_with_one_line(monkeypatch):
    import time

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    started = time.perf_counter()
    with pytest.raises(ModelError) as info:
        load_model("pmask-test/no-such-model-anywhere", device="cpu")
    msg = str(info.value)
    assert "cannot be reached" in msg and "local directory" in msg and "\n" not in msg
    assert time.perf_counter() - started < 30    # no network retries (generous: shared CPU)


def test_fast_path_that_disagrees_falls_back_to_generic(tiny_bert_dir, monkeypatch, caplog):
    """The fast path is verified on a probe sentence at load time; a wrong one is not used."""

    from pmask.perturb.encoders.bert import BertFamilyEncoder

    real = BertFamilyEncoder._bert_tail
    monkeypatch.setattr(BertFamilyEncoder, "_bert_tail", lambda self, *a: real(self, *a) * 1.01)
    with caplog.at_level(logging.INFO, logger="pmask.perturb.encoders.select"):
        lm = load_model(tiny_bert_dir, device="cpu")
    assert lm.paths().fast_family is None and "using the generic path" in caplog.text


def test_modernbert_style_tokenizer_gets_prefix_spaces(tmp_path):
    """A ByteLevel backend whose wrapper claims add_prefix_space but ignores it is fixed at load."""
    from pmask.perturb.models.tokenizer import check_words_match_text, configure_for_words
    from pmask.perturb.testing.zoo import build_tokenizer, training_texts

    tok = build_tokenizer("bbpe-noprefix", tmp_path, training_texts(60))
    words = ["The", "cat", "sat"]
    with pytest.raises(ModelError, match="differently from running text"):
        check_words_match_text(tok, "x", words)
    configure_for_words(tok)
    check_words_match_text(tok, "x", words)
    enc = tok(words, is_split_into_words=True, add_special_tokens=False)
    pieces = tok.convert_ids_to_tokens(enc["input_ids"])
    firsts = [pieces[enc.word_ids().index(k)] for k in range(len(words))]
    assert all(p.startswith("Ġ") for p in firsts)     # every word, not only the first, has its space marker


def test_threads_setting(tiny_bert_dir):
    from pmask.perturb.models.load import set_threads

    before = torch.get_num_threads()
    try:
        lm = load_model(tiny_bert_dir, device="cpu", threads=1)
        assert torch.get_num_threads() == 1 and lm.threads == 1
        for bad in (0, -2, 1.5, True):
            with pytest.raises(ModelError, match="threads"):
                set_threads(bad)
    finally:
        torch.set_num_threads(before)


DATA = Path(__file__).resolve().parents[2] / "data"


def test_a_model_folder_without_config_json_says_so(tmp_path, capsys):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "vocab.txt").write_text("[PAD]\n", encoding="utf-8")
    assert main(["parse", str(DATA / "mini.conllu"), "--model", str(folder), "-o", str(tmp_path / "p.conllu"),
                 "-q"]) == 1
    err = capsys.readouterr().err
    assert "has no config.json" in err and "model_type" not in err
