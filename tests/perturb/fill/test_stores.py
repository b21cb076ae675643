"""One way to fill a store (pmask.perturb.fill.stores): plan every store first, load the model once and
only if some store has work, resolve the requested layers once per model depth."""
from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from resolved import spec_of

from pmask.common import options
from pmask.common.errors import StoreError
from pmask.corpora.corpus_spec import CorpusSpec
from pmask.perturb.fill.compute import FillRequest
from pmask.perturb.fill.model_spec import ModelSpec
from pmask.perturb.fill.stores import build_store, fill_stores
from pmask.perturb.store import ImpactStore

from store_fakes import _sentences, _write

MINI = Path(__file__).resolve().parents[2] / "data" / "mini.conllu"
# every module of the store path that may resolve layers (the engine's own entry check aside)
STORE_PATH = ("pmask.perturb.store.store_settings", "pmask.perturb.store.plan", "pmask.perturb.fill.record",
              "pmask.perturb.fill.add_layers", "pmask.perturb.fill.compute", "pmask.perturb.fill.stores",
              "pmask.perturb.source")


class Loader:
    def __init__(self, spec: ModelSpec | None = None):
        self.spec, self.calls = spec, 0

    def __call__(self):
        self.calls += 1
        if self.spec is None:
            raise AssertionError("the model was loaded")
        return self.spec.load()


def test_requested_layers_are_resolved_once_per_depth(tmp_path, tiny_bert_dir, monkeypatch):
    model = spec_of(str(tiny_bert_dir), device="cpu")
    build_store(CorpusSpec(MINI, limit=2), model, tmp_path / "st", layers=[-1], progress=False)
    depths = []

    def counting(layers, num_layers):
        depths.append(num_layers)
        return options.resolve_layers(layers, num_layers)

    for name in STORE_PATH:
        monkeypatch.setattr(importlib.import_module(name), "resolve_layers", counting, raising=False)
    run = build_store(CorpusSpec(MINI, limit=3), model, tmp_path / "st", layers=[1, -1], resume=True, progress=False)
    assert run.summary.added_layers == (1,) and run.summary.computed == 1
    assert ImpactStore.open(tmp_path / "st").layers == (1, 3)
    assert depths == [3, 3]   # planning, against the store's depth; compute_store, against the model's


def test_every_store_is_planned_before_the_model_is_loaded(tmp_path, tiny_bert_dir):
    sentences = _sentences()
    _write(tmp_path / "b", sentences)                      # a store made with another model
    spec = spec_of(str(tiny_bert_dir), device="cpu")
    requests = [FillRequest.for_model(spec, sentences, tmp_path / "a", resume=True),
                FillRequest.for_model(spec, sentences, tmp_path / "b", resume=True)]
    loader = Loader()
    with pytest.raises(StoreError, match="model: store has 'fake-model'"):
        fill_stores(requests, spec, loader)
    assert loader.calls == 0 and not (tmp_path / "a").exists()


def test_stores_with_work_share_one_model_load(tmp_path, tiny_bert_dir):
    spec = spec_of(str(tiny_bert_dir), device="cpu")
    corpus = CorpusSpec(MINI, limit=2).read()
    requests = [FillRequest.for_model(spec, corpus[:k], tmp_path / f"s{k}", layers=[-1], resume=True,
                                      progress=False) for k in (1, 2)]
    loader = Loader(spec)
    runs = fill_stores(requests, spec, loader)
    assert loader.calls == 1 and [r.summary.computed for r in runs] == [1, 2] and [r.todo for r in runs] == [1, 2]
    again = fill_stores(requests, spec, Loader())            # all done: no model
    assert [(r.summary, r.todo, r.is_main) for r in again] == [(None, 0, True)] * 2
    assert "0 computed, 2 reused (store complete)" in again[1].describe()
