"""Issue 27, item 4: a shard is closed after a bounded time of work as well as after 64 sentences, so
a hard kill loses at most that much; whatever the shard boundaries, the store holds the same content
(time is simulated with an injectable clock, never slept)."""
from __future__ import annotations

import numpy as np
import pytest
from resolved import impact_of

from pmask.perturb.store import (
    DEFAULT_SHARD_SECONDS,
    CorpusInfo,
    ImpactStore,
    StoreWriter,
    plan_store,
    read_manifest,
)
from pmask.perturb.store import writer as writer_module
from pmask.perturb.store.info import store_info

from store_fakes import SETTINGS, _fake, _sentences, _write

WORDS = [["w"] * (1 + k % 4) for k in range(11)]


class FakeClock:
    """Seconds that pass only when the test says so; ``steps`` are the work of successive sentences."""

    def __init__(self, steps=()):
        self.now = 0.0
        self.steps = list(steps)

    def __call__(self) -> float:
        return self.now

    def work(self) -> None:
        self.now += self.steps.pop(0) if self.steps else 1.0


def _fill(path, sents, clock, *, skip=(), **kw):
    with StoreWriter.open(path, SETTINGS, CorpusInfo.of(sents), clock=clock, **kw) as w:
        for k in w.remaining:
            clock.work()
            if k in skip:
                w.skip(k, sents[k].id, len(sents[k].words))
            else:
                w.add(k, sents[k].id, sents[k].words, **_fake(k, len(sents[k].words)))


def _sizes(path):
    return [s["n_sentences"] for s in read_manifest(path)["shards"]]


def test_a_shard_closes_after_the_time_bound_and_after_the_count(tmp_path):
    sents = _sentences(WORDS)
    # sentence k takes steps[k] seconds; with a 10 s bound a shard closes once 10 s have passed since the last
    _fill(tmp_path / "st", sents, FakeClock([4, 4, 4, 1, 1, 12, 3, 3, 3, 3, 1]), shard_size=64, shard_seconds=10)
    assert _sizes(tmp_path / "st") == [3, 3, 4, 1]
    _fill(tmp_path / "count", sents, FakeClock([100] * 11), shard_size=4, shard_seconds=None)
    assert _sizes(tmp_path / "count") == [4, 4, 3]              # no time bound: the count alone
    _fill(tmp_path / "every", sents, FakeClock(), shard_size=64, shard_seconds=0)
    assert _sizes(tmp_path / "every") == [1] * 11


def test_skipped_sentences_count_as_work_too(tmp_path):
    sents = _sentences(WORDS[:4])
    with StoreWriter.open(tmp_path / "st", SETTINGS, CorpusInfo.of(sents), shard_seconds=5,
                          clock=(clock := FakeClock([6, 6, 1, 1]))) as w:
        clock.work()
        w.skip(0, sents[0].id, 1)                                # the manifest records it at once
        assert [e["index"] for e in read_manifest(tmp_path / "st")["sentences"]] == [0]
        clock.work()
        w.add(1, sents[1].id, sents[1].words, **_fake(1, 2))
        assert plan_store(tmp_path / "st", sents, SETTINGS, resume=True) == [2, 3]


def test_the_store_is_the_same_whatever_the_shard_boundaries(tmp_path):
    sents = _sentences(WORDS)
    _write(tmp_path / "count", sents, skip={5}, shard_size=2)
    _fill(tmp_path / "time", sents, FakeClock([3, 9, 1, 1, 7, 2, 2, 2, 2, 9, 1]), skip={5}, shard_size=64,
          shard_seconds=5)
    assert _sizes(tmp_path / "count") != _sizes(tmp_path / "time")
    a, b = ImpactStore.open(tmp_path / "count"), ImpactStore.open(tmp_path / "time")
    assert a.complete and b.complete and a.indices == b.indices and a.skipped == b.skipped
    for x, y in zip(a, b):
        assert (x.index, x.id, x.words, x.pieces) == (y.index, y.id, y.words, y.pieces)
        np.testing.assert_array_equal(x.input_ids, y.input_ids)
        np.testing.assert_allclose(x.cls_matrix, y.cls_matrix, rtol=0, atol=0)   # the same arrays were written
    keep = ("index", "id", "n", "key", "skipped")
    assert ([{k: e[k] for k in keep if k in e} for e in a.manifest["sentences"]]
            == [{k: e[k] for k in keep if k in e} for e in b.manifest["sentences"]])


