"""The permutation family (XLNet) against a naive reference: one forward per (word j, word i, piece k).

A tiny random XLNet (``make_tiny_llm("xlnet")``) loads as ``permutation``; its ``cpmi`` is Hoover et al.'s
XLNet reading, written here: pieces k… of word i and all of word j (j ≠ i) replaced by the mask token and
masked from every position by the permutation mask, piece k predicted through the target mapping, one
model call per input, in float32 (and in float64: transformers computes XLNet's relative positions in float32
whatever the model's dtype, which pmask casts).
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from family_impacts import impacts

from pmask.common.errors import ModelError
from pmask.common.model_families import MODEL_FAMILIES
from pmask.perturb.engine.stats import ImpactStats
from pmask.perturb.models.load import load_model
from pmask.perturb.testing.llm_zoo import make_tiny_llm

SENTS = [["The", "committee", "unexpectedly", "approved", "it", "."], ["She", "walked", "home", "."]]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return make_tiny_llm("xlnet", tmp_path_factory.mktemp("xlnet"))


@pytest.fixture(scope="module")
def xlnet(folder):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield load_model(str(folder), device="cpu", dtype="float32")
    torch.set_num_threads(threads)


def naive_cpmi(lm, words):
    enc = lm.tokenizer(words, is_split_into_words=True)
    ids = torch.tensor(enc["input_ids"])
    pieces = [[t for t, w in enumerate(enc.word_ids()) if w == k] for k in range(len(words))]
    n, T = len(words), len(ids)
    log_p = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            for k, p in enumerate(pieces[i]):
                hidden = pieces[i][k:] + (pieces[j] if j != i else [])
                x = ids.clone()
                x[hidden] = lm.tokenizer.mask_token_id
                perm = torch.zeros(1, T, T, dtype=lm.dtype)
                perm[0, :, hidden] = 1.0
                target = torch.zeros(1, 1, T, dtype=lm.dtype)
                target[0, 0, p] = 1.0
                with torch.no_grad():
                    logits = lm.model(input_ids=x[None], perm_mask=perm, target_mapping=target).logits[0, 0]
                log_p[i, j] += float(torch.log_softmax(logits.double(), -1)[ids[p]])
    return np.diag(log_p)[:, None] - log_p


def test_xlnet_is_permutation_and_its_cpmi_is_the_naive_one(xlnet):
    assert xlnet.family is MODEL_FAMILIES["permutation"] and xlnet.describe()["family"] == "permutation"
    assert xlnet.tokenizer(["a"], is_split_into_words=True)["input_ids"][-2:] == [xlnet.tokenizer.sep_token_id,
                                                                                 xlnet.tokenizer.cls_token_id]
    stats = ImpactStats()
    got = list(impacts(xlnet, SENTS, layers=[-1], metric="cpmi", batch_tokens=53, stats=stats))
    for words, F in zip(SENTS, got):
        want = naive_cpmi(xlnet, words)
        scale = np.abs(want).max()
        assert scale > 1e-3
        np.testing.assert_allclose(F[0], want, rtol=1e-4, atol=2e-5 * scale, err_msg=str(words))
    # 1 + n + n(n-1)/2 + (P - n)·n sequences: a row with words i and j hidden serves F[i, j] and F[j, i]
    counts = [[len([w for w in xlnet.tokenizer(words, is_split_into_words=True).word_ids() if w == k])
               for k in range(len(words))] for words in SENTS]
    assert stats.forward_sequences == sum(n + n * (n - 1) // 2 + (sum(c) - n) * n
                                          for c, n in ((c, len(c)) for c in counts))


def test_batch_size_changes_nothing(xlnet):
    a, b = (list(impacts(xlnet, SENTS, layers=[-1], metric="cpmi", batch_tokens=t)) for t in (1, 4096))
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-5)


def test_float64_and_other_metrics(folder, xlnet):
    from pmask.perturb.probes.support import check_support

    double = load_model(str(folder), device="cpu", dtype="float64")
    F = next(impacts(double, SENTS[1:], metric="cpmi"))[0]
    want = naive_cpmi(double, SENTS[1])
    np.testing.assert_allclose(F, want, rtol=1e-7, atol=1e-9)
    with pytest.raises(ModelError, match="permutation models take metric cpmi, not dist"):
        check_support(xlnet, "pair", "dist", subword="avg")
