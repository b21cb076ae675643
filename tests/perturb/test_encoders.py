"""Every supported masked-LM family against a naive reference (one full forward per masked input).

Tiny random 2-layer models of each architecture in ``pmask.perturb.testing.zoo.ARCHITECTURES`` are built once per
session with tokenizers trained here (WordPiece, byte-level BPE, Unigram). For each, pmask's
impacts (dist at every layer, prob at every layer) equal the naive computation to 1e-5
relative in float64; pre-split words tokenise as running text; a too-long sentence is skipped.
"""
from __future__ import annotations

import logging

import numpy as np
import pytest
import torch

from pmask.perturb.engine.runner import impact_matrices
from pmask.perturb.engine.stats import ImpactStats
from pmask.perturb.models.load import load_model
from pmask.perturb.testing.zoo import ARCHITECTURES, make_tiny_architecture, training_texts

RTOL, ATOL = 1e-5, 1e-9
FAST = {"bert", "bert-cased", "roberta", "xlm-roberta", "electra", "distilbert"}


@pytest.fixture(scope="session")
def zoo_texts():
    return training_texts()


@pytest.fixture(scope="session")
def zoo(tmp_path_factory, zoo_texts):
    """name -> float64 LoadedModel, built on first use and cached for the session."""
    base = tmp_path_factory.mktemp("zoo")
    cache: dict = {}

    def get(name: str):
        if name not in cache:
            cache[name] = load_model(str(make_tiny_architecture(name, base / name, zoo_texts)), device="cpu",
                                     dtype="float64")
        return cache[name]

    return get


def short_sentences(texts):
    """Two short sentences (4-8 words) from the training texts, the same for every family."""
    return [w for w in texts if 4 <= len(w) <= 8][:2]


def naive_impacts(lm, words, metric):
    """F[l, i, j] from one full forward of the model per masked input, mean over word i's pieces."""
    model, tok = lm.model, lm.tokenizer
    enc = tok(words, is_split_into_words=True)
    ids = torch.tensor(enc["input_ids"])
    pieces = [[t for t, w in enumerate(enc.word_ids()) if w == k] for k in range(len(words))]
    assert all(pieces), "every test word has a piece"
    cache = {}

    def run(masked):
        key = frozenset(masked)
        if key not in cache:
            x = ids.clone()
            for k in masked:
                x[pieces[k]] = tok.mask_token_id
            with torch.no_grad():
                out = model(input_ids=x[None], output_hidden_states=True)
            hidden = torch.stack(out.hidden_states)[:, 0]                       # [L+1, T, D]
            probs = torch.softmax(out.logits[0], -1)[torch.arange(len(ids)), ids]   # [T] at the last layer
            head = lm.paths().head
            inner = (torch.softmax(head(hidden), -1)[:, torch.arange(len(ids)), ids] if head is not None
                     else torch.full((hidden.shape[0], len(ids)), float("nan"), dtype=hidden.dtype))
            inner[-1] = probs
            cache[key] = hidden, inner
        return cache[key]

    n = len(words)
    F = np.zeros((lm.num_layers + 1, n, n))
    for i in range(n):
        h_i, p_i = run([i])
        for j in range(n):
            if i != j:
                h_ij, p_ij = run([i, j])
                p = pieces[i]
                if metric == "dist":
                    F[:, i, j] = torch.linalg.vector_norm(h_i[:, p] - h_ij[:, p], dim=-1).mean(-1).numpy()
                else:
                    F[:, i, j] = (p_i[:, p] - p_ij[:, p]).mean(-1).numpy()
    return F


@pytest.mark.parametrize("family", list(ARCHITECTURES))
def test_family_matches_naive_reference(zoo, zoo_texts, family, caplog):
    lm = zoo(family)
    sents = short_sentences(zoo_texts)
    layers = list(range(lm.num_layers + 1))
    for words in sents:                          # the tokenizer was configured so that this holds
        split = lm.tokenizer(words, is_split_into_words=True, add_special_tokens=False)["input_ids"]
        assert split == lm.tokenizer(" ".join(words), add_special_tokens=False)["input_ids"]
    too_long = ["word"] * (lm.max_length + 5)
    for metric in ("dist", "prob"):
        stats = ImpactStats()
        with caplog.at_level(logging.WARNING):
            got = list(impact_matrices(lm, sents + [too_long], layers=layers, metric=metric, stats=stats,
                                       batch_tokens=97, subword="avg", tokenize="words"))
        assert got[-1] is None and stats.skipped_indices == [len(sents)]
        assert stats.fast_path == (family in FAST)
        for words, F in zip(sents, got):
            want = naive_impacts(lm, words, metric)
            scale = np.abs(want[1:]).max()
            assert scale > 1e-6, "the tiny model gives visibly different values"
            np.testing.assert_allclose(F, want, rtol=RTOL, atol=RTOL * scale, err_msg=f"{family} {metric} {words}")
    assert "exceed the model maximum" in caplog.text
