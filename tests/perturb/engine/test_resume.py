"""Issue 39, item 15b: a store interrupted anywhere and resumed is bit-identical to the uninterrupted one.

Batches pack the sequences of consecutive sentences, so a run that starts at its resume point batches the
sentences after it differently, and float32 rounding then differs (up to ~4e-6 here before the fix). The
resumed run now plans its batches from the first sentence, as the uninterrupted run did. The expectation
is the uninterrupted store made in this same process (same machine, threads and budget: a comparison of
two runs of one computation here, never of numbers across machines). The interruption is deterministic:
the writer (or the engine) raises after k sentences (or batches), as a kill or a Ctrl-C would stop it.
"""
from __future__ import annotations

import numpy as np
import pytest

from pmask.corpora import Sentence
from pmask.perturb.engine.impact_settings import ImpactSettings
from pmask.perturb.store import ImpactStore

WORDS = [["the", "new", "spending", "is"], ["he", "said", "."], ["she", "walked", "home", "."], ["the"] * 70,
         ["what", "if", "google", "morphed", "into", "?"], ["the", "decision", "was", "."]]
#: probe, metric, subword, tokens per batch (batches span sentence boundaries at each budget)
PROBES = [("pair", "dist", "avg", 64), ("single", "cos", "avg", 24), ("pair", "cpmi", "sum", 64),
          ("distortion", "all", "avg", 48), ("attention", "weight", "avg", 16), ("distance", "l2", "avg", 16)]


class Killed(Exception):
    """A hard kill: no handler keeps anything beyond what the store had closed."""


@pytest.fixture(scope="module")
def lm(tiny_bert_dir):
    from pmask.perturb.models.load import load_model

    return load_model(str(tiny_bert_dir), device="cpu")


@pytest.fixture(scope="module")
def corpus():
    return [Sentence(id=f"r{k}", words=list(w), path="r.conllu", line=10 * k + 1) for k, w in enumerate(WORDS)]


def fill(lm, corpus, out, probe, resume=False, shard_seconds=0, layers=(1, -1)):
    from pmask.perturb.fill.compute import FillRequest, compute_store

    name, metric, subword, budget = probe
    request = FillRequest(corpus, out, layers=layers, impact=ImpactSettings(metric, subword, "words", name, 0),
                          batch_tokens=budget, resume=resume, shard_seconds=shard_seconds, progress=False)
    return compute_store(lm, request)


def interrupted(monkeypatch, where: str, after: int, error: type[BaseException]):
    """Raise ``error`` as the writer stores sentence ``after`` (0-based), or as engine batch ``after`` begins."""
    from pmask.perturb.engine.runner import BatchRunner
    from pmask.perturb.probes import onepass
    from pmask.perturb.store.writer import StoreWriter

    calls = []

    def counting(original):
        def wrapper(*args, **kwargs):
            calls.append(1)
            if len(calls) == after + 1:
                raise error
            return original(*args, **kwargs)
        return wrapper

    if where == "sentences":
        monkeypatch.setattr(StoreWriter, "add", counting(StoreWriter.add))
    else:
        monkeypatch.setattr(BatchRunner, "_run_batch", counting(BatchRunner._run_batch))
        monkeypatch.setattr(onepass, "_forward", counting(onepass._forward))


@pytest.mark.parametrize("probe", PROBES, ids=[f"{p}-{m}" for p, m, _, _ in PROBES])
def test_a_store_interrupted_anywhere_resumes_bit_identical(lm, corpus, probe, tmp_path, monkeypatch):
    fill(lm, corpus, tmp_path / "whole", probe)
    whole = ImpactStore.open(tmp_path / "whole")
    assert whole.indices == [0, 1, 2, 4, 5] and [e["index"] for e in whole.skipped] == [3]
    kills = [("sentences", 1, Killed), ("sentences", 2, KeyboardInterrupt), ("batches", 1, KeyboardInterrupt)]
    differ = []
    for where, after, error in kills:
        out = tmp_path / f"{where}-{after}"
        with monkeypatch.context() as patch:
            interrupted(patch, where, after, error)
            with pytest.raises(error):
                fill(lm, corpus, out, probe)
        held = len(ImpactStore.open(out))
        summary = fill(lm, corpus, out, probe, resume=True)
        resumed = ImpactStore.open(out)
        assert summary.reused == held and resumed.complete and resumed.indices == whole.indices
        assert resumed.skipped == whole.skipped
        for a, b in zip(resumed, whole):
            assert a.words == b.words and a.input_ids.tolist() == b.input_ids.tolist()
            if not np.array_equal(a.cls_matrix, b.cls_matrix):
                differ.append(f"{where} {after}: sentence {a.index} by {np.abs(a.cls_matrix - b.cls_matrix).max():.1e}")
    assert not differ, differ


