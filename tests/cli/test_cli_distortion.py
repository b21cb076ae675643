"""Probe distortion and decoder cky at the command line: trees, stores, refusals before model work."""
from __future__ import annotations

import json

import pytest

from pmask.cli import main
from pmask.corpora import read_corpus
from pmask.perturb.testing import TINY_SENTENCES


def run(args: list, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def text(tmp_path):
    path = tmp_path / "tiny.txt"
    path.write_text("\n".join(" ".join(s[:7]) for s in TINY_SENTENCES[:4]) + "\n", encoding="utf-8")
    return path


def test_parse_defaults_to_cky_and_a_store_gives_the_same_trees(tiny_bert_dir, text, tmp_path, capsys):
    from pmask.perturb.models.load import load_model
    from pmask.perturb.probes import probe_matrices
    from pmask.trees.cky import cky

    direct, stored = tmp_path / "direct.txt", tmp_path / "stored.txt"
    code, _, err = run(["parse", text, "--model", tiny_bert_dir, "--probe", "distortion", "--metric", "sub",
                        "--layer", 2, "--root", "free", "-q", "-o", direct], capsys)
    assert code == 0, err
    meta = json.loads((tmp_path / "direct.txt.meta.json").read_text(encoding="utf-8"))
    assert meta["settings"]["decoder"] == "cky" and meta["impact"]["probe"] == "distortion"
    assert meta["impact"]["metric"] == "sub"
    lm = load_model(str(tiny_bert_dir), device="cpu")
    sentences = read_corpus(text)
    want = [str(cky(F[0], s.words)) for s, F in
            zip(sentences, probe_matrices(lm, [s.words for s in sentences], "distortion", layers=[2], metric="sub"))]
    assert [line.strip() for line in direct.read_text(encoding="utf-8").splitlines()] == [
        " ".join(w.split()) for w in want]

    store = tmp_path / "store"
    code, _, err = run(["impact", text, "--model", tiny_bert_dir, "--probe", "distortion", "--metric", "sub",
                        "--layers", "all", "-q", "-o", store], capsys)
    assert code == 0, err
    manifest = json.loads((store / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["probe"] == "distortion" and "span chart" in manifest["definitions"]["matrix"]
    code, _, err = run(["parse", store, "--layer", 2, "--root", "free", "-q", "-o", stored], capsys)
    assert code == 0, err
    assert stored.read_text(encoding="utf-8") == direct.read_text(encoding="utf-8")
    code, _, err = run(["parse", store, "--layer", 2, "--decoder", "cky", "--faithful", "-q", "-o", stored], capsys)
    assert code == 0, err
    code, _, err = run(["heatmap", store, "--sentence", "0-1", "--pred", stored, "-q", "-o", tmp_path / "maps"],
                       capsys)
    assert code == 0, err
    assert len(list((tmp_path / "maps").glob("*.png"))) == 2


@pytest.mark.parametrize("args, message", [
    (["--probe", "distortion", "--decoder", "mart"], "--probe distortion gives span charts, which --decoder mart"),
    (["--probe", "distortion", "--decoder", "eisner", "--root", "free"], "which --decoder eisner cannot read"),
    (["--probe", "pair", "--decoder", "cky"], "--decoder cky reads span charts (probe distortion), not the word-pair"),
    (["--probe", "distance", "--decoder", "cky"], "--decoder cky reads span charts"),
    (["--probe", "pair", "--decoder", "cky", "--faithful"], "--decoder cky reads span charts"),
    (["--probe", "distortion", "--decoder", "right-branching", "--faithful"], "is the authors' pipeline, whose decoder"),
])
def test_impossible_pairings_are_refused_in_one_line_before_the_model(text, tmp_path, capsys, args, message):
    missing = tmp_path / "no-such-model"      # loading it would fail: the refusal must come first
    suffix = ".conllu" if "eisner" in args else ".txt"
    code, out, err = run(["parse", text, "--model", missing, *args, "-o", tmp_path / f"out{suffix}"], capsys)
    assert code == 1 and out == ""
    lines = [line for line in err.splitlines() if line.startswith("pmask: error")]
    assert len(lines) == 1 and message in lines[0], err
    assert not list(tmp_path.glob("out*"))
