"""``pmask eval``: the scored rows and their settings, ``--details``, a score over nothing refused,
a prediction read from standard input, and ``--max-words`` narrower or wider than the prediction's."""
from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import pytest

from pmask.cli import main

from test_cli import SMALL


def run(args: list, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def small(tmp_path: Path) -> Path:
    path = tmp_path / "small.conllu"
    path.write_text(SMALL, encoding="utf-8")
    return path


def test_the_evaluated_row_and_its_settings_name_the_same_layer(small, tmp_path, capsys, tiny_bert_dir):
    pred = tmp_path / "p.conllu"
    assert run(["parse", small, "--model", tiny_bert_dir, "--layer", -1, "-q", "-o", pred], capsys)[0] == 0
    code, out, err = run(["eval", pred, "--gold", small], capsys)
    assert code == 0, err
    row = next(line for line in out.splitlines() if "layer 3" in line)
    assert "layer=3" in row and "layer=-1" not in row, row


def test_eval_details_group_by_universal_relation(tmp_path, capsys):
    gold = tmp_path / "gold.conllu"
    gold.write_text("# sent_id = s1\n"
                    "1\tmy\tmy\tPRON\t_\t_\t2\tnmod:poss\t_\t_\n"
                    "2\tcat\tcat\tNOUN\t_\t_\t3\tnsubj\t_\t_\n"
                    "3\tsat\tsit\tVERB\t_\t_\t0\troot\t_\t_\n"
                    "4\there\there\tADV\t_\t_\t3\tnmod\t_\t_\n\n", encoding="utf-8")
    assert main(["eval", str(gold), "--gold", str(gold), "--details"]) == 0
    out = capsys.readouterr().out
    assert "nmod:poss" not in out
    line = next(row for row in out.splitlines() if row.strip().startswith("nmod "))
    assert "2/2" in line.replace(" ", "")


# ------------- eval's inputs: a score over nothing is refused, a prediction from standard input, a narrower --max-words

DATA = Path(__file__).resolve().parents[2] / "data"


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


# ---------------------------------------------------- eval --details keeps its rows aligned with long relation subtypes

# (word, head, relation): relations of 13 and 14 characters next to short ones
ROWS = [("She", 2, "nsubj"), ("left", 0, "root"), ("home", 2, "nmod:unmarked"), ("very", 5, "advmod"),
        ("very", 2, "compound:redup"), (".", 2, "punct")]


def test_details_rows_stay_aligned_with_long_subtypes(tmp_path, capsys):
    lines = [f"{i}\t{w}\t{w.lower()}\tX\t_\t_\t{h}\t{rel}\t_\t_" for i, (w, h, rel) in enumerate(ROWS, start=1)]
    gold = tmp_path / "gold.conllu"
    gold.write_text("# sent_id = 1\n# text = She left home very very .\n" + "\n".join(lines) + "\n\n",
                    encoding="utf-8")
    assert main(["eval", str(gold), "--gold", str(gold), "--details", "--subtypes", "-q"]) == 0
    out = capsys.readouterr().out
    section = out.split("by gold relation", 1)[1].split("\n\n", 1)[0]
    rows = [line for line in section.splitlines() if re.search(r"\d+/\d+", line)]
    keys = {line.split()[0] for line in rows}
    assert {"nmod:unmarked", "compound:redup", "nsubj", "punct"} <= keys, section
    assert len({line.index("/") for line in rows}) == 1, section        # one column of counts
    assert len({len(line) for line in rows}) == 1, section              # and of accuracies