def test_a_resumed_store_of_uneven_shards_continues_after_them(tmp_path):
    sents = _sentences(WORDS)
    clock = FakeClock([1, 1, 1, 9, 9, 1, 1, 1, 1, 1, 1])
    with pytest.raises(KeyboardInterrupt), \
            StoreWriter.open(tmp_path / "st", SETTINGS, CorpusInfo.of(sents), shard_seconds=5, clock=clock) as w:
        for k in w.remaining:
            if k == 7:
                raise KeyboardInterrupt
            clock.work()
            w.add(k, sents[k].id, sents[k].words, **_fake(k, len(sents[k].words)))
    assert _sizes(tmp_path / "st") == [4, 1, 2]                   # closed at 12 s, 21 s, and by the interruption
    info = store_info(tmp_path / "st")
    assert info["sentences"]["stored"] == 7 and info["shards"] == 3 and info["state"] == "interrupted"
    _fill(tmp_path / "st", sents, FakeClock(), resume=True, shard_seconds=2)
    _write(tmp_path / "ref", sents)
    assert _sizes(tmp_path / "st") == [4, 1, 2, 2, 2]
    a, b = ImpactStore.open(tmp_path / "st"), ImpactStore.open(tmp_path / "ref")
    assert a.complete and a.indices == b.indices == list(range(11))
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.cls_matrix, y.cls_matrix)


def test_ranks_close_time_bounded_shards_of_their_own_sizes(tmp_path):
    sents = _sentences(WORDS)
    clocks = [FakeClock([1, 6, 1, 1, 1, 6]), FakeClock([9, 1, 1, 1, 1])]
    first = StoreWriter.open(tmp_path / "st", SETTINGS, CorpusInfo.of(sents), shard_seconds=5, world_size=2,
                             clock=clocks[0])
    writers = [first, StoreWriter.join(tmp_path / "st", rank=1, world_size=2, shard_seconds=5, clock=clocks[1])]
    for k in range(11):
        rank = k % 2
        clocks[rank].work()
        writers[rank].add(k, sents[k].id, sents[k].words, **_fake(k, len(sents[k].words)))
    for w in writers:
        w.flush()
    writers[0].merge_parts()
    for w in writers:
        w.close()
    sizes = {s["file"]: s["n_sentences"] for s in read_manifest(tmp_path / "st")["shards"]}
    assert sizes == {"shard-00000.safetensors": 2, "shard-00002.safetensors": 4,   # rank 0: even numbers
                     "shard-00001.safetensors": 1, "shard-00003.safetensors": 4}   # rank 1: odd numbers
    _write(tmp_path / "ref", sents)
    a, b = ImpactStore.open(tmp_path / "st"), ImpactStore.open(tmp_path / "ref")
    assert a.complete and a.indices == b.indices
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.cls_matrix, y.cls_matrix)


def test_the_default_bound_is_a_minute_and_a_bad_bound_is_refused(tmp_path):
    assert DEFAULT_SHARD_SECONDS == 60
    with pytest.raises(ValueError, match="shard_seconds"):
        StoreWriter.open(tmp_path / "st", SETTINGS, CorpusInfo.of(_sentences()), shard_seconds=-1)


def test_compute_store_records_its_shard_bounds_and_equals_a_count_bounded_store(tmp_path, tiny_bert_dir,
                                                                                  monkeypatch):
    from pmask.corpora import Sentence
    from pmask.perturb.fill.compute import FillRequest, compute_store
    from pmask.perturb.models.load import load_model

    corpus = [Sentence(id=str(k), words=["the", "cat", "sat", "on", "a", "mat"][: 2 + k % 5]) for k in range(9)]
    model = load_model(tiny_bert_dir, device="cpu")
    impact = impact_of()   # compute_store takes resolved settings, as a command hands them down
    compute_store(model, FillRequest(corpus, tmp_path / "count", impact=impact, shard_size=4, shard_seconds=None,
                                     progress=False))
    clock = FakeClock()
    monkeypatch.setattr(writer_module, "monotonic", lambda: (clock.work(), clock.now)[1])   # 1 s per look
    compute_store(model, FillRequest(corpus, tmp_path / "time", impact=impact, shard_seconds=2.5, progress=False))
    run = read_manifest(tmp_path / "time")["runs"][-1]
    assert run["shard_seconds"] == 2.5 and run["shard_size"] == 64
    assert _sizes(tmp_path / "time") != _sizes(tmp_path / "count") and sum(_sizes(tmp_path / "time")) == 9
    a, b = ImpactStore.open(tmp_path / "count"), ImpactStore.open(tmp_path / "time")
    assert a.indices == b.indices == list(range(9))
    for x, y in zip(a, b):
        assert x.pieces == y.pieces
        np.testing.assert_allclose(x.cls_matrix, y.cls_matrix, rtol=1e-5, atol=1e-6)
