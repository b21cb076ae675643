"""Issue 33, items 1, 2 and 10: no ``--model`` means the bundled pmask-tiny-en exactly as naming it does.

1. A ``--store`` cache made without ``--model`` and interrupted says what it kept, and rerunning the
   same command continues it (as with ``--model DIR``).
2. Stores made either way are interchangeable (``parse``, ``sweep``): the model's recorded defaults
   apply whether it was named or not, and whether the store exists yet or not.
10. "no model given: using the bundled …" is said only when that model is loaded.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pmask.cli import main
from pmask.perturb.models import bundled
from pmask.perturb.models.bundled import DEFAULT_MODEL, bundled_model
from pmask.perturb.store import read_manifest
from test_cli import SMALL

NOTE = "no model given: using the bundled pmask-tiny-en"


@pytest.fixture()
def small(tmp_path: Path) -> Path:
    path = tmp_path / "small.conllu"
    path.write_text(SMALL, encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def fresh_note(monkeypatch):
    """The default-model note is said once per process: forget that it was said."""
    monkeypatch.setattr(bundled, "_announced", set())


@pytest.fixture()
def ctrl_c_on_second_sentence(monkeypatch):
    """Ctrl-C arrives while the second sentence is being stored (once: a rerun is not interrupted)."""
    from pmask.perturb.store.writer import StoreWriter

    original, calls = StoreWriter.add, []

    def add(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return original(self, *args, **kwargs)

    monkeypatch.setattr(StoreWriter, "add", add)


def _stored(store: Path) -> int:
    return sum(1 for e in read_manifest(store)["sentences"] if "skipped" not in e)


def test_an_interrupted_default_model_cache_says_what_it_kept_and_the_same_command_continues_it(
        small, tmp_path, capsys, ctrl_c_on_second_sentence):
    store, out = tmp_path / "cache", tmp_path / "x.conllu"
    command = ["parse", str(small), "--store", str(store), "-o", str(out)]
    assert main([*command, "-q"]) == 130
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert "nothing was" not in err                                  # it was: one sentence is in the store
    assert "keeps 1 finished sentence;" in err and "rerun the same command" in err
    assert _stored(store) == 1 and not out.exists()

    assert main(command) == 0                                        # the same command again: it continues
    err = capsys.readouterr().err
    assert "1 computed, 1 reused" in err and "unfinished store" not in err, err
    assert _stored(store) == 2 and out.is_file()
    assert read_manifest(store)["model"]["name"] == DEFAULT_MODEL


def test_an_unfinished_cache_of_another_model_is_still_refused_without_model(small, tmp_path, capsys,
                                                                             tiny_bert_dir,
                                                                             ctrl_c_on_second_sentence):
    """Only the command that made the store continues it: a store of another model is not continued
    with the bundled one (nor with its own, which was not named)."""
    store = tmp_path / "cache"
    assert main(["parse", str(small), "--model", str(tiny_bert_dir), "--store", str(store), "-q",
                 "-o", str(tmp_path / "x.conllu")]) == 130
    capsys.readouterr()
    assert main(["parse", str(small), "--store", str(store), "-o", str(tmp_path / "y.conllu")]) == 1
    err = capsys.readouterr().err
    assert "unfinished store" in err and "--resume" in err and NOTE not in err
    assert _stored(store) == 1


@pytest.mark.parametrize("first, second", [([], ["--model", DEFAULT_MODEL]), (["--model", DEFAULT_MODEL], [])])
def test_stores_made_with_and_without_naming_the_bundled_model_are_interchangeable(small, tmp_path, capsys,
                                                                                   first, second):
    store = tmp_path / "cache"
    assert main(["parse", str(small), *first, "--store", str(store), "-q", "-o", str(tmp_path / "a.conllu")]) == 0
    assert read_manifest(store)["metric"] == bundled_model(DEFAULT_MODEL).defaults["metric"]
    capsys.readouterr()
    assert main(["parse", str(small), *second, "--store", str(store), "-o", str(tmp_path / "b.conllu")]) == 0
    err = capsys.readouterr().err
    assert "0 computed" in err or "computed" not in err, err          # read, not computed again
    assert (tmp_path / "a.conllu").read_text() == (tmp_path / "b.conllu").read_text()
    assert main(["sweep", str(small), *second, "--store", str(store), "--layers", "2", "--json",
                 str(tmp_path / "s.json")]) == 0, capsys.readouterr().err
    assert json.loads((tmp_path / "s.json").read_text())["meta"]["metric"] == "prob"


def test_a_named_bundled_model_takes_its_defaults_into_an_existing_empty_store(small, tmp_path, capsys):
    """An unfinished store made with the bundled model's defaults is continued by naming it too."""
    store = tmp_path / "cache"
    assert main(["impact", str(small), "--limit", "1", "-q", "-o", str(store)]) == 0
    assert main(["parse", str(small), "--limit", "1", "--model", DEFAULT_MODEL, "--store", str(store), "-q",
                 "-o", str(tmp_path / "p.conllu")]) == 0, capsys.readouterr().err


@pytest.mark.parametrize("bad, said", [("nosuch.conllu", "no such file"), ("a.png", "not UTF-8")])
def test_no_note_before_an_unrelated_one_line_error(tmp_path, capsys, monkeypatch, bad, said):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    assert main(["parse", bad, "-o", "p.conllu"]) == 1
    err = capsys.readouterr().err
    assert said in err and NOTE not in err and len(err.strip().splitlines()) == 1, err


def test_no_note_when_a_complete_store_is_resumed_without_loading_the_model(small, tmp_path, capsys, monkeypatch):
    store = tmp_path / "s"
    assert main(["impact", str(small), "-o", str(store)]) == 0
    assert capsys.readouterr().err.count(NOTE) == 1                   # it was loaded: said once
    monkeypatch.setattr(bundled, "_announced", set())
    assert main(["impact", str(small), "-o", str(store), "--resume"]) == 0
    err = capsys.readouterr().err
    assert "reused (store complete)" in err and NOTE not in err, err
