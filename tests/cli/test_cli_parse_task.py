"""``parse`` follows the input's task: bracketed (PTB) input defaults to the constituency decoder as
``sweep`` does, and an output named for the other kind of tree is refused before any work."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pmask.corpora import Sentence, read_corpus
from pmask.trees.tasks import default_decoder

from test_cli import run

DATA = Path(__file__).resolve().parents[1] / "data"
MRG, CONLLU, TEXT = DATA / "mini.mrg", DATA / "mini.conllu", DATA / "mini.txt"
NO_MODEL = "/nonexistent/model"   # a refusal that names it came after the checks


@pytest.mark.parametrize("path, decoder", [(MRG, "mart"), (CONLLU, "eisner"), (TEXT, "eisner")])
def test_the_default_decoder_follows_the_gold_trees_of_the_input(path, decoder):
    assert default_decoder(read_corpus(path)) == decoder
    assert default_decoder([]) == "eisner"
    assert default_decoder([Sentence(id="1", words=["a", "b"], tree=read_corpus(MRG)[0].tree)]) == "mart"


def test_parse_defaults_to_mart_on_ptb_input(tmp_path, tiny_bert_dir, capsys):
    out = tmp_path / "wsj.txt"
    code, _, err = run(["parse", MRG, "--model", tiny_bert_dir, "-q", "-o", out], capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "wsj.txt.meta.json").read_text())["settings"]["decoder"] == "mart"
    assert all(line.startswith("(") for line in out.read_text(encoding="utf-8").splitlines())
    store = tmp_path / "store"   # a store made from PTB input: the same default
    assert run(["impact", MRG, "--model", tiny_bert_dir, "-q", "-o", store], capsys)[0] == 0
    code, _, err = run(["parse", store, "-q", "-o", tmp_path / "again.txt"], capsys)
    assert code == 0, err
    assert (tmp_path / "again.txt").read_text(encoding="utf-8") == out.read_text(encoding="utf-8")


@pytest.mark.parametrize("source, flags, output, says", [
    (MRG, ["--decoder", "right-chain", "--root", "free"], "x.txt", "name the output .conllu"),
    (CONLLU, ["--decoder", "eisner", "--model", NO_MODEL], "x.txt", "name the output .conllu"),
    (CONLLU, ["--decoder", "right-chain", "--root", "free"], "x", "name the output .conllu"),
    (MRG, ["--decoder", "right-branching"], "x.conllu", "not CoNLL-U"),
    (MRG, ["--decoder", "mart", "--model", NO_MODEL], "x.conll", "not CoNLL-U"),
    (MRG, ["--model", NO_MODEL], "x.conllu", "not CoNLL-U"),   # the default decoder, mart
])
def test_an_output_named_for_the_other_kind_of_tree_is_refused_before_any_work(tmp_path, capsys, source, flags,
                                                                                output, says):
    code, _, err = run(["parse", source, *flags, "-o", tmp_path / output], capsys)
    assert code == 1 and err.count("\n") == err.count("pmask: error:") + err.count("pmask: read"), err
    assert f"{tmp_path / output}: --decoder" in err and says in err and NO_MODEL not in err
    assert list(tmp_path.iterdir()) == []


def test_a_dependency_decoder_on_ptb_input_points_to_the_constituency_decoders(tmp_path, capsys):
    code, _, err = run(["parse", MRG, "--decoder", "right-chain", "-o", tmp_path / "x.conllu"], capsys)
    assert code == 1 and "pmask: error:" in err
    assert "bracketed tree" in err and "--decoder mart" in err and "--root free" in err
    code, _, err = run(["parse", MRG, "--decoder", "right-chain", "--root", "free", "-q", "-o", tmp_path / "x.conllu"],
                       capsys)
    assert code == 0, err   # dependency trees over PTB words, in a file eval reads as CoNLL-U
    code, _, err = run(["parse", TEXT, "--decoder", "right-chain", "-o", tmp_path / "t.conllu"], capsys)
    assert code == 1 and "has none; use --root free" in err   # text: no gold of either kind