def test_a_resume_runs_at_most_one_batch_again(lm, corpus, tmp_path, monkeypatch):
    """The cost: the batch that spans the resume point is run whole, nothing else twice (no sentence under
    way is kept here: no shard is due before the kill)."""
    probe = PROBES[0]
    whole = fill(lm, corpus, tmp_path / "whole", probe).stats
    with monkeypatch.context() as patch:
        interrupted(patch, "sentences", 2, Killed)
        with pytest.raises(Killed):
            fill(lm, corpus, tmp_path / "cut", probe, shard_seconds=None)
    # sentences 0 and 1 were stored: each the unmasked input, one per word masked, one per pair of words
    stored = sum(1 + len(w) + len(w) * (len(w) - 1) // 2 for w in WORDS[:2])
    resumed = fill(lm, corpus, tmp_path / "cut", probe, resume=True).stats
    assert resumed.batches <= whole.batches
    assert whole.forward_sequences - stored <= resumed.forward_sequences
    assert resumed.forward_sequences - (whole.forward_sequences - stored) <= 64 // 5   # one batch's rows at most


# ---------------------------------------------------------------------------- issue 45: a causal model's stores

CAUSAL_PROBES = [("pair", "cpmi", "sum", 40), ("single", "dist", "avg", 24), ("pair", "dist", "avg", 64)]
CAUSAL_LAYERS = {"cpmi": (-1,), "dist": (1, -1)}   # log-probabilities at the last layer only


@pytest.fixture(scope="module")
def causal_lm(tmp_path_factory):
    from family_impacts import causal_model

    from pmask.perturb.models.load import load_model

    return load_model(str(causal_model(tmp_path_factory, "llama")[0]), device="cpu")


@pytest.mark.parametrize("probe", CAUSAL_PROBES, ids=[f"{p}-{m}" for p, m, _, _ in CAUSAL_PROBES])
def test_a_causal_store_interrupted_anywhere_resumes_bit_identical(causal_lm, corpus, probe, tmp_path, monkeypatch):
    """Issue 45, item 6: the causal readings (one input per source word, the clean prefix's keys and values shared)
    keep the store's promise: killed after a sentence or a batch, resumed, the same bits as the uninterrupted run."""
    layers, corpus = CAUSAL_LAYERS[probe[1]], [s for s in corpus if len(s.words) < 20]   # quick: short ones
    fill(causal_lm, corpus, tmp_path / "whole", probe, layers=layers)
    whole = ImpactStore.open(tmp_path / "whole")
    assert len(whole) == 5 and all(np.tril(s.matrix[-1], -1).any() for s in whole if len(s.words) > 1)
    for where, after, error in [("sentences", 2, Killed), ("batches", 1, KeyboardInterrupt)]:
        out = tmp_path / f"{where}-{after}"
        with monkeypatch.context() as patch:
            interrupted(patch, where, after, error)
            with pytest.raises(error):
                fill(causal_lm, corpus, out, probe, layers=layers)
        held = len(ImpactStore.open(out))
        summary = fill(causal_lm, corpus, out, probe, resume=True, layers=layers)
        resumed = ImpactStore.open(out)
        assert summary.reused == held and resumed.complete and resumed.indices == whole.indices
        for a, b in zip(resumed, whole):
            assert a.input_ids.tolist() == b.input_ids.tolist()
            assert np.array_equal(a.cls_matrix, b.cls_matrix), f"{where} {after}: sentence {a.index}"
