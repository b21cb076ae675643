"""Metric cpmi (Hoover et al. 2021) against a naive reference written for these tests, independent of the engine:
one full model call per (word i, word j or none, piece k of i), the model's own logits, log-softmax at piece k."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pmask.common.errors import CorpusError, SettingError
from pmask.common.options import check_probe
from pmask.corpora import Sentence
from pmask.perturb.alignment import align_sentence, ptb_align
from pmask.perturb.alignment.neighbours import add_context, padding_indices
from pmask.perturb.alignment.subword_lists import bert_pieces as ptb_pieces
from pmask.perturb.engine.runner import impact_matrices
from pmask.perturb.engine.stats import ImpactStats
from pmask.perturb.models.load import load_model
from pmask.perturb.probes.cpmi import cpmi_sequences

SENTENCES = [["the", "unbelievable", "a", "the"], ["unbelievable", "the"],
             ["a", "unbelievable", "unbelievable", "a", "b"], ["the"]]


def naive_cpmi(lm, sentence, tokenize="words"):
    """CPMI[i, j] = log_p[i, i] - log_p[i, j] by the chain rule, one model call per input (their scheme)."""
    al = align_sentence(lm.tokenizer, sentence, tokenize)
    ids = torch.tensor(al.input_ids)
    n = al.n_words
    log_p = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            for k, pos in enumerate(al.pieces(i)):
                x = ids.clone()
                x[al.pieces(i)[k:]] = lm.tokenizer.mask_token_id
                if j != i:
                    x[al.pieces(j)] = lm.tokenizer.mask_token_id
                with torch.no_grad():
                    logits = lm.model(input_ids=x[None]).logits[0, pos].double()
                log_p[i, j] += float(torch.log_softmax(logits, -1)[ids[pos]])
    return np.diag(log_p)[:, None] - log_p


@pytest.fixture(scope="module")
def lm(tiny_bert_dir):
    return load_model(str(tiny_bert_dir), dtype="float64")


@pytest.mark.parametrize("fast_path", [None, False])
def test_cpmi_equals_naive_reference(lm, fast_path):
    got = list(impact_matrices(lm, SENTENCES, layers=[-1], metric="cpmi", fast_path=fast_path, subword="sum",
                               tokenize="words"))
    for sentence, F in zip(SENTENCES, got):
        want = naive_cpmi(lm, sentence)
        assert F.shape == (1, len(sentence), len(sentence))
        np.testing.assert_allclose(F[0], want, atol=1e-5)
        assert len(sentence) == 1 or np.abs(want).max() > 1e-3   # not trivially zero


def test_cpmi_sequences_counted_and_batch_invariant(lm):
    stats = ImpactStats()
    small = list(impact_matrices(lm, SENTENCES, metric="cpmi", batch_tokens=7, stats=stats, include_cls=True,
                                 subword="sum", tokenize="words"))
    big = list(impact_matrices(lm, SENTENCES, metric="cpmi", batch_tokens=4096, include_cls=True, subword="sum",
                               tokenize="words"))
    for a, b in zip(small, big):
        np.testing.assert_allclose(a, b, atol=1e-9)
    pieces = [[len(align_sentence(lm.tokenizer, s, "words").pieces(k)) for k in range(len(s))] for s in SENTENCES]
    assert stats.forward_sequences == sum(cpmi_sequences(p) for p in pieces)
    # single-piece sentences share the pair probe's sequences exactly
    assert cpmi_sequences([1] * 5) == 1 + 5 + 10


def test_cpmi_takes_only_sum():
    check_probe("pair", "cpmi", "sum")
    with pytest.raises(SettingError, match="subword"):
        check_probe("pair", "cpmi", "avg")
    with pytest.raises(SettingError):
        check_probe("single", "cpmi", "sum")


def test_ptb_adjustments():
    tok = {"n't": ["n", "'", "t"], "does": ["does"], "(": ["("]}
    assert ptb_pieces(["does", "n't", "-LRB-"], lambda w: list(tok.get(w, [w]))) == [["doesn"], ["'", "t"], ["("]]
    assert ptb_pieces(["n't"], lambda w: list(tok[w])) == [["n", "'", "t"]]   # first word: left alone


def test_context_layout_and_padding(lm, tmp_path):
    lengths = [3, 4, 10, 2]
    assert padding_indices(lengths, 1, 15) == ([0], [2])
    assert padding_indices(lengths, 0, 3) == ([], [])
    assert padding_indices(lengths, 3, 14) == ([2, 1], []) or padding_indices(lengths, 3, 14) == ([1, 2], [])
    with pytest.raises(CorpusError):
        padding_indices(lengths, 0, 100)
    s = Sentence(id="1", words=["the", "a"], meta={"context": (["b"], ["the"])})
    al = ptb_align(lm.tokenizer, s)
    cls, sep = lm.tokenizer.cls_token_id, lm.tokenizer.sep_token_id
    assert al.input_ids[0] == cls and al.input_ids[2] == sep and al.input_ids[-1] == sep
    assert al.word_index == [-1, -1, -1, 0, 1, -1, -1]
    assert align_sentence(lm.tokenizer, s, "words").input_ids == al.input_ids
    with pytest.raises(CorpusError, match="context"):
        add_context([Sentence(id="x", words=["a"])], 5)


def test_context_words_are_visible_not_scored(lm):
    s = Sentence(id="1", words=["the", "unbelievable", "a"], meta={"context": (["b", "the"], ["a"])})
    F = next(impact_matrices(lm, [s], metric="cpmi", tokenize="words-ptb", subword="sum"))[0]
    np.testing.assert_allclose(F, naive_cpmi(lm, s, "words-ptb"), atol=1e-5)
    plain = next(impact_matrices(lm, [s.words], metric="cpmi", subword="sum", tokenize="words"))[0]
    assert np.abs(F - plain).max() > 1e-4   # the context changes the model's input


# ---------------------------------------------------------------------------- Hoover et al.'s BART and XLM readings

FAMILY_WORDS = ["The", "-LRB-", "committee", "-RRB-", "does", "n't", "approve", ",", "she", "said", "."]


@pytest.mark.parametrize("arch, family", [("bart", "bart"), ("xlm", "xlm")])
@pytest.mark.parametrize("context", [False, True])
def test_faithful_is_their_reading_of_their_class(tmp_path_factory, arch, family, context):
    """``--faithful`` (``words-ptb``) equals ``tests/cpmi_reference.py``'s reading of their ``Bart`` (the decoder's
    prediction, fed the masked input shifted right; ``<s> left sentence right </s>``; their prefix-space rules) and
    ``XLM`` (a masked LM; ``</s> (left </s>) sentence right </s>``) classes, on tiny random models."""
    from types import SimpleNamespace

    from cpmi_reference import authors_cpmi, reference_model

    from pmask.perturb.testing.llm_zoo import make_tiny_llm

    threads = torch.get_num_threads()
    torch.set_num_threads(1)   # tiny models: one thread is fastest on a shared machine
    folder = make_tiny_llm(arch, tmp_path_factory.mktemp(arch))
    lm = load_model(str(folder), device="cpu", dtype="float64")
    left, right = (["It", "was", "late", "."], ["Nobody", "came", "."]) if context else ((), ())
    sentence = SimpleNamespace(words=FAMILY_WORDS, meta={"context": (list(left), list(right))})
    F = next(impact_matrices(lm, [sentence], layers=[-1], metric="cpmi", subword="sum", tokenize="words-ptb"))[0]
    tokenizer, reference = reference_model(family, folder)
    want = authors_cpmi(family, reference, tokenizer, FAMILY_WORDS, left, right)
    scale = np.abs(want).max()
    assert scale > 1e-3
    torch.set_num_threads(threads)
    np.testing.assert_allclose(F, want, rtol=1e-7, atol=1e-7 * scale)
