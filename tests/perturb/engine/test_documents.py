"""The pair probe over EDUs against a naive reference written from the definition (Wu et al.'s discourse
probe): every input built as a token string, run one at a time in float64, each EDU the mean of its pieces'
states, F[i][j] = ||h_i(mask i) - h_i(mask i, j)|| (and 1 - cos)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pmask.common.errors import PmaskError
from pmask.corpora import Sentence
from pmask.perturb.engine.runner import ImpactStats, impact_matrices
from pmask.perturb.models.load import load_model
from pmask.perturb.testing import make_tiny_bert

EDUS = [["The cat sat", "on the mat .", "It was warm ."],
        ["A dog ran", "because the cat sat", "on the mat", "and it was warm ."]]


@pytest.fixture(scope="module")
def doc_lm(tmp_path_factory):
    words = ["the", "cat", "sat", "on", "mat", "it", "was", "warm", "a", "dog", "ran", "because", "and", ".", ","]
    path = make_tiny_bert(tmp_path_factory.mktemp("docbert"), words, max_positions=40, seed=3)
    return load_model(str(path), device="cpu", dtype="float64")


def _docs():
    return [Sentence(id=f"d{k}", words=edus, unit="edu") for k, edus in enumerate(EDUS)]


def naive(lm, edus, include_cls, metric="dist"):
    """[L, U, U] from strings: '[CLS]' + each EDU's pieces (all [MASK] when masked) + '[SEP]'."""
    tok = lm.tokenizer
    pieces = [["[CLS]"]] * include_cls + [tok.tokenize(e) for e in edus]
    units = len(pieces)

    def states(masked):
        tokens = [] if include_cls else ["[CLS]"]
        spans = []
        for u, p in enumerate(pieces):
            spans.append((len(tokens), len(tokens) + len(p)))
            tokens += ["[MASK]"] * len(p) if u in masked else p
        ids = torch.tensor([tok.convert_tokens_to_ids(tokens + ["[SEP]"])])
        with torch.no_grad():
            hidden = lm.model(input_ids=ids, output_hidden_states=True).hidden_states
        return [np.stack([h[0, a:b].double().numpy().mean(axis=0) for a, b in spans]) for h in hidden[1:]]

    F = np.zeros((lm.num_layers, units, units))
    for i in range(units):
        base = states({i})
        for j in range(units):
            if j == i:
                continue
            cur = states({i, j})
            for layer in range(lm.num_layers):
                a, b = base[layer][i], cur[layer][i]
                F[layer, i, j] = (np.linalg.norm(a - b) if metric == "dist"
                                  else 1 - a @ b / np.linalg.norm(a) / np.linalg.norm(b))
    return F


@pytest.mark.parametrize("include_cls, metric", [(False, "dist"), (True, "dist"), (True, "cos")])
def test_equals_naive_reference(doc_lm, include_cls, metric):
    stats = ImpactStats()
    got = list(impact_matrices(doc_lm, _docs(), layers="all", metric=metric, include_cls=include_cls,
                               batch_tokens=64, stats=stats, subword="avg", tokenize="words"))
    units = [len(e) + include_cls for e in EDUS]
    assert stats.forward_sequences == sum(u * (u + 1) // 2 for u in units)
    for F, edus, u in zip(got, EDUS, units):
        want = naive(doc_lm, edus, include_cls, metric)
        assert F.shape == (doc_lm.num_layers, u, u)
        np.testing.assert_allclose(F, want, rtol=1e-5, atol=1e-6)   # float64 engine, float32 result
        assert np.mean(want[:, ~np.eye(u, dtype=bool)] > 1e-5) > 0.9   # the probe sees something


def test_batch_size_invariance_and_edu_block(doc_lm):
    small = list(impact_matrices(doc_lm, _docs(), layers="all", include_cls=True, batch_tokens=20, metric="dist",
                                 subword="avg", tokenize="words"))
    large = list(impact_matrices(doc_lm, _docs(), layers="all", include_cls=False, batch_tokens=4096, metric="dist",
                                 subword="avg", tokenize="words"))
    for a, b in zip(small, large):
        np.testing.assert_allclose(a[:, 1:, 1:], b, rtol=1e-6, atol=1e-9)


def test_long_documents_refused_before_model_work(doc_lm):
    docs = _docs() + [Sentence(id="long", words=["the cat sat on the mat"] * 8, unit="edu")]
    stats = ImpactStats()
    with pytest.raises(PmaskError, match=r"^1 document exceeds the 40 positions of .*: long \(50 pieces\); pmask "
                                         r"never truncates"):
        list(impact_matrices(doc_lm, iter(docs), stats=stats, metric="dist", subword="avg", tokenize="words"))
    assert stats.forward_sequences == 0


@pytest.mark.parametrize("metric, subword", [("prob", "avg"), ("dist", "first")])
def test_settings_that_do_not_pool_are_refused(doc_lm, metric, subword):
    with pytest.raises(PmaskError, match="documents of EDUs"):
        list(impact_matrices(doc_lm, _docs(), metric=metric, subword=subword, tokenize="words"))


def test_a_new_metric_reaches_documents_by_its_entry_alone(doc_lm):
    """The metric recipe for documents (issue 46 item 4): one entry with its computation (dist's, halved; every
    other field as dist's: it pools), named in probe pair's metrics, and nowhere else (documents took the list
    DOCUMENT_METRICS before: "documents of EDUs take metric dist or cos")."""
    import dataclasses

    from pmask.common.probe_entries import METRIC_ENTRIES, PROBE_ENTRIES

    half = dataclasses.replace(METRIC_ENTRIES["dist"], name="halfdist", description="half of dist",
                               compare=lambda base, current: torch.linalg.vector_norm(base - current, dim=-1) / 2)
    pair = PROBE_ENTRIES["pair"]
    with METRIC_ENTRIES.registered(half), PROBE_ENTRIES.registered(
            dataclasses.replace(pair, metrics=(*pair.metrics, "halfdist"))):
        got = list(impact_matrices(doc_lm, _docs(), layers="all", metric="halfdist", subword="avg", tokenize="words",
                                   batch_tokens=64))
    for F, edus in zip(got, EDUS):
        np.testing.assert_allclose(F, naive(doc_lm, edus, False) / 2, rtol=1e-5, atol=1e-6)
