"""Every probe against a naive reference written from its definition (``naive_probes.Naive``).

Checked at every layer, on BERT and RoBERTa (fast path) and ALBERT (generic path, SDPA by
default, so the eager switch is exercised), in float64 like the engine's tests.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from resolved import impact_of

from pmask.common.errors import LayerError, ModelError, SettingError
from pmask.perturb.alignment import align
from pmask.perturb.engine.stats import ImpactStats
from pmask.perturb.models.load import load_model
from pmask.perturb.probes import probe_matrices, sequences_per_sentence
from pmask.perturb.probes.support import attention_path, check_support

from naive_probes import Naive

RTOL, ATOL = 1e-5, 1e-6
SENTS = [
    ["The", "new", "spending", "is", "fueled", "by", "Clinton", "'s", "account", "."],
    ["She", "walked", "home", "."],
    ["He", "said", "the", "decision", "was", "unbelievable", "."],
]


@pytest.fixture(scope="module")
def bert(tiny_bert_dir):
    return load_model(tiny_bert_dir, device="cpu", dtype="float64")


@pytest.fixture(scope="module")
def roberta(tiny_roberta_dir):
    return load_model(tiny_roberta_dir, device="cpu", dtype="float64")


@pytest.fixture(scope="module")
def albert(tmp_path_factory):
    from pmask.perturb.testing.zoo import make_tiny_architecture, training_texts

    path = make_tiny_architecture("albert", tmp_path_factory.mktemp("albert"), training_texts())
    return load_model(str(path), device="cpu", dtype="float64")


@pytest.fixture(scope="module", params=["bert", "roberta", "albert"])
def lm(request):
    return request.getfixturevalue(request.param)


def sentences_for(lm):
    """The test sentences (ALBERT's tokenizer was trained on PUD: its own short sentences)."""
    if lm.model_type != "albert":
        return SENTS
    from pmask.perturb.testing.zoo import training_texts

    return [w for w in training_texts() if 4 <= len(w) <= 9][:3]


def assert_close(got, want, what):
    scale = max(np.abs(want).max(), 1e-12)
    assert scale > 1e-6, f"{what}: the tiny model gives visibly different values"
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL * scale, err_msg=what)


# ----------------------------------------------------------------------------- agreement

@pytest.mark.parametrize("metric", ["dist", "cos", "prob"])
def test_single_matches_the_naive_reference(lm, metric):
    layers = list(range(lm.num_layers + 1))
    sents = sentences_for(lm)
    got = list(probe_matrices(lm, sents, impact_of("single", metric=metric), layers=layers, batch_tokens=97))
    for words, F in zip(sents, got):
        want = Naive(lm, words).single(metric, layers)
        assert F.shape == (len(layers), len(words), len(words)) and F.dtype == np.float32
        assert_close(F[1:], want[1:], f"{lm.model_type} single {metric} {words}")
        if metric != "prob":     # masking j cannot change the embedding at i
            assert np.abs(F[0]).max() < 1e-9


def test_attention_matches_the_naive_reference(lm):
    layers = list(range(1, lm.num_layers + 1))
    sents = sentences_for(lm)
    got = list(probe_matrices(lm, sents, impact_of("attention"), layers=layers, batch_tokens=50))
    for words, F in zip(sents, got):
        want = Naive(lm, words).attention(layers)
        assert F.shape == want.shape == (len(layers), lm.model.config.num_attention_heads, len(words), len(words))
        assert_close(F, want, f"{lm.model_type} attention {words}")


@pytest.mark.parametrize("metric", ["l2", "l1", "cos", "jsd", "hellinger"])
def test_distance_matches_the_naive_reference(lm, metric):
    heads = metric in ("jsd", "hellinger")
    layers = list(range(0 if not heads else 1, lm.num_layers + 1))
    sents = sentences_for(lm)
    got = list(probe_matrices(lm, sents, impact_of("distance", metric=metric), layers=layers, batch_tokens=50))
    for words, F in zip(sents, got):
        want = Naive(lm, words).distance(metric, layers)
        assert F.shape == want.shape
        assert_close(F, want, f"{lm.model_type} distance {metric} {words}")
        np.testing.assert_allclose(F, np.swapaxes(F, -1, -2), rtol=1e-6, atol=1e-7)   # a distance is symmetric


