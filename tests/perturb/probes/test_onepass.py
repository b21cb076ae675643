"""Probe distance under --faithful (Kim et al. 2020's code): no special tokens, their cos, against a naive reference."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from resolved import impact_of

from pmask.common.errors import SettingError
from pmask.perturb.engine.impact_settings import ImpactSettings
from pmask.perturb.fill.model_spec import ModelSpec
from pmask.perturb.probes import probe_matrices

WORDS = ["He", "said", "the", "decision", "was", "unbelievable", "."]


def faithful(impact: ImpactSettings) -> ImpactSettings:
    """The settings of a ``--faithful`` run (the one resolution: the authors' pipeline, then the defaults)."""
    from pmask.pipeline.request import Decoding, Request, resolve

    return resolve(Request(ModelSpec("a-model", impact=impact), Decoding(faithful=True))).impact


def test_faithful_spec_runs_distance_bare_with_their_cos():
    impact = faithful(ImpactSettings(None, None, None, "distance", 0))
    assert (impact.tokenize, impact.metric) == ("bare", "l2")
    impact = faithful(ImpactSettings("cos", None, None, "distance", 0))
    assert (impact.metric, impact.tokenize) == ("cossim", "bare")
    assert faithful(ImpactSettings(None, None, None, "pair", 0)).tokenize == "words"   # Wu et al.'s fixes none
    with pytest.raises(SettingError, match="bare"):
        ImpactSettings("dist", "avg", "bare", "pair", 0).check()


def test_bare_distances_equal_a_naive_run_without_special_tokens(tiny_bert_dir):
    from transformers import AutoModel, AutoTokenizer

    from pmask.perturb.models.load import load_model

    lm = load_model(str(tiny_bert_dir), device="cpu", dtype="float64")
    tok = AutoTokenizer.from_pretrained(str(tiny_bert_dir))
    model = AutoModel.from_pretrained(str(tiny_bert_dir)).double().eval()
    enc = tok(WORDS, is_split_into_words=True, add_special_tokens=False, return_tensors="pt")
    with torch.no_grad():
        out = model(input_ids=enc["input_ids"], output_hidden_states=True, output_attentions=True)
    owner = np.array(enc.word_ids())
    vectors = torch.stack([out.hidden_states[2][0][owner == k].mean(0) for k in range(len(WORDS))])
    unit = vectors / vectors.norm(dim=-1, keepdim=True)
    want_cos = ((unit @ unit.T + 1) / 2).numpy()
    want_l2 = torch.cdist(vectors, vectors).numpy()
    got_cos = next(probe_matrices(lm, [WORDS], impact_of("distance", metric="cossim", tokenize="bare"), layers=[2]))[0]
    got_l2 = next(probe_matrices(lm, [WORDS], impact_of("distance", metric="l2", tokenize="bare"), layers=[2]))[0]
    off = ~np.eye(len(WORDS), dtype=bool)
    np.testing.assert_allclose(got_cos[off], want_cos[off], rtol=1e-6)
    np.testing.assert_allclose(got_l2[off], want_l2[off], rtol=1e-6)
    with_specials = next(probe_matrices(lm, [WORDS], impact_of("distance", metric="l2"), layers=[2]))[0]
    assert not np.allclose(with_specials[off], want_l2[off], rtol=1e-3)   # the special tokens do change the states
    padded = next(probe_matrices(lm, [WORDS], impact_of("distance", metric="l2", tokenize="bare"), layers=[2],
                                 include_cls=True))[0]
    assert padded.shape == (len(WORDS) + 1,) * 2 and not padded[0].any() and not padded[:, 0].any()
    np.testing.assert_array_equal(padded[1:, 1:], got_l2)
