"""Probe distortion (Li & Lu 2023) against a naive reference written from the paper's definitions.

The reference builds every perturbed input as a string (the authors' way: words joined by spaces,
``[MASK]`` and ``,`` written into it, tokenised as one string, pieces pooled into words by
character offsets), runs the Hugging Face model itself in float64 and averages the terms.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from resolved import impact_of

from pmask.perturb.probes import probe_matrices, sequences_per_sentence
from pmask.perturb.probes.distortion import span_plan, spans
from pmask.perturb.testing import TINY_SENTENCES

SENTENCES = [["He", "said", "the", "decision", "was", "unbelievable", "."], TINY_SENTENCES[1][:6], ["Hello"],
             ["The", "stories"]]


class NaiveDistortion:
    def __init__(self, model_dir, layer: int):
        from transformers import AutoModel, AutoTokenizer

        self.tok = AutoTokenizer.from_pretrained(str(model_dir))
        self.model = AutoModel.from_pretrained(str(model_dir)).double().eval()
        self.layer = layer

    def vectors(self, words: list[str]) -> torch.Tensor:
        text = " ".join(words)
        enc = self.tok(text, return_offsets_mapping=True, return_tensors="pt")
        offsets = enc.pop("offset_mapping")[0].tolist()
        with torch.no_grad():
            states = self.model(**enc, output_hidden_states=True).hidden_states[self.layer][0]
        out, start = [], 0
        for w in words:
            end = start + len(w)
            pieces = [t for t, (a, b) in enumerate(offsets) if b > a and a >= start and b <= end]
            out.append(states[pieces].mean(0))
            start = end + 1
        return torch.stack(out)

    @staticmethod
    def d(gold: torch.Tensor, perturbed: torch.Tensor) -> float:
        return float(((gold - perturbed) ** 2).sum() / len(gold))

    def chart(self, words: list[str], metric: str) -> np.ndarray:
        n = len(words)
        G = self.vectors(words)
        out = np.zeros((n, n))
        for left in range(n):
            for right in range(left + 1, n + 1):
                if (left, right) == (0, n):
                    continue
                before, inside, after = words[:left], words[left:right], words[right:]
                terms = {"sub": [], "dc": [], "move": []}
                P = self.vectors(before + ["[MASK]"] + after)
                terms["sub"].append(self.d(torch.cat([G[:left], G[right:]]), torch.cat([P[:left], P[left + 1:]])))
                P = self.vectors((["[MASK]"] if before else []) + inside + (["[MASK]"] if after else []))
                first = 1 if before else 0
                terms["dc"].append(self.d(G[left:right], P[first:first + len(inside)]))
                parts = [(a, b) for a, b in ((left, right), (0, left), (right, n)) if b > a]   # span, prefix, suffix
                for order in (parts, parts[1:] + parts[:1]):                                   # front, end
                    moved: list[str] = []
                    for a, b in order:
                        moved += ([","] if moved else []) + words[a:b]
                    P = self.vectors(moved)
                    at = 0
                    for a, b in order:
                        terms["move"].append(self.d(G[a:b], P[at:at + b - a]))
                        at += b - a + 1                                                          # the comma
                chosen = [t for k, v in terms.items() if metric in ("all", k) for t in v]
                out[left, right - 1] = np.mean(chosen)
        return out


@pytest.fixture(scope="module")
def lm64(tiny_bert_dir):
    from pmask.perturb.models.load import load_model

    return load_model(str(tiny_bert_dir), device="cpu", dtype="float64")


@pytest.mark.parametrize("metric", ["all", "sub", "dc", "move"])
def test_charts_equal_the_naive_reference(tiny_bert_dir, lm64, metric):
    from pmask.perturb.engine.runner import ImpactStats

    naive = NaiveDistortion(tiny_bert_dir, 2)
    stats = ImpactStats()
    charts = list(probe_matrices(lm64, SENTENCES, impact_of("distortion", metric=metric), layers=[2, 3], stats=stats))
    for words, chart in zip(SENTENCES, charts):
        assert chart.shape == (2, len(words), len(words)) and chart.dtype == np.float32
        want = naive.chart(words, metric)
        np.testing.assert_allclose(chart[0], want, rtol=2e-6, atol=1e-9)
        assert np.all(np.tril(chart[1], -1) == 0) and chart[1][0, -1] == 0
    per_span = {"all": 4, "sub": 1, "dc": 1, "move": 2}[metric]
    assert stats.forward_sequences == sum(1 + per_span * len(spans(len(w))) for w in SENTENCES)


def test_all_is_the_term_weighted_mean_and_the_cls_layout_is_shifted(lm64):
    words = SENTENCES[0]
    n = len(words)
    got = {m: next(probe_matrices(lm64, [words], impact_of("distortion", metric=m), layers=[1]))[0].astype(np.float64)
           for m in ("all", "sub", "dc", "move")}
    for left, right in spans(n):
        k = 6 if left > 0 and right < n else 4
        c = (left, right - 1)
        assert got["all"][c] == pytest.approx((got["sub"][c] + got["dc"][c] + k * got["move"][c]) / (k + 2), rel=1e-6)
    shifted = next(probe_matrices(lm64, [words], impact_of("distortion"), layers=[1], include_cls=True))[0]
    assert shifted.shape == (n + 1, n + 1) and not shifted[0].any() and not shifted[:, 0].any()
    np.testing.assert_array_equal(shifted[1:, 1:], got["all"].astype(np.float32))


def test_span_plan_counts():
    for n in range(1, 8):
        plan = span_plan(n, "all")
        assert 1 + len(plan.rewrites) == sequences_per_sentence("distortion", n) == 1 + 4 * (n * (n + 1) // 2 - 1)
        inside = sum(1 for a, b in spans(n) if a > 0 and b < n)
        assert len(plan.term_span) == 2 * len(spans(n)) + 6 * inside + 4 * (len(spans(n)) - inside)


@pytest.mark.parametrize("budget", [1, 17, 64])
def test_every_batch_size_gives_the_same_charts(lm64, budget):
    """The span probe runs through the engine's one loop: any token budget, from one sequence per
    batch to every sentence at once, gives the same charts (captum-style batch invariance)."""
    from pmask.perturb.engine.runner import ImpactStats

    want_stats, stats = ImpactStats(), ImpactStats()
    want = list(probe_matrices(lm64, SENTENCES, impact_of("distortion"), layers=[1, 3], batch_tokens=10**6,
                               stats=want_stats))
    got = list(probe_matrices(lm64, SENTENCES, impact_of("distortion"), layers=[1, 3], batch_tokens=budget,
                              stats=stats))
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    assert want_stats.batches == 1   # every sentence's rewrites in one batch, as the masking probes pack
    assert stats.forward_sequences == want_stats.forward_sequences and stats.tokens == want_stats.tokens
    if budget == 1:
        assert stats.batches == stats.forward_sequences
    else:
        assert 1 < stats.batches < stats.forward_sequences and stats.reads == want_stats.reads


def test_out_of_memory_halves_a_distortion_batch(lm64, monkeypatch):
    from pmask.perturb.encoders.bert import BertFamilyEncoder
    from pmask.perturb.engine.runner import ImpactStats

    real = BertFamilyEncoder.states

    def flaky(self, batch, layers):
        if sum(seg.rows for seg in batch.segments) > 8:
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        return real(self, batch, layers)

    want = list(probe_matrices(lm64, SENTENCES, impact_of("distortion"), layers=[2], batch_tokens=10**6))
    monkeypatch.setattr(BertFamilyEncoder, "states", flaky)
    stats = ImpactStats()
    got = list(probe_matrices(lm64, SENTENCES, impact_of("distortion"), layers=[2], batch_tokens=10**6, stats=stats))
    assert stats.oom_retries > 0
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


def test_a_sentence_too_long_is_skipped_between_charted_ones(lm64):
    long = ["word"] * (lm64.max_length + 1)
    got = list(probe_matrices(lm64, [SENTENCES[1], long, SENTENCES[3]], impact_of("distortion"), layers=[2]))
    assert got[1] is None
    for k, words in ((0, SENTENCES[1]), (2, SENTENCES[3])):
        alone = next(probe_matrices(lm64, [words], impact_of("distortion"), layers=[2]))
        np.testing.assert_allclose(got[k], alone, rtol=1e-12, atol=1e-15)
