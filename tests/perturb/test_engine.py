"""The impact engine against a slow, literal re-implementation of the authors' piece-level scheme."""
from __future__ import annotations

import io
import logging
import sys

import numpy as np
import pytest
import torch

from pmask.common.tokenization import TOKENIZE_ENTRIES, TokenizeMode
from pmask.perturb.alignment import align
from pmask.perturb.engine.runner import impact_matrices
from pmask.perturb.engine.stats import ImpactStats
from pmask.perturb.models.load import load_model

from authors_reference import reference

SENTS = [
    ["The", "new", "spending", "is", "fueled", "by", "Clinton", "'s", "account", "."],
    ["She", "walked", "home", "."],
    ["He", "said", "the", "decision", "was", "unbelievable", "."],
    ["What", "if", "Google", "morphed", "into", "GoogleOS", "?"],
    ["Zebras", "walked", "\x07", "home"],          # unknown words ([UNK]) and a control character
    ["news"],
]
# Agreement is checked in float64, where both implementations are exact to ~1e-12, so that the
# tolerances test the algorithm and not float32 rounding (which is checked separately, below).
RTOL, ATOL = 1e-5, 1e-6
LAYERS = [0, 1, -1]


@pytest.fixture(scope="module")
def bert(tiny_bert_dir):
    return load_model(tiny_bert_dir, device="cpu", dtype="float64")


@pytest.fixture(scope="module")
def roberta(tiny_roberta_dir):
    return load_model(tiny_roberta_dir, device="cpu", dtype="float64")


@pytest.fixture(scope="module", params=["bert", "roberta"])
def lm(request):
    return request.getfixturevalue(request.param)


def run(lm, sents, **kw):
    kw = {"metric": "dist", "tokenize": "words", **kw}
    kw.setdefault("subword", "sum" if kw["metric"] == "cpmi" else "avg")
    return list(impact_matrices(lm, sents, **kw))


# ----------------------------------------------------------------------------- agreement

@pytest.mark.parametrize("metric", ["dist", "cos", "prob"])
@pytest.mark.parametrize("subword", ["avg", "first", "sum", "max"])
def test_matches_reference(lm, metric, subword):
    got = run(lm, SENTS, layers=LAYERS, metric=metric, subword=subword, batch_tokens=300)
    assert len(got) == len(SENTS)
    for words, F in zip(SENTS, got):
        n = len(words)
        assert F.shape == (len(LAYERS), n, n) and F.dtype == np.float32
        np.testing.assert_allclose(F, reference(lm, words, LAYERS, metric, subword), rtol=RTOL, atol=ATOL,
                                   err_msg=f"{metric}/{subword} {words}")
        assert np.all(np.diagonal(F, axis1=1, axis2=2) == 0)


def test_reference_values_are_not_trivial(lm):
    F = run(lm, SENTS[:1], layers=[-1], metric="prob")[0]
    assert np.abs(F).max() > 1e-3           # the tiny models give visibly different probabilities
    F = run(lm, SENTS[:1], layers=[-1], metric="dist")[0]
    assert F[0, ~np.eye(len(SENTS[0]), dtype=bool)].min() > 1e-3


@pytest.mark.parametrize("budget", [1, 17, 64, 250, 10**6])
def test_batch_budgets_give_identical_results(lm, budget):
    """From one sequence per batch to everything at once, sentences of different lengths packed."""
    stats = ImpactStats()
    got = run(lm, SENTS, layers=[0, -1], metric="dist", batch_tokens=budget, stats=stats)
    want = run(lm, SENTS, layers=[0, -1], metric="dist", batch_tokens=10**6)
    for a, b, words in zip(got, want, SENTS):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(a, reference(lm, words, [0, -1], "dist", "avg"), rtol=RTOL, atol=ATOL)
    if budget == 1:
        assert stats.batches == stats.forward_sequences
    if budget == 10**6:
        assert stats.batches == 1


def test_packed_equals_unpacked(lm):
    together = run(lm, SENTS, layers=[-1], metric="cos", batch_tokens=10**6)
    for words, F in zip(SENTS, together):
        alone = run(lm, [words], layers=[-1], metric="cos", batch_tokens=10**6)[0]
        np.testing.assert_allclose(F, alone, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("metric", ["dist", "prob"])
def test_fast_path_matches_generic(lm, metric):
    stats_fast, stats_gen = ImpactStats(), ImpactStats()
    fast = run(lm, SENTS, layers=LAYERS, metric=metric, stats=stats_fast)
    generic = run(lm, SENTS, layers=LAYERS, metric=metric, fast_path=False, stats=stats_gen)
    assert stats_fast.fast_path is True and stats_gen.fast_path is False
    for a, b in zip(fast, generic):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)


