"""export_store and ``pmask export``: .npy, CSV and JSON hold exactly the stored word-level matrices."""
from __future__ import annotations

import csv
import json
from types import SimpleNamespace

import numpy as np
import pytest

from pmask.cli import main
from pmask.common.errors import StoreError
from pmask.perturb.engine.impact_settings import ImpactSettings
from pmask.perturb.store import CorpusInfo, ImpactStore, StoreSettings, StoreWriter, export_store

WORDS = [["Die", "Katze", "schläft", "."], ["a,b", '"q"', "x"], ["too", "long"], ["one"]]
SETTINGS = StoreSettings(model="fake", impact=ImpactSettings("dist", "avg", "words", "pair", 0), layers=(1, -1),
                         layers_resolved=(1, 3), num_layers=3)


@pytest.fixture()
def store(tmp_path):
    sents = [SimpleNamespace(id=f"s{k}", words=w) for k, w in enumerate(WORDS)]
    rng = np.random.default_rng(0)
    with StoreWriter.open(tmp_path / "st", SETTINGS, CorpusInfo.of(sents), shard_size=2) as w:
        for k, s in enumerate(sents):
            if k == 2:
                w.skip(k, s.id, 2)
                continue
            n = len(s.words)
            w.add(k, s.id, s.words, rng.standard_normal((2, n + 1, n + 1)).astype(np.float32),
                  input_ids=list(range(n + 2)), word_index=[-1, *range(n), -1], pieces=["p"] * (n + 2))
    return tmp_path / "st"


def test_npy_folder_and_index(store, tmp_path):
    written = export_store(store, tmp_path / "npy", "npy")
    ref = ImpactStore.open(store)
    index = json.loads((tmp_path / "npy" / "index.json").read_text(encoding="utf-8"))
    assert index["layers"] == [1, 3] and [e["index"] for e in index["skipped"]] == [2]
    assert [e["id"] for e in index["sentences"]] == ["s0", "s1", "s3"]
    assert len(written) == 3 * 2 + 1
    for entry in index["sentences"]:
        item = ref[entry["index"]]
        assert entry["words"] == item.words
        for layer, name in entry["files"].items():
            got = np.load(tmp_path / "npy" / name)
            assert got.dtype == np.float32 and got.shape == (len(item), len(item))
            np.testing.assert_array_equal(got, item.layer(int(layer)))


def test_csv_round_trips_float32_and_quotes_words(store, tmp_path):
    export_store(store, tmp_path / "csv", "csv", layers=[-1])
    item = ImpactStore.open(store)[1]
    with open(tmp_path / "csv" / "00001-layer03.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["", *item.words] and [r[0] for r in rows[1:]] == item.words
    values = np.array([[float(v) for v in r[1:]] for r in rows[1:]], dtype=np.float32)
    np.testing.assert_array_equal(values, item.layer(3))
    assert sorted(p.name for p in (tmp_path / "csv").iterdir()) == [
        "00000-layer03.csv", "00001-layer03.csv", "00003-layer03.csv", "index.json"]


def test_json_document(store, tmp_path):
    export_store(store, tmp_path / "m.json", "json", layers=[1])
    doc = json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))
    assert doc["model"] == "fake" and doc["layers"] == [1] and "impact of word j on word i" in doc["matrix"]
    ref = ImpactStore.open(store)
    assert [s["id"] for s in doc["sentences"]] == ref.ids
    for s in doc["sentences"]:
        np.testing.assert_array_equal(np.array(s["matrices"]["1"], dtype=np.float32), ref[s["id"]].layer(1))


def test_refusals(store, tmp_path):
    with pytest.raises(StoreError, match=r"layer 2 is not stored \(stored: \[1, 3\]\)"):
        export_store(store, tmp_path / "x", "npy", layers=[2])
    with pytest.raises(StoreError, match="unknown export format 'xml'"):
        export_store(store, tmp_path / "x", "xml")
    with pytest.raises(StoreError, match="into the store"):
        export_store(store, store / "csv", "csv")
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreError, match="not a directory"):
        export_store(store, tmp_path / "file", "csv")
    with pytest.raises(StoreError, match="is a directory"):
        export_store(store, tmp_path, "json")
    with pytest.raises(StoreError, match="not an impact store"):
        export_store(tmp_path / "nothing", tmp_path / "y", "npy")


def test_cli_export(store, tmp_path, capsys):
    assert main(["export", str(store), "--format", "json", "--layer", "-1", "-o", str(tmp_path / "e.json")]) == 0
    assert "wrote 1 file" in capsys.readouterr().err
    assert json.loads((tmp_path / "e.json").read_text(encoding="utf-8"))["layers"] == [3]
    assert main(["export", str(store), "--layer", "5", "-o", str(tmp_path / "n")]) == 1
    assert "layer 5 is not stored" in capsys.readouterr().err
