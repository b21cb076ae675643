"""The impact store: format roundtrip, manifest, atomic/resumable writing, refusals, corruption."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from dataclasses import replace

import numpy as np
import pytest

from pmask.common.errors import LayerError, StoreError
from pmask.corpora import Sentence
from pmask.perturb.engine.impact_settings import ImpactSettings
from pmask.perturb.store import (
    MANIFEST,
    CorpusInfo,
    ImpactStore,
    MissingSentenceError,
    StoreSettings,
    StoreWriter,
    plan_store,
    resolve_layers,
)

from store_fakes import SETTINGS, _fake, _sentences, _write

# ---------------------------------------------------------------------------- format

def test_roundtrip_odd_words_and_alignment(tmp_path):
    sents = _sentences()
    _write(tmp_path / "st", sents, skip={2})
    store = ImpactStore.open(tmp_path / "st")
    assert len(store) == 4 and store.complete
    assert store.ids == [s.id for k, s in enumerate(sents) if k != 2]
    assert [e["index"] for e in store.skipped] == [2]
    assert [item.index for item in store] == [0, 1, 3, 4]   # corpus order
    for k in (0, 1, 3, 4):
        fake = _fake(k, len(sents[k].words))
        for item in (store.get(k), store.get(sents[k].id), store[k]):
            assert item.words == sents[k].words and item.id == sents[k].id and item.index == k
            np.testing.assert_array_equal(item.cls_matrix, fake["matrix"])
            np.testing.assert_array_equal(item.matrix, fake["matrix"][:, 1:, 1:])
            assert item.matrix.dtype == np.float32 and item.layers == (1, 3)
            assert item.input_ids.tolist() == fake["input_ids"]
            assert item.word_index.tolist() == fake["word_index"]
            assert item.pieces == fake["pieces"]
    item = store.get(0)
    np.testing.assert_array_equal(item.layer(-1), item.matrix[1])     # -1 = layer 3 of 3
    np.testing.assert_array_equal(item.layer(3), item.matrix[1])
    np.testing.assert_array_equal(item.layer(1, cls=True), item.cls_matrix[0])
    assert item.layer_index(1) == 0 and item.layer_index(-3) == 0
    assert item.word_pieces(1) == ["p1·1", "p1·2"]
    with pytest.raises(StoreError, match="layer 2 is not stored"):
        item.layer(2)
    # skipped / unknown keys: get -> None, [] -> MissingSentenceError (StoreError and KeyError)
    assert store.get(2) is None and not store.has(2) and 2 not in store and sents[0].id in store
    with pytest.raises(MissingSentenceError, match="skipped: too_long"):
        store[2]
    with pytest.raises(KeyError):
        store["nope"]
    # no pickle anywhere: every file is JSON or safetensors
    for p in (tmp_path / "st").iterdir():
        assert p.name == MANIFEST or p.suffix == ".safetensors"


def test_manifest_fields(tmp_path):
    sents = _sentences()
    corpus_file = tmp_path / "corpus.txt"
    corpus_file.write_text("whatever\n", encoding="utf-8")
    corpus = CorpusInfo.of(sents, corpus_file)
    with StoreWriter.open(tmp_path / "st", SETTINGS, corpus, versions={"torch": "x"}, shard_size=2) as w:
        for k in w.remaining:
            if k == 4:
                w.skip(k, sents[k].id, 3)
            else:
                w.add(k, sents[k].id, sents[k].words, **_fake(k, len(sents[k].words)))
    m = json.loads((tmp_path / "st" / MANIFEST).read_text(encoding="ascii"))
    assert m["format"] == "pmask-impact-store" and m["format_version"] == 1 and m["complete"]
    assert m["model"]["name"] == "fake-model" and m["model"]["revision"] == "abc123"
    assert m["model"]["tokenizer"] == {"lowercase": True} and m["model"]["dtype"] == "float32"
    assert m["layers"] == {"requested": [1, -1], "resolved": [1, 3]}
    assert (m["metric"], m["subword"], m["include_cls"]) == ("dist", "avg", True)
    assert m["versions"] == {"torch": "x"} and m["created"] and m["runs"][0]["started"]
    assert m["corpus"]["path"] == str(corpus_file.resolve()) and len(m["corpus"]["sha256"]) == 64
    assert m["corpus"]["n_sentences"] == 5
    assert [s["file"] for s in m["shards"]] == ["shard-00000.safetensors", "shard-00001.safetensors"]
    entries = m["sentences"]
    assert [e["index"] for e in entries] == [0, 1, 2, 3, 4]
    assert entries[1] == {"index": 1, "id": sents[1].id, "n": 6, "key": "s1", "shard": "shard-00000.safetensors"}
    assert entries[4] == {"index": 4, "id": sents[4].id, "n": 3, "skipped": "too_long"}


def test_resolve_layers():
    assert resolve_layers([-1, 0, 2], 12) == (12, 0, 2)
    assert resolve_layers("all", 2) == (1, 2)      # layer 0 impacts are identically zero: not in "all"
    with pytest.raises(LayerError, match="layer 13 out of range"):
        resolve_layers([13], 12)
    with pytest.raises(LayerError, match="layer True is not an integer"):   # was a TypeError: not iterable
        resolve_layers(True, 12)


# ---------------------------------------------------------------------------- refusals

def test_existing_directory_needs_resume_or_overwrite(tmp_path):
    sents = _sentences()
    _write(tmp_path / "st", sents)
    already = "a store is already there; give resume to continue it, overwrite to replace it"
    with pytest.raises(StoreError, match=already):
        _write(tmp_path / "st", sents)
    with pytest.raises(StoreError, match="a store is already there; give resume"):
        plan_store(tmp_path / "st", sents, SETTINGS)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(StoreError, match="not an impact store"):
        _write(tmp_path / "other", sents, resume=True)
    # overwrite replaces the store's own files only
    _write(tmp_path / "other", sents[:2], overwrite=True)
    assert (tmp_path / "other" / "notes.txt").read_text() == "mine"
    assert len(ImpactStore.open(tmp_path / "other")) == 2
    with pytest.raises(StoreError, match="not a directory"):
        plan_store(tmp_path / "other" / "notes.txt", sents, SETTINGS)


@pytest.mark.parametrize("change, field", [
    ({"impact": ImpactSettings("cos", "avg", "words", "pair", 0)}, "metric: store has 'dist', requested 'cos'"),
    ({"impact": ImpactSettings("dist", "first", "words", "pair", 0)}, "subword: store has 'avg', requested 'first'"),
    ({"impact": ImpactSettings("dist", "avg", "text", "pair", 0)}, "tokenize: store has 'words', requested 'text'"),
    ({"model": "other-model"}, "model: store has 'fake-model', requested 'other-model'"),
    ({"revision": "def456"}, "revision: store has 'abc123', requested 'def456'"),
    ({"tokenizer": {"lowercase": False}}, "tokenizer: store has"),
    ({"random_init": True}, "random_init: store has False, requested True"),
])
def test_mismatched_settings_refused(tmp_path, change, field):
    sents = _sentences()
    _write(tmp_path / "st", sents[:3])
    other = replace(SETTINGS, **change)
    with pytest.raises(StoreError, match=field) as err:
        plan_store(tmp_path / "st", sents[:3], other, resume=True)
    assert "\n" not in str(err.value) and str(tmp_path / "st") in str(err.value)
    if other.layers_resolved is not None:   # the writer refuses the same way
        with pytest.raises(StoreError, match=field):
            _write(tmp_path / "st", sents[:3], settings=other, resume=True)


@pytest.mark.parametrize("change, missing", [
    ({"layers": (2,), "layers_resolved": (2,)}, [2]),
    ({"layers": (0, -1), "layers_resolved": None, "num_layers": None}, [0]),   # resolved with the store's depth
])
def test_missing_layers_are_planned_not_refused(tmp_path, change, missing):
    from pmask.perturb.store.plan import StorePlan, layers_to_add, plan_fill

    sents = _sentences()
    _write(tmp_path / "st", sents[:3])
    other = replace(SETTINGS, **change)
    assert plan_store(tmp_path / "st", sents[:3], other, resume=True) == []   # compute_store adds the layers
    assert plan_fill(tmp_path / "st", sents[:4], other, resume=True) == StorePlan([3], missing)
    assert not plan_fill(tmp_path / "st", sents[:3], other, resume=True).done
    assert plan_fill(tmp_path / "st", sents[:3], SETTINGS, resume=True).done
    assert layers_to_add(tmp_path / "st", other) == missing
    assert layers_to_add(tmp_path / "none", other) == []
    if other.layers_resolved is not None:   # the writer alone does not add layers
        with pytest.raises(StoreError, match=r"layers: store has \[1, 3\], requested \[2\]"):
            _write(tmp_path / "st", sents[:3], settings=other, resume=True)


def test_other_corpus_refused_but_subset_of_layers_accepted(tmp_path):
    sents = _sentences()
    _write(tmp_path / "st", sents[:3])
    # a longer list that starts with the stored sentences extends the store; a prefix needs nothing
    assert plan_store(tmp_path / "st", sents[:4], SETTINGS, resume=True) == [3]
    assert plan_store(tmp_path / "st", sents[:2], SETTINGS, resume=True) == []
    other_order = [sents[1], sents[0], sents[2], sents[3]]
    with pytest.raises(StoreError, match=r"corpus: store has 3 sentences .* requested 4 sentences"):
        plan_store(tmp_path / "st", other_order, SETTINGS, resume=True)
    changed = _sentences()[:3]
    changed[1].words[0] = "changed"
    with pytest.raises(StoreError, match="corpus: store has 3 sentences"):
        plan_store(tmp_path / "st", changed, SETTINGS, resume=True)
    # plan-time settings (model not loaded: no revision, no resolved layers) resolve -1 via the store
    early = StoreSettings(model="fake-model", impact=ImpactSettings("dist", "avg", "words", "pair", 0), layers=(-1,))
    assert plan_store(tmp_path / "st", sents[:3], early, resume=True) == []
    with pytest.raises(StoreError, match="random_init: store has False, requested True"):
        plan_store(tmp_path / "st", sents[:3], replace(early, model="random:fake-model"), resume=True)


# ---------------------------------------------------------------------------- corruption

def test_corrupt_or_missing_shard_is_a_store_error(tmp_path):
    sents = _sentences()
    _write(tmp_path / "st", sents)
    shard = tmp_path / "st" / "shard-00001.safetensors"
    data = bytearray(shard.read_bytes())
    data[-3] ^= 0xFF                                     # flip bits in the matrix data
    shard.write_bytes(bytes(data))
    store = ImpactStore.open(tmp_path / "st")
    store.get(0)                                          # other shards still read
    with pytest.raises(StoreError, match="shard-00001.safetensors: corrupt shard"):
        store.get(2)
    shard.write_bytes(bytes(data[:-10]))                  # truncated: even unverified reads fail
    with pytest.raises(StoreError, match="shard-00001.safetensors: corrupt shard"):
        ImpactStore.open(tmp_path / "st", verify=False).get(2)
    shard.unlink()
    with pytest.raises(StoreError, match="shard-00001.safetensors: shard missing"):
        ImpactStore.open(tmp_path / "st").get(3)
    with pytest.raises(StoreError, match="shard listed in the manifest is missing"):
        _write(tmp_path / "st", sents, resume=True)
    (tmp_path / "st" / MANIFEST).write_text("{ not json", encoding="utf-8")
    with pytest.raises(StoreError, match=r"manifest.json:1: corrupt manifest"):
        ImpactStore.open(tmp_path / "st")
    with pytest.raises(StoreError, match="not an impact store"):
        ImpactStore.open(tmp_path / "st" / "nothing-here")


def test_writer_rejects_wrong_shapes(tmp_path):
    sents = _sentences()
    with StoreWriter.open(tmp_path / "st", SETTINGS, CorpusInfo.of(sents)) as w:
        bad = _fake(0, len(sents[0].words))
        bad["matrix"] = bad["matrix"][:, 1:, 1:]
        with pytest.raises(StoreError, match=r"impact matrix has shape \(2, 10, 10\), expected \(2, 11, 11\)"):
            w.add(0, sents[0].id, sents[0].words, **bad)
        w.add(0, sents[0].id, sents[0].words, **_fake(0, len(sents[0].words)))
        with pytest.raises(StoreError, match="already stored"):
            w.skip(0, sents[0].id, 10)
    assert not ImpactStore.open(tmp_path / "st").complete


def test_one_writer_at_a_time(tmp_path):
    sents = _sentences()
    with StoreWriter.open(tmp_path / "st", SETTINGS, CorpusInfo.of(sents)), \
            pytest.raises(StoreError, match="another process is writing this store"):
        StoreWriter.open(tmp_path / "st", SETTINGS, CorpusInfo.of(sents), resume=True)
    StoreWriter.open(tmp_path / "st", SETTINGS, CorpusInfo.of(sents), resume=True).close()


# ---------------------------------------------------------------------------- interruption

def test_interrupted_writer_keeps_finished_sentences_and_resumes(tmp_path):
    sents = _sentences()
    corpus = CorpusInfo.of(sents)
    with pytest.raises(KeyboardInterrupt), StoreWriter.open(tmp_path / "st", SETTINGS, corpus, shard_size=2) as w:
        for k in w.remaining:
            if k == 3:
                raise KeyboardInterrupt
            w.add(k, sents[k].id, sents[k].words, **_fake(k, len(sents[k].words)))
    assert plan_store(tmp_path / "st", sents, SETTINGS, resume=True) == [3, 4]
    # a crash can leave a temp file and a shard the manifest never heard of: both are dropped
    (tmp_path / "st" / ".shard-00009.safetensors.tmp").write_bytes(b"partial")
    (tmp_path / "st" / "shard-00002.safetensors").write_bytes(b"orphan")
    _write(tmp_path / "st", sents, resume=True)
    _write(tmp_path / "ref", sents)
    assert sorted(p.name for p in (tmp_path / "st").iterdir()) == [
        MANIFEST, "shard-00000.safetensors", "shard-00001.safetensors", "shard-00002.safetensors"]
    a, b = ImpactStore.open(tmp_path / "st"), ImpactStore.open(tmp_path / "ref")
    assert a.complete and a.ids == b.ids
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.cls_matrix, y.cls_matrix)
        assert x.words == y.words and x.pieces == y.pieces


CHILD = textwrap.dedent("""
    import sys, time
    from types import SimpleNamespace
    import numpy as np
    from pmask.perturb.engine.impact_settings import ImpactSettings
    from pmask.perturb.store import CorpusInfo, StoreSettings, StoreWriter
    sents = [SimpleNamespace(id=str(k), words=["w"] * (k % 5 + 1)) for k in range(40)]
    settings = StoreSettings(model="m", impact=ImpactSettings("dist", "avg", "words", "pair", 0), layers=(-1,),
                             layers_resolved=(2,),
                             num_layers=2)
    w = StoreWriter.open(sys.argv[1], settings, CorpusInfo.of(sents), shard_size=3)
    for k in w.remaining:
        n = len(sents[k].words)
        w.add(k, sents[k].id, sents[k].words, np.full((1, n + 1, n + 1), k, np.float32),
              input_ids=[0] * n, word_index=list(range(n)), pieces=["w"] * n)
        if k == 7:
            print("flushed", flush=True)
        if k > 7:
            time.sleep(0.01)
    print("finished", flush=True)
