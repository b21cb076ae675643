"""The seq2seq family (BART) against naive references: one forward of the model's own per masked input.

A tiny random BART (``make_tiny_llm("bart")``) loads as ``seq2seq`` and runs the masked LM's sequences:
``cpmi`` (pieces k… of word i masked, and all of word j, the original piece read from the decoder's logits
at its position, the decoder fed the masked input shifted right), ``prob`` (the same read, word i and word j
masked) and ``dist`` on the encoder's hidden states equal a computation written here.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from family_impacts import impacts

from pmask.common.errors import ModelError
from pmask.common.model_families import MODEL_FAMILIES
from pmask.perturb.models.load import load_model
from pmask.perturb.testing.llm_zoo import make_tiny_llm

WORDS = ["The", "committee", "unexpectedly", "approved", "it", "."]


@pytest.fixture(scope="module")
def bart(tmp_path_factory):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield load_model(str(make_tiny_llm("bart", tmp_path_factory.mktemp("bart"))), device="cpu", dtype="float64")
    torch.set_num_threads(threads)


def layout(lm):
    enc = lm.tokenizer(WORDS, is_split_into_words=True)
    return torch.tensor(enc["input_ids"]), [[t for t, w in enumerate(enc.word_ids()) if w == k]
                                            for k in range(len(WORDS))]


def run(lm, ids):
    """The model's own forward on the masked input alone: logits [T, V], encoder states [L+1][T, D]."""
    with torch.no_grad():
        out = lm.model(input_ids=ids[None], output_hidden_states=True)
    return out.logits[0], [h[0] for h in out.encoder_hidden_states]


def masked(lm, ids, positions):
    x = ids.clone()
    x[positions] = lm.tokenizer.mask_token_id
    return x


def test_bart_is_seq2seq_and_its_cpmi_is_the_naive_one(bart):
    assert bart.family is MODEL_FAMILIES["seq2seq"] and bart.describe()["family"] == "seq2seq"
    ids, pieces = layout(bart)
    assert max(len(p) for p in pieces) > 1
    n = len(WORDS)
    log_p = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            for k, p in enumerate(pieces[i]):
                hidden = pieces[i][k:] + (pieces[j] if j != i else [])
                logits, _ = run(bart, masked(bart, ids, hidden))
                log_p[i, j] += float(torch.log_softmax(logits[p], -1)[ids[p]])
    want = np.diag(log_p)[:, None] - log_p
    F = next(impacts(bart, [WORDS], layers=[-1], metric="cpmi", batch_tokens=29))[0]
    np.testing.assert_allclose(F, want, rtol=1e-6, atol=1e-6 * np.abs(want).max())
    assert np.abs(np.triu(want, 1)).max() > 1e-3            # both sides: an encoder-decoder reads the whole input


def test_prob_and_dist_are_the_naive_ones(bart):
    ids, pieces = layout(bart)
    n = len(WORDS)
    want_prob, want_dist = np.zeros((n, n)), np.zeros((n, n))
    for i in range(n):
        logits_i, states_i = run(bart, masked(bart, ids, pieces[i]))
        for j in range(n):
            if j == i:
                continue
            logits_ij, states_ij = run(bart, masked(bart, ids, pieces[i] + pieces[j]))
            p = pieces[i]
            prob_i = torch.softmax(logits_i[p], -1)[torch.arange(len(p)), ids[p]]
            prob_ij = torch.softmax(logits_ij[p], -1)[torch.arange(len(p)), ids[p]]
            want_prob[i, j] = float((prob_i - prob_ij).mean())
            want_dist[i, j] = float(torch.linalg.vector_norm(states_i[1][p] - states_ij[1][p], dim=-1).mean())
    prob = next(impacts(bart, [WORDS], layers=[-1], metric="prob"))[0]
    np.testing.assert_allclose(prob, want_prob, rtol=1e-6, atol=1e-6 * np.abs(want_prob).max())
    dist = next(impacts(bart, [WORDS], layers=[1], metric="dist"))[0]
    np.testing.assert_allclose(dist, want_dist, rtol=1e-6, atol=1e-6 * np.abs(want_dist).max())


def test_log_probabilities_at_the_last_layer_only(bart):
    with pytest.raises(ModelError, match="last layer"):
        next(impacts(bart, [WORDS], layers=[1], metric="prob"))