def test_the_one_pass_probes_use_the_fast_path_where_there_is_one(lm):
    stats = ImpactStats()
    list(probe_matrices(lm, SENTS[:1], impact_of("attention"), layers=[1], stats=stats))
    assert stats.fast_path == (lm.model_type != "albert")
    assert attention_path(lm) == ("generic" if lm.model_type == "albert" else "fast")


@pytest.mark.parametrize("family", ["bert", "roberta"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fast_path_attention_equals_the_models_own_output_attentions(family, dtype, request):
    from pmask.perturb.encoders.batch import pack
    from pmask.perturb.encoders.bert import BertFamilyEncoder

    lm = load_model(request.getfixturevalue(f"tiny_{family}_dir"), device="cpu", dtype=dtype)
    rows = [align(lm.tokenizer, w).input_ids for w in (SENTS[1], SENTS[1], SENTS[0])]   # two segments
    lengths = np.array([len(r) for r in rows])
    batch = pack(np.concatenate(rows), lengths, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), lm.device)
    layers = list(range(1, lm.num_layers + 1))
    paths = lm.paths()
    with torch.inference_mode():
        fast = BertFamilyEncoder(lm.model, paths.head, lm.num_layers, lm.name, paths.fast_family).attentions(batch,
                                                                                                               layers)
    lm.model.set_attn_implementation("eager")
    own = []
    for ids in rows:
        with torch.no_grad():
            own.append(torch.stack(lm.model(input_ids=torch.tensor([ids]), output_attentions=True).attentions, 1)[0])
    got = [r for seg in fast for r in seg]
    tol = 1e-12 if dtype == "float64" else 1e-4   # float32: the load-time check's tolerance (rounding only)
    for g, o in zip(got, own):
        assert g.shape == o.shape
        assert float((g - o).abs().max()) <= tol


# ----------------------------------------------------------------------------- batching, layouts, costs

@pytest.mark.parametrize("probe,metric", [("single", "dist"), ("single", "prob"), ("attention", "weight"),
                                          ("distance", "l2"), ("distance", "jsd")])
def test_every_batch_size_gives_the_same_numbers(bert, probe, metric):
    layers = [1, 3]
    want = list(probe_matrices(bert, SENTS, impact_of(probe, metric=metric), layers=layers, batch_tokens=10**6))
    for budget in (1, 17, 64):
        stats = ImpactStats()
        got = list(probe_matrices(bert, SENTS, impact_of(probe, metric=metric), layers=layers, batch_tokens=budget,
                                  stats=stats))
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)
        if budget == 1:
            assert stats.batches == stats.forward_sequences


@pytest.mark.parametrize("probe", ["pair", "single", "attention", "distance"])
def test_sequence_counts_are_the_documented_costs(bert, probe):
    stats = ImpactStats()
    list(probe_matrices(bert, SENTS, impact_of(probe), layers=[2], include_cls=True, stats=stats))
    assert stats.forward_sequences == sum(sequences_per_sentence(probe, len(w)) for w in SENTS)
    assert {"pair": 1 + 10 + 45, "single": 11, "attention": 1, "distance": 1}[probe] == \
        sequences_per_sentence(probe, 10)


@pytest.mark.parametrize("probe,metric", [("single", "dist"), ("attention", "weight"), ("distance", "cos"),
                                          ("distance", "hellinger")])
def test_include_cls_layout_adds_the_special_token_as_index_0(bert, probe, metric):
    plain = list(probe_matrices(bert, SENTS, impact_of(probe, metric=metric), layers=[2]))
    with_cls = list(probe_matrices(bert, SENTS, impact_of(probe, metric=metric), layers=[2], include_cls=True))
    for P, C, words in zip(plain, with_cls, SENTS):
        assert C.shape[-1] == len(words) + 1
        np.testing.assert_allclose(C[..., 1:, 1:], P, rtol=RTOL, atol=ATOL)
        assert np.all(np.diagonal(C, axis1=-2, axis2=-1) == 0)
    if probe == "single":   # the special token is never masked
        assert all(np.all(C[..., :, 0] == 0) for C in with_cls)