""")


def test_kill_9_between_shards_then_resume(tmp_path):
    out = tmp_path / "st"
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(out)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "flushed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    store = ImpactStore.open(out)
    assert not store.complete and 6 <= len(store) < 40       # at least the first two shards survived
    for item in store:
        assert (item.cls_matrix == item.index).all()
    done = len(store)
    settings = StoreSettings(model="m", impact=ImpactSettings("dist", "avg", "words", "pair", 0), layers=(-1,),
                             layers_resolved=(2,),
                             num_layers=2)
    sents = [Sentence(id=str(k), words=["w"] * (k % 5 + 1)) for k in range(40)]
    with StoreWriter.open(out, settings, CorpusInfo.of(sents), resume=True, shard_size=3) as w:
        assert w.remaining == list(range(done, 40))
        for k in w.remaining:
            n = len(sents[k].words)
            w.add(k, sents[k].id, sents[k].words, np.full((1, n + 1, n + 1), k, np.float32),
                  input_ids=[0] * n, word_index=list(range(n)), pieces=["w"] * n)
    store = ImpactStore.open(out)
    assert store.complete and store.indices == list(range(40))
    assert all((item.cls_matrix == item.index).all() for item in store)


def test_store_interrupted_before_any_sentence_can_be_restarted(tmp_path):
    sents = _sentences()
    with pytest.raises(KeyboardInterrupt), StoreWriter.open(tmp_path / "st", SETTINGS, CorpusInfo.of(sents)):
        raise KeyboardInterrupt
    cos = replace(SETTINGS, impact=ImpactSettings("cos", "avg", "words", "pair", 0))
    assert plan_store(tmp_path / "st", sents, cos) == [0, 1, 2, 3, 4]


def test_reading_a_store_does_not_import_torch(tmp_path):
    _write(tmp_path / "st", _sentences())
    code = textwrap.dedent("""
        import sys
        from pmask.perturb.store import ImpactStore, export_store
        store = ImpactStore.open(sys.argv[1])
        assert sum(item.layer(-1).shape[0] for item in store) == 24
        export_store(sys.argv[1], sys.argv[2], "json")
        export_store(sys.argv[1], sys.argv[2] + ".csv", "csv")
        heavy = sorted(m for m in ("torch", "transformers") if m in sys.modules)
        print(",".join(heavy) or "none")
    """)
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "st"), str(tmp_path / "x.json")],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "none"
