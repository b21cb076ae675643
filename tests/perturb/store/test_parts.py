"""Several ranks writing one store (torch-free): disjoint shards, index parts, verified merges."""
from __future__ import annotations

import numpy as np
import pytest

from pmask.common.errors import StoreError
from pmask.perturb.store import MANIFEST, CorpusInfo, ImpactStore, StoreWriter, plan_store
from pmask.perturb.store.lock import WRITER_NOTE

from store_fakes import SETTINGS, _fake, _sentences, _write


def _rank_writers(path, sents, world_size, **kw):
    """Rank 0 opens the store, the others join: what compute_store does under torchrun."""
    first = StoreWriter.open(path, SETTINGS, CorpusInfo.of(sents), shard_size=1, world_size=world_size, **kw)
    return [first, *(StoreWriter.join(path, rank=r, world_size=world_size, shard_size=1)
                     for r in range(1, world_size))]


def _add(w, sents, k):
    w.add(k, sents[k].id, sents[k].words, **_fake(k, len(sents[k].words)))


def test_ranks_write_disjoint_shards_and_rank_0_merges(tmp_path):
    sents = _sentences()
    writers = _rank_writers(tmp_path / "st", sents, 2)
    for k in range(5):
        _add(writers[k % 2], sents, k)
    for w in writers:
        w.flush()
    names = sorted(p.name for p in (tmp_path / "st").iterdir())
    assert names == [WRITER_NOTE, MANIFEST, "part-00000.json", "part-00001.json",   # rank 0 holds the lock
                     *(f"shard-0000{k}.safetensors" for k in range(5))]
    assert len(ImpactStore.open(tmp_path / "st")) == 0          # nothing is read before rank 0 merges
    writers[0].merge_parts()
    for w in writers:
        w.close()
    _write(tmp_path / "ref", sents)
    a, b = ImpactStore.open(tmp_path / "st"), ImpactStore.open(tmp_path / "ref")
    assert a.complete and a.indices == b.indices and not list((tmp_path / "st").glob("part-*"))
    assert not (tmp_path / "st" / WRITER_NOTE).exists()   # removed with the lock
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.cls_matrix, y.cls_matrix)


def test_parts_of_a_killed_run_are_verified_and_merged_on_resume(tmp_path):
    sents = _sentences()
    writers = _rank_writers(tmp_path / "st", sents, 3)
    for k in range(5):
        _add(writers[k % 3], sents, k)
        writers[k % 3].flush()
    st = tmp_path / "st"
    (st / "shard-00004.safetensors").write_bytes((st / "shard-00004.safetensors").read_bytes()[:-1])  # sentence 4
    data = bytearray((st / "shard-00001.safetensors").read_bytes())                                    # sentence 1
    data[-2] ^= 1
    (st / "shard-00001.safetensors").write_bytes(bytes(data))
    (st / "shard-00007.safetensors").write_bytes(b"written, never listed")
    for w in writers:   # the ranks die without a merge; rank 0's lock goes with it
        w._pending = type(w._pending)()
        w.close()
    with pytest.raises(StoreError, match="a store is already there; give resume"):
        plan_store(st, sents, SETTINGS)
    assert plan_store(st, sents, SETTINGS, resume=True) == [0, 1, 2, 3, 4]   # planning reads the manifest only
    with StoreWriter.open(st, SETTINGS, CorpusInfo.of(sents), resume=True, shard_size=2) as w:   # one process now
        assert w.remaining == [1, 4]
        for k in w.remaining:
            _add(w, sents, k)
    assert sorted(p.name for p in st.iterdir()) == [MANIFEST, *(f"shard-0000{k}.safetensors" for k in (0, 2, 3, 4))]
    _write(tmp_path / "ref", sents)
    a, b = ImpactStore.open(st), ImpactStore.open(tmp_path / "ref")
    assert a.complete and a.indices == b.indices
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.cls_matrix, y.cls_matrix)


def test_unreadable_part_and_overwrite(tmp_path):
    sents = _sentences()
    writers = _rank_writers(tmp_path / "st", sents, 2)
    _add(writers[1], sents, 1)
    writers[1].flush()
    for w in writers:
        w.close()
    (tmp_path / "st" / "part-00001.json").write_text("{ torn", encoding="ascii")
    with StoreWriter.open(tmp_path / "st", SETTINGS, CorpusInfo.of(sents), resume=True) as w:
        assert w.remaining == [0, 1, 2, 3, 4]                 # its shard is an orphan now: removed
    assert sorted(p.name for p in (tmp_path / "st").iterdir()) == [MANIFEST]
    writers = _rank_writers(tmp_path / "st", sents, 2, resume=True)
    _add(writers[1], sents, 1)
    writers[1].flush()
    for w in writers:
        w.close()
    _write(tmp_path / "st", sents[:2], overwrite=True)
    assert not list((tmp_path / "st").glob("part-*")) and len(ImpactStore.open(tmp_path / "st")) == 2


def test_merge_interrupted_before_the_parts_were_deleted(tmp_path, monkeypatch):
    import pmask.perturb.store.writer as writer_module

    sents, st = _sentences(), tmp_path / "st"
    writers = _rank_writers(st, sents, 2)
    for k in range(5):
        _add(writers[k % 2], sents, k)
    for w in writers:
        w.flush()
    monkeypatch.setattr(writer_module, "remove_parts", lambda parts: None)   # killed right after the manifest write
    writers[0].merge_parts()
    for w in writers:
        w.close()
    monkeypatch.undo()
    assert len(list(st.glob("part-*.json"))) == 2 and ImpactStore.open(st).complete
    with StoreWriter.open(st, SETTINGS, CorpusInfo.of(sents), resume=True) as w:
        assert w.remaining == []
    store = ImpactStore.open(st)
    assert not list(st.glob("part-*.json")) and len(store.manifest["shards"]) == 5   # merged once, not twice
    assert store.indices == [0, 1, 2, 3, 4]