def test_batches_are_never_padded(lm):
    """Mixed-length batches are packed: the model computes real tokens only, on both paths."""
    for fast in (None, False):
        stats = ImpactStats()
        run(lm, SENTS, layers=LAYERS, metric="dist", batch_tokens=10**6, stats=stats, fast_path=fast)
        assert stats.batches == 1 and stats.padded_tokens == stats.tokens


@pytest.mark.parametrize("metric", ["dist", "prob"])
def test_include_cls_layout(lm, metric):
    got = run(lm, SENTS[:3], layers=[0, -1], metric=metric, include_cls=True, batch_tokens=100)
    plain = run(lm, SENTS[:3], layers=[0, -1], metric=metric)
    for words, F, P in zip(SENTS, got, plain):
        n = len(words)
        assert F.shape == (2, n + 1, n + 1)
        np.testing.assert_allclose(F, reference(lm, words, [0, -1], metric, "avg", include_cls=True),
                                   rtol=RTOL, atol=ATOL)
        # other batches than ``plain``: equal up to rounding; column 0 is zero by construction
        np.testing.assert_allclose(F[:, 1:, 1:], P, rtol=RTOL, atol=ATOL)
        assert np.all(F[:, :, 0] == 0)


def test_sequence_count(lm):
    for include_cls in (False, True):
        stats = ImpactStats()
        run(lm, SENTS, include_cls=include_cls, stats=stats)
        want = sum(len(w) + len(w) * (len(w) - 1) // 2 + include_cls for w in SENTS)
        assert stats.forward_sequences == want
        assert stats.sentences == len(SENTS) and stats.skipped == 0
        assert stats.tokens == sum((len(w) + len(w) * (len(w) - 1) // 2 + include_cls) * len(align(lm.tokenizer, w))
                                   for w in SENTS)


def test_unknown_words(bert):
    words = SENTS[4]
    al = align(bert.tokenizer, words)
    assert al.input_ids.count(bert.tokenizer.unk_token_id) >= 2
    F = run(bert, [words], layers=[-1], metric="dist")[0]
    np.testing.assert_allclose(F, reference(bert, words, [-1], "dist", "avg"), rtol=RTOL, atol=ATOL)


def test_too_long_sentence_is_skipped(lm, caplog):
    long = ["the"] * 70 + ["end"]
    stats = ImpactStats()
    with caplog.at_level(logging.WARNING):
        got = run(lm, [SENTS[1], long, SENTS[3]], layers=[-1], stats=stats)
    assert got[1] is None
    assert stats.skipped == 1 and stats.skipped_indices == [1] and stats.sentences == 3
    assert "sentence 1" in caplog.text and "the the" in caplog.text
    for words, F in zip([SENTS[1], SENTS[3]], [got[0], got[2]]):
        np.testing.assert_allclose(F, reference(lm, words, [-1], "dist", "avg"), rtol=RTOL, atol=ATOL)


def test_streams_lazily(bert):
    seen = []

    def source():
        for k, w in enumerate(SENTS * 3):
            seen.append(k)
            yield w

    it = impact_matrices(bert, source(), batch_tokens=40, metric="dist", subword="avg", tokenize="words")
    first = next(it)
    assert first.shape[-1] == len(SENTS[0])
    assert len(seen) < len(SENTS) * 3
    assert sum(1 for _ in it) == len(SENTS) * 3 - 1


@pytest.mark.parametrize("kw, match", [
    ({"layers": [4]}, "out of range"),
    ({"layers": [-5]}, "out of range"),
    ({"layers": []}, "no layer"),
    ({"layers": ["last"]}, "integer"),
    ({"metric": "euclid"}, "unknown metric"),
    ({"subword": "mean"}, "unknown subword"),
    ({"batch_tokens": 0}, "positive"),
])
def test_bad_arguments(bert, kw, match):
    with pytest.raises(ValueError, match=match):
        run(bert, SENTS[:1], **kw)


def test_empty_sentence_names_index(bert):
    with pytest.raises(ValueError, match="sentence 1 is empty"):
        run(bert, [SENTS[1], [], SENTS[2]])


def test_layer_numbering(bert):
    a = run(bert, SENTS[:2], layers=[3, -4])
    b = run(bert, SENTS[:2], layers=[-1, 0])
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name", ["tiny_bert_dir", "tiny_roberta_dir"])
@pytest.mark.parametrize("metric", ["dist", "cos", "prob"])
def test_float32_matches_reference(request, name, metric):
    """In float32 both sides round differently; distances between states of norm ~6 agree to ~1e-5."""
    lm32 = load_model(request.getfixturevalue(name), device="cpu", dtype="float32")
    for words, F in zip(SENTS, run(lm32, SENTS, layers=[1, -1], metric=metric, batch_tokens=200)):
        np.testing.assert_allclose(F, reference(lm32, words, [1, -1], metric, "avg"), rtol=1e-4, atol=2e-5)


def test_bfloat16_close_to_float32(tiny_bert_dir, bert):
    lm16 = load_model(tiny_bert_dir, device="cpu", dtype="bfloat16")
    for a, b in zip(run(lm16, SENTS[:3], layers=[-1]), run(bert, SENTS[:3], layers=[-1])):
        assert a.dtype == np.float32
        assert np.abs(a - b).max() <= 0.2 * np.abs(b).max()        # bf16 has an 8-bit mantissa
        assert np.corrcoef(a.ravel(), b.ravel())[0, 1] > 0.98


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar(bert, capsys, monkeypatch):
    """On a terminal the bar counts sentences, reaches 2/2 and is closed before the caller sees the
    last result (so a summary the caller prints comes after the bar's final line); no bar without
    progress, and none when stderr is not a terminal (a log file would get a line per update)."""
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    stream = impact_matrices(bert, SENTS[:2], progress=True, metric="dist", subword="avg", tokenize="words")
    got = [next(stream), next(stream)]
    drawn = terminal.getvalue()
    assert "impact" in drawn and "2/2" in drawn and len(got) == 2
    assert list(stream) == [] and terminal.getvalue() == drawn   # closed already: nothing more drawn
    run(bert, SENTS[:2], progress=False)
    assert terminal.getvalue() == drawn
    monkeypatch.undo()
    run(bert, SENTS[:2], progress=True)                           # stderr captured: not a terminal
    assert "impact" not in capsys.readouterr().err


def test_out_of_memory_halves_the_batch(bert, monkeypatch):
    from pmask.perturb.encoders.bert import BertFamilyEncoder

    real = BertFamilyEncoder.states

    def flaky(self, batch, layers):
        if sum(seg.rows for seg in batch.segments) > 8:
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        return real(self, batch, layers)

    want = run(bert, SENTS, layers=[-1], metric="prob", batch_tokens=10**6)
    monkeypatch.setattr(BertFamilyEncoder, "states", flaky)
    stats = ImpactStats()
    got = run(bert, SENTS, layers=[-1], metric="prob", batch_tokens=10**6, stats=stats)
    assert stats.oom_retries > 0
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)


def test_words_sharing_pieces_via_registered_aligner(lm, monkeypatch):
    """An external aligner may give several words the same pieces (a multiword token): masking
    either masks the token, impact between them is 0, and every other entry equals the
    sentence with the token as one word."""
    from pmask.perturb import alignment

    plain_words = ["She", "walked", "home", "."]
    owner = [0, 1, 1, 2, 3]                      # surface word of each of the 5 syntactic words

    def shared(tokenizer, sentence, *, warn=True):
        al = align(tokenizer, plain_words)
        return alignment.WordAlignment(al.input_ids, al.word_index, n_words=len(owner),
                                       word_pieces=[al.pieces(k) for k in owner])

    words = ["She", "zu", "dem", "home", "."]
    for metric in ("dist", "prob"):
        with TOKENIZE_ENTRIES.registered(TokenizeMode("shared", "a multiword token's words share its pieces",
                                                      aligner=shared)):   # a tokenisation mode: its entry alone
            got = run(lm, [words], layers=[1, -1], metric=metric, tokenize="shared")[0]
        plain = run(lm, [plain_words], layers=[1, -1], metric=metric)[0]
        want = plain[:, owner][:, :, owner]
        want[:, 1, 2] = want[:, 2, 1] = 0.0
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
        assert np.all(got[:, 1, 2] == 0) and np.all(got[:, 2, 1] == 0)     # exact by construction


def test_sentence_objects_with_words(bert):
    class Sent:
        def __init__(self, words):
            self.words = words
            self.space_after = [True] * len(words)

    a = run(bert, [Sent(SENTS[1])], layers=[-1])
    b = run(bert, [SENTS[1]], layers=[-1])
    np.testing.assert_allclose(a[0], b[0], rtol=RTOL, atol=ATOL)
    with pytest.raises(ValueError, match="unknown tokenisation mode"):
        run(bert, [SENTS[1]], tokenize="letters")
