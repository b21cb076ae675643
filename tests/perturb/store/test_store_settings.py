"""Issue 37: a store records the unit of its records (``Sentence.unit``: words, or a document's EDUs). The
same texts read as words and as EDUs give other numbers (other inputs, other pooling, a [CLS] unit masked
like an EDU), so a store made over one unit is refused in one line when resumed or read for the other; the
old stores compared only the (id, texts) of the records, which are the same, and mixed them silently."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pmask.cli import main
from pmask.perturb.store import ImpactStore, read_manifest

#: two documents of EDUs, one EDU per row (pmask's own CoNLL-U for documents: ``# units = EDU``)
ROWS = [["We present a parser", "that reads discourse .", "It is fast ."],
        ["Masked models know syntax ,", "we show ."]]


def _conllu(path: Path, units: bool) -> Path:
    """The same records as documents of EDUs (``units``) or as sentences whose words hold spaces."""
    blocks = []
    for k, rows in enumerate(ROWS):
        head = [f"# sent_id = d{k}"] + (["# units = EDU"] if units else [])
        body = [f"{i + 1}\t{form}\t_\t_\t_\t_\t{0 if i == 0 else 1}\t_\t_\t_" for i, form in enumerate(rows)]
        blocks.append("\n".join(head + body) + "\n")
    path.write_text("\n".join(blocks) + "\n", encoding="utf-8")
    return path


@pytest.fixture()
def corpora(tmp_path):
    return {"edu": _conllu(tmp_path / "docs.conllu", True), "word": _conllu(tmp_path / "words.conllu", False)}


def _refusal(err: str, store: Path, held: str, asked: str) -> None:
    lines = [line for line in err.splitlines() if line.startswith("pmask: error")]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert f"{store}: store was made with other settings: unit: store has '{held}', requested '{asked}'" in lines[0]


@pytest.mark.parametrize("held, asked", [("word", "edu"), ("edu", "word")])
def test_a_store_is_resumed_only_for_its_own_unit(corpora, tiny_bert_dir, tmp_path, capsys, held, asked):
    store = tmp_path / "st"
    model = ["--model", str(tiny_bert_dir), "-q"]
    assert main(["impact", str(corpora[held]), *model, "--limit", "1", "-o", str(store)]) == 0
    before = ImpactStore.open(store)[0].cls_matrix.copy()
    capsys.readouterr()
    code = main(["impact", str(corpora[asked]), *model, "--resume", "-o", str(store)])
    err = capsys.readouterr().err
    assert code == 1, err
    _refusal(err, store, held, asked)
    after = ImpactStore.open(store)
    assert len(after) == 1 and np.array_equal(after[0].cls_matrix, before)   # nothing added, nothing changed
    assert read_manifest(store)["corpus"]["unit"] == held
    # a cache store (parse --store) is refused the same way, before any tree is written
    out = tmp_path / "trees.conllu"
    code = main(["parse", str(corpora[asked]), *model, "--store", str(store), "--root", "gold", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 1 and not out.exists(), err
    _refusal(err, store, held, asked)


@pytest.mark.parametrize("held, asked", [("word", "edu"), ("edu", "word")])
def test_a_store_is_read_only_for_its_own_unit(corpora, tiny_bert_dir, tmp_path, capsys, held, asked):
    store = tmp_path / "st"
    assert main(["impact", str(corpora[held]), "--model", str(tiny_bert_dir), "-q", "-o", str(store)]) == 0
    capsys.readouterr()
    out = tmp_path / "trees.conllu"
    # the store read with the other file as its corpus (same ids and texts: the words check passes)
    code = main(["parse", str(store), "--corpus", str(corpora[asked]), "--decoder", "eisner", "--root", "gold",
                 "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 1 and not out.exists(), err
    _refusal(err, store, held, asked)
    # a cache store read without a model
    code = main(["parse", str(corpora[asked]), "--store", str(store), "--decoder", "eisner", "--root", "gold",
                 "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 1 and not out.exists(), err
    _refusal(err, store, held, asked)


def test_a_store_from_before_the_unit_was_recorded_is_read_as_before(corpora, tiny_bert_dir, tmp_path, capsys):
    """(A guard, passes on the old code too: a manifest without a unit is not compared.)"""
    store = tmp_path / "st"
    assert main(["impact", str(corpora["edu"]), "--model", str(tiny_bert_dir), "-q", "-o", str(store)]) == 0
    manifest = json.loads((store / "manifest.json").read_text(encoding="utf-8"))
    manifest["corpus"].pop("unit", None)
    (store / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    out = tmp_path / "trees.conllu"
    assert main(["parse", str(store), "--decoder", "eisner", "--root", "gold", "-o", str(out)]) == 0
    assert out.is_file()
