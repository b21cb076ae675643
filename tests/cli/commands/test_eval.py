"""``pmask eval``: the scored rows and their settings, ``--details``, a score over nothing refused,
a prediction read from standard input, ``--max-words`` narrower or wider than the prediction's, and the
numbers ``--hoover-uuas`` prints."""
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


def _word_heads(text: str) -> list[list[int]]:
    """Each sentence's HEAD column (words with an integer ID), read from CoNLL-U lines by hand."""
    blocks = [[line.split("\t") for line in block.splitlines() if line[:1].isdigit()] for block in text.split("\n\n")]
    return [[int(c[6]) for c in b if c[0].isdigit()] for b in blocks if b]


def test_eval_of_standard_input_with_max_words_narrower_than_the_prediction(tmp_path, monkeypatch, capsys):
    """``eval -`` has no meta.json: --max-words 4 on a prediction of every sentence scores only the sentences of
    at most 4 words (issue 39, item 17); the counts and the UAS are computed here from the raw lines."""
    pred = tmp_path / "rc.conllu"
    assert main(["parse", str(DATA / "mini.conllu"), "--decoder", "right-chain", "-o", str(pred), "-q"]) == 0
    _stdin(monkeypatch, pred.read_text(encoding="utf-8"))
    assert main(["eval", "-", "--gold", str(DATA / "mini.conllu"), "--max-words", "4", "--json", "-", "-q"]) == 0
    result = json.loads(capsys.readouterr().out)
    gold, got = _word_heads((DATA / "mini.conllu").read_text(encoding="utf-8")), _word_heads(pred.read_text())
    assert [len(g) for g in gold] == [len(p) for p in got] == [6, 7, 2, 1, 2]
    kept = [(g, p) for g, p in zip(gold, got) if len(g) <= 4]
    correct = sum(a == b for g, p in kept for a, b in zip(g, p))
    assert (result["sentences"], result["total"], result["correct"]) == (3, 5, correct) and 0 < correct < 5
    assert result["uas"] == pytest.approx(100 * correct / 5)
    assert [s["n"] for s in result["per_sentence"]] == [2, 1, 2]


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


#: (words, UPOS, gold heads, predicted heads) for --hoover-uuas; their edges counted by hand in the test below
HOOVER = [(["the", "big", "dog", "saw", "cats"], ["DET", "ADJ", "NOUN", "VERB", "NOUN"], [3, 3, 4, 0, 4],
           [3, 3, 4, 0, 3]),
          (["a", "b", ",", "c"], ["DET", "NOUN", "PUNCT", "VERB"], [2, 0, 2, 3], [0, 1, 2, 1]),
          (["go", "home", "."], ["VERB", "NOUN", "PUNCT"], [0, 1, 1], [2, 0, 2])]


def _hoover_file(path: Path, heads_at: int) -> Path:
    blocks = [f"# sent_id = h{k}\n" + "\n".join(f"{i}\t{w}\t{w}\t{u}\t_\t_\t{entry[heads_at][i - 1]}\tdep\t_\t_"
                                               for i, (w, u) in enumerate(zip(words, upos), 1))
              for k, entry in enumerate(HOOVER) for words, upos in [entry[:2]]]
    path.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("extra, lines", [
    # common / gold edges between non-PUNCT words: 3/4 (the big dog saw cats: 1-3 2-3 3-4 4-5 against 1-3 2-3
    # 3-4 3-5), 1/2 (the gold edges are a-b and b-c, joined through the comma; predicted a-b and a-c), 1/1
    ([], ["pooled 71.43, sentence mean 75.00 (3 sentences, 7 gold edges)",    # 5/7; (3/4 + 1/2 + 1) / 3
          "pooled 66.67, sentence mean 62.50"]),                               # 4/6; (3/4 + 1/2) / 2: no "go home"
    (["--max-words", "4"], ["pooled 66.67, sentence mean 75.00 (2 sentences, 3 gold edges)",   # 2/3; (1/2 + 1) / 2
                            "pooled 50.00, sentence mean 50.00"]),
], ids=["all", "max-words-4"])
def test_the_numbers_on_the_hoover_uuas_lines(tmp_path, capsys, extra, lines):
    """Issue 39, item 17: the figures ``eval --hoover-uuas`` prints, counted by hand on a gold file where a
    punctuation word joins two words (so the gold edges are not the gold arcs) and one sentence has only two
    non-punctuation words (left out of the second line)."""
    gold, pred = _hoover_file(tmp_path / "gold.conllu", 2), _hoover_file(tmp_path / "pred.conllu", 3)
    code, out, err = run(["eval", pred, "--gold", gold, "--hoover-uuas", "-q", *extra], capsys)
    assert code == 0, err
    assert f"Hoover et al. UUAS (non-PUNCT words, gold spanning tree): {lines[0]}" in out.splitlines(), out
    assert f"the same without sentences of <= 2 non-PUNCT words: {lines[1]}" in out.splitlines(), out
