"""Issue 18 (friction): ``pmask info STORE`` says which corpus, selection, sentences, layers, model and
settings a store holds, as text or JSON, from the manifest alone."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pmask.cli import main

from test_cli import SMALL


@pytest.fixture(scope="module")
def store(tmp_path_factory, tiny_bert_dir) -> Path:
    base = tmp_path_factory.mktemp("info")
    corpus = base / "small.conllu"
    corpus.write_text(SMALL, encoding="utf-8")
    out = base / "store"
    assert main(["impact", str(corpus), "--model", str(tiny_bert_dir), "--max-words", "4", "--layers", "1,3",
                 "--metric", "cos", "-q", "-o", str(out)]) == 0
    return out


def test_info_as_text(store, capsys, tiny_bert_dir, monkeypatch):
    from pmask.perturb.fill import model_spec

    monkeypatch.setattr(model_spec.ModelSpec, "load", lambda self: pytest.fail("info loaded a model"))
    assert main(["info", str(store)]) == 0
    out = capsys.readouterr().out
    assert "complete, 1 of 1 sentence stored" in out
    assert "small.conllu" in out and "read as conllu, limit none, max-words 4" in out
    assert str(Path(tiny_bert_dir).resolve()) in out and "BertForMaskedLM" in out
    assert "layers    1, 3" in out and "settings  probe pair, metric cos, subword avg, tokenize words" in out


def test_info_as_json(store, capsys):
    assert main(["info", str(store), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["corpus"]["selection"] == {"format": "conllu", "limit": None, "max_words": 4}
    assert info["sentences"] == {"stored": 1, "skipped_too_long": 0, "corpus": 1}
    assert info["layers"] == [1, 3] and info["settings"]["metric"] == "cos" and info["model"]["num_layers"] == 3
    assert info["settings"]["probe"] == "pair" and info["settings"]["heads"] is None


def test_info_on_something_else_is_one_line(tmp_path, capsys):
    assert main(["info", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.strip() == f"pmask: error: {tmp_path}: not an impact store (no manifest.json)"


def test_info_of_a_missing_path_says_it_does_not_exist(tmp_path, capsys):
    assert main(["info", str(tmp_path / "nosuch")]) == 1
    err = capsys.readouterr().err
    assert "no such file or directory" in err and "manifest" not in err
    (tmp_path / "empty").mkdir()
    assert main(["info", str(tmp_path / "empty")]) == 1
    assert "no manifest.json" in capsys.readouterr().err   # an existing folder that is no store


def run(args: list, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def small(tmp_path: Path) -> Path:
    path = tmp_path / "small.conllu"
    path.write_text(SMALL, encoding="utf-8")
    return path


def test_info_on_a_file_says_what_info_reads(small, capsys):
    code, _, err = run(["info", small], capsys)
    assert code == 1
    assert err.count("\n") == 1 and "Not a directory" not in err, err
    assert str(small) in err and "impact store" in err and "file" in err, err
