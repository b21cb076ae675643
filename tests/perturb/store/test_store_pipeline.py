"""compute_store / iter_impacts on a tiny random BERT: store equals the engine, resumes, refusals."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pmask.corpora import Sentence
from pmask.common.errors import LayerError, StoreError
from pmask.perturb.engine.impact_settings import ImpactSettings
from pmask.perturb.store import MANIFEST, ImpactStore, StoreSettings, plan_store

LONG = ["the"] * 70   # more than the tiny model's 64 tokens


@pytest.fixture(scope="module")
def tiny(tiny_bert_dir):
    from pmask.perturb.models.load import load_model

    return load_model(str(tiny_bert_dir), device="cpu")


@pytest.fixture(scope="module")
def corpus():
    from pmask.perturb.testing import TINY_SENTENCES

    words = [*TINY_SENTENCES[:3], LONG, ["naïve", "日本語", "She", "walked", "home", "."], TINY_SENTENCES[4]]
    return [Sentence(id=f"t{k}", words=list(w), path="tiny.conllu", line=10 * k + 1) for k, w in enumerate(words)]


@pytest.fixture(scope="module")
def reference(tiny, corpus, tmp_path_factory):
    """An uninterrupted store of ``corpus`` at layers (1, -1)."""
    from pmask.perturb.fill.compute import FillRequest, compute_store

    out = tmp_path_factory.mktemp("ref") / "store"
    summary = compute_store(tiny, FillRequest(corpus, out, layers=(1, -1), shard_size=2, progress=False))
    assert (summary.computed, summary.reused, summary.skipped_too_long) == (5, 0, 1)
    assert summary.complete and summary.sentences == 6 and summary.path == out
    return out


def test_compute_store_matches_engine(tiny, corpus, reference):
    from pmask.perturb.alignment import align
    from pmask.perturb.engine.runner import impact_matrices

    store = ImpactStore.open(reference)
    assert store.layers == (1, 3) and store.skipped == [{"index": 3, "id": "t3", "n": 70, "skipped": "too_long"}]
    direct = list(impact_matrices(tiny, [s.words for s in corpus], layers=(1, -1)))
    assert direct[3] is None and store.get(3) is None and store.get("t3") is None
    for k in (0, 1, 2, 4, 5):
        item = store[corpus[k].id]
        assert item.index == k and item.words == corpus[k].words
        np.testing.assert_allclose(item.matrix, direct[k], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(item.layer(-1), direct[k][1], rtol=1e-5, atol=1e-6)
        al = align(tiny.tokenizer, corpus[k].words)
        assert item.input_ids.tolist() == al.input_ids and item.word_index.tolist() == al.word_index
        assert item.pieces == tiny.tokenizer.convert_ids_to_tokens(al.input_ids)
    assert store[1].word_pieces(2) == ["spend", "##ing"]
    m = store.manifest
    assert m["model"]["name"] == str(Path(tiny.name).resolve()) and m["model"]["num_layers"] == 3 and m["model"]["dtype"] == "float32"
    assert m["model"]["tokenizer"]["do_lower_case"] is True and m["model"]["random_init"] is False
    assert {"torch", "transformers", "pmask", "safetensors"} <= set(m["versions"])
    assert m["layers"] == {"requested": [1, -1], "resolved": [1, 3]} and m["include_cls"] is True


def _interrupt_after(monkeypatch, k_done: int) -> list[int]:
    """Make the engine raise KeyboardInterrupt after yielding ``k_done`` matrices; returns call log."""
    from pmask.perturb.engine import runner

    real = runner.impact_matrices
    calls: list[int] = []

    def interrupted(model, sentences, *args, **kwargs):
        sentences = list(sentences)
        calls.append(len(sentences))
        for k, matrix in enumerate(real(model, sentences, *args, **kwargs)):
            if k == k_done:
                raise KeyboardInterrupt
            yield matrix

    monkeypatch.setattr(runner, "impact_matrices", interrupted)
    return calls


def test_interrupted_run_resumes_to_the_same_store(tiny, corpus, reference, tmp_path, monkeypatch):
    from pmask.perturb.fill.compute import FillRequest, compute_store

    out = tmp_path / "store"
    calls = _interrupt_after(monkeypatch, 3)
    with pytest.raises(KeyboardInterrupt):
        compute_store(tiny, FillRequest(corpus, out, layers=(1, -1), shard_size=2, progress=False))
    partial = ImpactStore.open(out)
    assert partial.indices == [0, 1, 2] and not partial.complete   # the 3rd was flushed on the way out
    with pytest.raises(StoreError, match="a store is already there; give resume"):
        compute_store(tiny, FillRequest(corpus, out, layers=(1, -1), progress=False))
    summary = compute_store(tiny, FillRequest(corpus, out, layers=[-1], resume=True, progress=False))  # fewer layers
    assert (summary.computed, summary.reused, summary.skipped_too_long) == (2, 3, 1)
    assert calls == [6, 3]                                  # the resumed run only saw sentences 3, 4, 5
    done, ref = ImpactStore.open(out), ImpactStore.open(reference)
    assert done.complete and done.indices == ref.indices and done.skipped == ref.skipped
    for a, b in zip(done, ref):
        assert (a.index, a.words, a.pieces) == (b.index, b.words, b.pieces)
        np.testing.assert_allclose(a.cls_matrix, b.cls_matrix, rtol=1e-5, atol=1e-6)


def test_resume_of_finished_store_does_no_model_work(tiny, corpus, reference, monkeypatch):
    from pmask.perturb.engine import runner
    from pmask.perturb.fill.compute import FillRequest, compute_store

    def no_model_work(*args, **kwargs):
        raise AssertionError("the engine was called")

    monkeypatch.setattr(runner, "impact_matrices", no_model_work)
    before = (reference / MANIFEST).read_text(encoding="ascii")
    summary = compute_store(tiny, FillRequest(corpus, reference, layers=(1, -1), resume=True, progress=False))
    assert (summary.computed, summary.reused, summary.skipped_too_long) == (0, 5, 1)
    # the CLI can ask before loading the model at all
    early = StoreSettings(model=str(tiny.name), layers=(-1,))
    assert plan_store(reference, corpus, early, resume=True) == []
    assert (reference / MANIFEST).read_text(encoding="ascii") == before   # not even rewritten


def test_pipeline_refuses_other_settings(tiny, corpus, reference):
    from pmask.perturb.fill.compute import FillRequest, compute_store

    with pytest.raises(StoreError, match="metric: store has 'dist', requested 'cos'"):
        compute_store(tiny, FillRequest(corpus, reference, layers=(1, -1), impact=ImpactSettings(metric="cos"),
                                        resume=True, progress=False))
    with pytest.raises(StoreError, match="corpus: store has 6 sentences"):   # refused before a layer is added
        compute_store(tiny, FillRequest(corpus[1:5], reference, layers=(0, 1, -1), resume=True, progress=False))
    with pytest.raises(StoreError, match=r"lacks layers \[0\]; adding layers .* without torchrun"):
        compute_store(tiny, FillRequest(corpus, reference, layers=(0,), resume=True, progress=False), rank=0,
                      world_size=2)
    assert ImpactStore.open(reference).layers == (1, 3)
    with pytest.raises(LayerError, match="layer 7 out of range"):
        compute_store(tiny, FillRequest(corpus, reference, layers=(7,), resume=True, progress=False))


def test_iter_impacts_streams_without_a_store(tiny, corpus):
    from pmask.perturb.fill.compute import iter_impacts

    pairs = list(iter_impacts(tiny, corpus[2:5], layers=[-1], include_cls=True, progress=False))
    assert [s.id for s, _ in pairs] == ["t2", "t3", "t4"] and pairs[1][1] is None
    assert pairs[0][1].shape == (1, len(corpus[2].words) + 1, len(corpus[2].words) + 1)


def test_all_layers_leaves_out_layer_zero(tiny, corpus, tmp_path):
    from pmask.perturb.fill.compute import FillRequest, compute_store

    compute_store(tiny, FillRequest(corpus[:2], tmp_path / "st", layers="all", progress=False))
    store = ImpactStore.open(tmp_path / "st")
    assert store.layers == (1, 2, 3) and store.manifest["layers"]["requested"] == "all"
