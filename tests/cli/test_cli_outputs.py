"""Issue 18, defects 4 and 8 (layer 0): every output and every model-free setting is checked before
anything is loaded; outputs behave like shell redirection (a missing folder is an error)."""
from __future__ import annotations

from pathlib import Path

import pytest

from pmask.cli import main
from test_cli import SMALL


@pytest.fixture()
def small(tmp_path: Path) -> Path:
    path = tmp_path / "small.conllu"
    path.write_text(SMALL, encoding="utf-8")
    return path


@pytest.fixture()
def no_model(monkeypatch):
    """Loading a model fails the test: the refusals must come before any model work."""
    from pmask.perturb.fill import model_spec

    def load(self):
        raise AssertionError("the model was loaded before the output was checked")

    monkeypatch.setattr(model_spec.ModelSpec, "load", load)


def run(args: list, capsys) -> tuple[int, str]:
    code = main([str(a) for a in args])
    err = capsys.readouterr().err
    return code, err


def one_line_error(code: int, err: str, *parts: str) -> None:
    assert code == 1, err
    assert err.startswith("pmask: error: ") and len(err.strip().splitlines()) == 1, err
    for part in parts:
        assert part in err, err


@pytest.mark.parametrize("make", [
    lambda t: ["parse", "{small}", "--model", "m", "-o", t / "folder"],
    lambda t: ["impact", "{small}", "--model", "m", "-o", t / "missing" / "store"],
    lambda t: ["sweep", "{small}", "--model", "m", "--plot", t / "layers.jpg"],
    lambda t: ["sweep", "{small}", "--model", "m", "--json", t / "missing" / "s.json"],
    lambda t: ["heatmap", "{small}", "--model", "m", "-s", "a1", "-o", t / "map.jpg"],
    lambda t: ["parse", "{small}", "--model", "m", "--store", t / "missing" / "cache", "-o", t / "p.conllu"],
    lambda t: ["bench", "{small}", "--model", "m", "-o", t / "missing" / "study"],
    lambda t: ["parse", "{small}", "--model", "m", "-o", t / "blocker" / "x.conllu"],
    lambda t: ["parse", "{small}", "--model", "m", "-o", t / "q.conllu"],     # its .meta.json is a folder
])
def test_impossible_outputs_are_refused_before_the_model_is_loaded(make, small, tmp_path, capsys, no_model):
    (tmp_path / "folder").mkdir()
    (tmp_path / "q.conllu.meta.json").mkdir()
    (tmp_path / "blocker").write_text("a file where a folder should be")
    args = [str(a).replace("{small}", str(small)) for a in make(tmp_path)] + ["-q"]
    code, err = run(args, capsys)
    one_line_error(code, err, "cannot write")
    assert not (tmp_path / "missing").exists()


def test_a_missing_folder_is_an_error_not_created(small, tmp_path, capsys):
    out = tmp_path / "nonexistent" / "dir" / "x.conllu"
    code, err = run(["parse", small, "--decoder", "right-chain", "-o", out], capsys)
    one_line_error(code, err, "folder", "does not exist")
    assert not (tmp_path / "nonexistent").exists()


def test_folders_a_command_creates_need_only_their_parent(small, tmp_path, capsys, tiny_bert_dir):
    store = tmp_path / "store"
    code, err = run(["impact", small, "--model", tiny_bert_dir, "--layers", "1", "-q", "-o", store], capsys)
    assert code == 0, err
    code, err = run(["heatmap", store, "-s", "all", "--layer", "1", "-q", "-o", tmp_path / "maps"], capsys)
    assert code == 0, err
    assert len(list((tmp_path / "maps").glob("*.png"))) == 2
    code, err = run(["export", store, "--format", "csv", "-o", tmp_path / "gone" / "csv"], capsys)
    one_line_error(code, err, "does not exist")


def test_parse_to_standard_output_writes_no_side_file(small, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["parse", str(small), "--decoder", "right-chain", "-q", "-o", "-"]) == 0
    assert "# sent_id = a1" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["small.conllu"]


def test_report_output_is_checked_before_reading(small, tmp_path, capsys):
    pred = tmp_path / "rc.conllu"
    assert run(["parse", small, "--decoder", "right-chain", "-q", "-o", pred], capsys)[0] == 0
    code, err = run(["report", pred, "--gold", small, "-o", tmp_path / "missing" / "r.html"], capsys)
    one_line_error(code, err, "does not exist")


# ---------------------------------------------------------------------------- defect 8: layer 0, up front

@pytest.mark.parametrize("args", [
    ["parse", "{small}", "--model", "m", "--layer", "0", "-o", "{tmp}/p.conllu"],
    ["sweep", "{small}", "--model", "m", "--layers", "0,1"],
    ["bench", "{small}", "--model", "m", "--layers", "0,2", "-o", "{tmp}/study"],
])
def test_decoding_layer_0_is_refused_before_any_model_work(args, small, tmp_path, capsys, no_model):
    code, err = run([a.replace("{small}", str(small)).replace("{tmp}", str(tmp_path)) for a in args], capsys)
    one_line_error(code, err, "layer 0", "all zeros", "from 1 up")
    assert not (tmp_path / "study").exists()


def test_layer_0_can_still_be_stored_and_drawn(small, tmp_path, capsys, tiny_bert_dir):
    store = tmp_path / "store"
    code, err = run(["impact", small, "--model", tiny_bert_dir, "--layers", "0,1", "-q", "-o", store], capsys)
    assert code == 0, err
    code, err = run(["heatmap", store, "-s", "a1", "--layer", "0", "-q", "-o", tmp_path / "l0.svg"], capsys)
    assert code == 0, err
    code, err = run(["parse", store, "--layer", "0", "-o", tmp_path / "l0.conllu"], capsys)
    one_line_error(code, err, "--layer 0", "all zeros")


def test_a_late_all_zero_error_closes_the_engine_first(small, tiny_bert_dir):
    """The backstop (a negative layer that turns out to be layer 0) stops the engine's generator, so
    its progress bar is closed before the error is printed."""
    from pmask.common.errors import SettingError
    from pmask.pipeline.induce import ParseSettings, parse_sentences
    from pmask.corpora.corpus_spec import CorpusSpec
    import numpy as np

    closed = []

    def impacts():
        try:
            while True:
                yield type("I", (), {"F": np.zeros((5, 5)), "F_cls": None})()
        finally:
            closed.append(True)

    sentences = CorpusSpec(small).read()
    stream = impacts()   # held here too, as a reference cycle would hold it: only an explicit close() ends it
    with pytest.raises(SettingError, match="all zeros"):
        list(parse_sentences(sentences, stream, ParseSettings(layer=-4)))
    assert closed == [True]


def test_sweep_without_gold_is_refused_before_any_model_work(tmp_path, capsys, no_model):
    text = tmp_path / "plain.txt"
    text.write_text("the cat sat\ndogs bark\n", encoding="utf-8")
    code, err = run(["sweep", text, "--model", "m", "--root", "free", "-q"], capsys)
    one_line_error(code, err, "no gold heads", "sweep needs a gold corpus")   # text: the dependency default
    code, err = run(["sweep", text, "--model", "m", "--decoder", "eisner", "-q"], capsys)
    one_line_error(code, err, "--root gold needs gold heads")