def test_too_long_sentences_are_skipped_by_every_probe(bert):
    long = ["the"] * 70
    for probe in ("single", "attention", "distance"):
        stats = ImpactStats()
        got = list(probe_matrices(bert, [SENTS[1], long, SENTS[2]], impact_of(probe), layers=[1], stats=stats))
        assert got[1] is None and got[0] is not None and got[2] is not None
        assert stats.skipped_indices == [1]


# ----------------------------------------------------------------------------- refusals

def test_layer_0_has_no_attention(bert):
    with pytest.raises(LayerError, match="layer 0"):
        next(probe_matrices(bert, SENTS, impact_of("attention"), layers=[0, 1]))
    with pytest.raises(LayerError, match="layer 0"):
        next(probe_matrices(bert, SENTS, impact_of("distance", metric="jsd"), layers=[0]))


@pytest.mark.parametrize("probe,metric,subword,head,match", [
    ("attention", "dist", "avg", None, "probe attention takes metric weight, not dist"),
    ("pair", "l2", "avg", None, "probe pair takes metric dist or cos or prob or cpmi, not l2"),
    ("distance", "prob", "avg", None, "probe distance takes metric l2 or l1 or cos or jsd or hellinger"),
    ("distance", "l2", "max", None, "takes subword avg or first, not max"),
    ("attention", "weight", "first", None, "takes subword avg, not first"),
    ("single", "dist", "avg", 1, "head applies to probe attention"),
])
def test_settings_a_probe_does_not_take_are_refused_in_one_line(bert, probe, metric, subword, head, match):
    with pytest.raises(SettingError) as err:
        check_support(bert, probe, metric, subword=subword, head=head)
    assert match in str(err.value) and "\n" not in str(err.value)


def test_a_head_the_model_lacks_is_refused(bert):
    with pytest.raises(SettingError, match="head 2 does not exist: the model has 2 heads"):
        check_support(bert, "attention", "weight", subword="avg", head=2)


def test_a_model_without_attention_weights_is_refused_at_load(tiny_bert_dir, monkeypatch):
    lm = load_model(tiny_bert_dir, device="cpu")
    forward = lm.model.bert.forward

    def no_attentions(*args, **kwargs):
        out = forward(*args, **kwargs)
        out.attentions = None
        return out

    monkeypatch.setattr(lm.model.bert, "forward", no_attentions)
    with pytest.raises(ModelError, match="returns no attention weights") as err:
        check_support(lm, "distance", "jsd", layers=[1], subword="avg")
    assert "\n" not in str(err.value)
    check_support(lm, "distance", "l2", layers=[1], subword="avg")   # hidden states need no attention weights


def test_prob_without_an_mlm_head_is_refused_at_load(bert):
    from dataclasses import replace

    paths = bert.paths()
    bert.encoder_paths = replace(paths, head=None, fast_family=None)
    try:
        with pytest.raises(ModelError, match="metric 'prob'"):
            check_support(bert, "single", "prob", layers=[1], subword="avg")
        check_support(bert, "single", "prob", layers=[-1], subword="avg")   # the model's logits serve the last layer
    finally:
        bert.encoder_paths = paths


def test_pmask_parse_takes_a_probe_and_a_head(bert):
    import pmask
    from pmask.trees.registry import decode_dependencies

    words = SENTS[0]
    got = pmask.parse([words], model=bert, probe="attention", head=1, layer=2, decoder="eisner", root="free")
    F = Naive(bert, words).attention([2])[0, 1]
    np.testing.assert_allclose(got[0].F, F, rtol=RTOL, atol=ATOL)
    assert got[0].heads.tolist() == decode_dependencies("eisner", len(words), F=F).tolist()
    tree = pmask.parse([words], model=bert, probe="distance", decoder="distance-split", bias=0.5)[0].tree
    assert tree.leaves() == words


@pytest.mark.parametrize("family", ["electra", "distilbert", "xlm-roberta"])
def test_every_fast_path_family_passes_the_attention_check(family, tmp_path):
    """The check at load compares the fast path's attention with the model's own output_attentions at every
    layer; these families (and bert, roberta above) pass it, so their attention runs on the fast path."""
    from pmask.perturb.testing.zoo import make_tiny_architecture, training_texts

    lm = load_model(str(make_tiny_architecture(family, tmp_path / family, training_texts())), device="cpu")
    assert lm.paths().fast_family is not None and attention_path(lm) == "fast"
