"""Issue 33, items 4, 6 and 9: ``eval`` refuses a score over nothing, reads the prediction from
standard input, and filters prediction and gold alike under a narrower ``--max-words``."""
from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from pmask.cli import main

DATA = Path(__file__).resolve().parents[1] / "data"


def _stdin(monkeypatch, text: str) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8"))


def _no_heads(path: Path) -> str:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        cols = line.split("\t")
        if len(cols) == 10:
            cols[6] = "_"
        rows.append("\t".join(cols))
    return "\n".join(rows) + "\n"


# ---------------------------------------------------------------------------- item 4: nothing scored

def test_eval_of_a_prediction_without_heads_is_an_error_naming_why(tmp_path, capsys):
    pred = tmp_path / "pred.conllu"
    pred.write_text(_no_heads(DATA / "mini.conllu"), encoding="utf-8")
    assert main(["eval", str(pred), "--gold", str(DATA / "mini.conllu")]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""   # no table of 0.00 over 0 words
    assert "nothing to score" in captured.err and "every HEAD is '_'" in captured.err


def test_eval_with_every_word_punctuation_excluded_is_an_error(tmp_path, capsys):
    gold = tmp_path / "gold.conllu"
    gold.write_text("# sent_id = p1\n1\t...\t...\tPUNCT\t:\t_\t0\troot\t_\t_\n"
                    "2\t!\t!\tPUNCT\t.\t_\t1\tpunct\t_\t_\n\n", encoding="utf-8")
    assert main(["eval", str(gold), "--gold", str(gold), "--punct", "exclude"]) == 1
    assert "every word of its sentences is punctuation" in capsys.readouterr().err


def test_bracket_score_over_nothing_is_refused(monkeypatch, capsys):
    from pmask.eval.comparison import compare
    monkeypatch.setattr(compare, "read_prediction", lambda path: ("constituency", [None, None, None, None]))
    assert main(["eval", "pred.txt", "--gold", str(DATA / "mini.mrg")]) == 1
    err = capsys.readouterr().err
    assert "nothing to score" in err and "has a predicted tree" in err


# ---------------------------------------------------------------------------- item 6: prediction on stdin

def test_eval_reads_a_conllu_prediction_from_stdin(tmp_path, monkeypatch, capsys):
    pred = tmp_path / "pred.conllu"
    assert main(["parse", str(DATA / "mini.conllu"), "--decoder", "right-chain", "-o", str(pred), "-q"]) == 0
    assert main(["eval", str(pred), "--gold", str(DATA / "mini.conllu"), "--json", str(tmp_path / "file.json"),
                 "-q"]) == 0
    capsys.readouterr()
    _stdin(monkeypatch, pred.read_text(encoding="utf-8"))
    assert main(["eval", "-", "--gold", str(DATA / "mini.conllu"), "--json", str(tmp_path / "stdin.json")]) == 0
    captured = capsys.readouterr()
    assert "no such file" not in captured.err
    assert "no meta.json" in captured.err   # says what it does without the prediction's meta.json
    from_file = json.loads((tmp_path / "file.json").read_text())
    from_stdin = json.loads((tmp_path / "stdin.json").read_text())
    assert (from_stdin["uas"], from_stdin["total"]) == (from_file["uas"], from_file["total"])
    assert from_stdin["name"] == "prediction" and from_stdin["meta"]["pred"] == "<stdin>"


def test_eval_reads_brackets_from_stdin(monkeypatch, capsys):
    _stdin(monkeypatch, "(X The (X cat (X sat (X on (X the mat)))))\n(X It (X was said))\n")
    assert main(["eval", "-", "--gold", str(DATA / "mini.mrg"), "--json", "-", "-q"]) == 0
    assert json.loads(capsys.readouterr().out)["sentences"] == 2


# ---------------------------------------------------------------------------- item 9: --max-words both sides

def test_eval_max_words_narrower_than_a_ptb_prediction(tmp_path, capsys):
    pred = tmp_path / "pred.txt"   # mini.mrg holds sentences of 6, 3, 1 and 2 words
    assert main(["parse", str(DATA / "mini.mrg"), "--max-words", "3", "--decoder", "right-branching",
                 "-o", str(pred), "-q"]) == 0
    capsys.readouterr()
    assert main(["eval", str(pred), "--gold", str(DATA / "mini.mrg"), "--max-words", "2", "--json", "-"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert result["sentences"] == 2 and [s["n"] for s in result["per_sentence"]] == [1, 2]
    assert "scoring 2 of its 3 sentences" in captured.err


def test_eval_max_words_narrower_than_a_ud_prediction(tmp_path, capsys):
    pred = tmp_path / "pred.conllu"
    assert main(["parse", str(DATA / "mini.conllu"), "--limit", "4", "--decoder", "right-chain",
                 "-o", str(pred), "-q"]) == 0
    capsys.readouterr()
    assert main(["eval", str(pred), "--gold", str(DATA / "mini.conllu"), "--max-words", "2", "--json", "-"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert [s["id"] for s in result["per_sentence"]] == ["3", "s4"]


def test_eval_max_words_wider_than_the_prediction_is_refused_saying_why(tmp_path, capsys):
    pred = tmp_path / "pred.txt"
    assert main(["parse", str(DATA / "mini.mrg"), "--max-words", "3", "--decoder", "right-branching",
                 "-o", str(pred), "-q"]) == 0
    assert main(["eval", str(pred), "--gold", str(DATA / "mini.mrg"), "--max-words", "6"]) == 1
    err = capsys.readouterr().err
    assert "wider than the filter" in err and "--max-words 3 or less" in err


# ---------------------------------------------------------------------------- item 9: report

def test_report_takes_max_words_and_scores_only_those_sentences(tmp_path, capsys):
    pred = tmp_path / "pred.conllu"
    assert main(["parse", str(DATA / "mini.conllu"), "--decoder", "right-chain", "-o", str(pred), "-q"]) == 0
    capsys.readouterr()
    page = tmp_path / "r.html"
    assert main(["report", str(pred), "--gold", str(DATA / "mini.conllu"), "--max-words", "2", "-o", str(page)]) == 0
    assert "scoring 3 of its 5 sentences" in capsys.readouterr().err
    html = page.read_text(encoding="utf-8")
    assert '"s1"' not in html and '"s4"' in html   # s1 has 6 words


def test_report_warns_when_the_store_lacks_some_of_its_sentences(tiny_bert_dir, tmp_path, capsys):
    store, pred = tmp_path / "store", tmp_path / "pred.conllu"
    assert main(["impact", str(DATA / "mini.conllu"), "--model", str(tiny_bert_dir), "--limit", "2", "-o", str(store),
                 "-q"]) == 0
    assert main(["parse", str(DATA / "mini.conllu"), "--model", str(tiny_bert_dir), "-o", str(pred), "-q"]) == 0
    capsys.readouterr()
    assert main(["report", str(pred), "--gold", str(DATA / "mini.conllu"), "--store", str(store),
                 "-o", str(tmp_path / "r.html")]) == 0
    err = capsys.readouterr().err
    assert "no impacts for 3 of the report's 5 sentences" in err and "3, s4, s5" in err


def test_brackets_on_stdin_that_do_not_pair_say_which_filter_to_give(tmp_path, monkeypatch, capsys):
    pred = tmp_path / "pred.txt"
    assert main(["parse", str(DATA / "mini.mrg"), "--max-words", "3", "--decoder", "right-branching",
                 "-o", str(pred), "-q"]) == 0
    _stdin(monkeypatch, pred.read_text(encoding="utf-8"))
    assert main(["eval", "-", "--gold", str(DATA / "mini.mrg"), "-q"]) == 1
    assert "give the --max-words the prediction was parsed with" in capsys.readouterr().err
    _stdin(monkeypatch, pred.read_text(encoding="utf-8"))
    assert main(["eval", "-", "--gold", str(DATA / "mini.mrg"), "--max-words", "3", "--json", "-", "-q"]) == 0
    assert json.loads(capsys.readouterr().out)["sentences"] == 3
