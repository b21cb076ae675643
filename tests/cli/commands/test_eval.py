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
HOOVER_LINES = [(["the", "big", "dog", "saw", "cats"], ["DET", "ADJ", "NOUN", "VERB", "NOUN"], [3, 3, 4, 0, 4],
           [3, 3, 4, 0, 3]),
          (["a", "b", ",", "c"], ["DET", "NOUN", "PUNCT", "VERB"], [2, 0, 2, 3], [0, 1, 2, 1]),
          (["go", "home", "."], ["VERB", "NOUN", "PUNCT"], [0, 1, 1], [2, 0, 2])]


def _hoover_lines_file(path: Path, heads_at: int) -> Path:
    blocks = [f"# sent_id = h{k}\n" + "\n".join(f"{i}\t{w}\t{w}\t{u}\t_\t_\t{entry[heads_at][i - 1]}\tdep\t_\t_"
                                               for i, (w, u) in enumerate(zip(words, upos), 1))
              for k, entry in enumerate(HOOVER_LINES) for words, upos in [entry[:2]]]
    path.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("extra, figures", [
    # common / gold edges between non-PUNCT words: 3/4 (the big dog saw cats: 1-3 2-3 3-4 4-5 against 1-3 2-3
    # 3-4 3-5), 1/2 (the gold edges are a-b and b-c, joined through the comma; predicted a-b and a-c), 1/1
    ([], (5 / 7, (3 / 4 + 1 / 2 + 1) / 3, 4 / 6, (3 / 4 + 1 / 2) / 2)),   # long: no "go home"
    (["--max-words", "4"], (2 / 3, (1 / 2 + 1) / 2, 1 / 2, 1 / 2)),
], ids=["all", "max-words-4"])
@pytest.mark.parametrize("asked", [["--hoover-uuas"], ["--score", "hoover_uuas"]], ids=["flag", "by-name"])
def test_the_numbers_of_hoover_uuas(tmp_path, capsys, extra, figures, asked):
    """Issue 39, item 17: the Hoover et al. figures ``eval --hoover-uuas`` gives, counted by hand on a gold file
    where a punctuation word joins two words (so the gold edges are not the gold arcs) and one sentence has only
    two non-punctuation words (left out of the ``_long`` figures); ``--max-words`` reaches them."""
    gold, pred = _hoover_lines_file(tmp_path / "gold.conllu", 2), _hoover_lines_file(tmp_path / "pred.conllu", 3)
    js = tmp_path / "e.json"
    code, out, err = run(["eval", pred, "--gold", gold, *asked, "-q", "--json", js, *extra], capsys)
    assert code == 0, err
    row = next(r for r in json.loads(js.read_text(encoding="utf-8"))["rows"] if r["name"] == "prediction")
    keys = ("hoover_uuas", "hoover_uuas_mean", "hoover_uuas_long", "hoover_uuas_mean_long")
    assert [row[k] for k in keys] == pytest.approx([100 * f for f in figures])


# ------------- Hoover et al.'s UUAS is a score of every row (issue 39, item 8)

#: (word, UPOS, gold head, predicted head) of three sentences; s1's comma joins b and c in the gold tree
HOOVER = [[("a", "DET", 2, 4), ("b", "NOUN", 0, 0), (",", "PUNCT", 2, 2), ("c", "NOUN", 3, 2)],
          [("x", "PRON", 2, 2), ("y", "VERB", 0, 0), ("z", "DET", 4, 2), ("w", "NOUN", 2, 3)],
          [("hi", "INTJ", 0, 2), ("there", "ADV", 1, 0)]]
# Counted by hand. Their gold edges (non-PUNCT words; a word pair joined through punctuation is one edge):
# s1 {a-b, b-c}, s2 {x-y, y-w, z-w}, s3 {hi-there}. Predicted edges between non-PUNCT words: s1 {a-c, b-c}
# (1 common), s2 {x-y, y-z, z-w} (2), s3 {hi-there} (1): pooled 4/6, mean of 1/2, 2/3, 1.
POOLED, MEAN = 100 * 4 / 6, 100 * (1 / 2 + 2 / 3 + 1) / 3
# connect-adjacent joins consecutive non-PUNCT words: s1 {a-b, b-c} (2 of 2), s2 {x-y, y-z, z-w} (2 of 3),
# s3 (1 of 1); directed from the gold root with the comma hung on b: heads s1 2 0 2 2, s2 2 0 2 3, s3 0 1,
# so UAS (3 + 2 + 2) / 10 and UUAS (3 + 3 + 2) / 10 over every word.
ADJACENT = {"hoover_uuas": 100 * 5 / 6, "hoover_uuas_mean": 100 * (1 + 2 / 3 + 1) / 3, "uas": 70.0, "uuas": 80.0}


def _hoover_files(tmp_path: Path) -> tuple[Path, Path]:
    def conllu(column: int) -> str:
        return "".join(f"# sent_id = s{k}\n" + "".join(f"{i}\t{row[0]}\t_\t{row[1]}\t_\t_\t{row[column]}\t_\t_\t_\n"
                                                       for i, row in enumerate(rows, start=1)) + "\n"
                       for k, rows in enumerate(HOOVER, start=1))

    gold, pred = tmp_path / "gold.conllu", tmp_path / "pred.conllu"
    gold.write_text(conllu(2), encoding="utf-8")
    pred.write_text(conllu(3), encoding="utf-8")
    return pred, gold


def test_hoover_uuas_is_in_every_row_the_json_the_csv_and_the_data_frames(tmp_path, capsys):
    import csv

    from pmask.eval.comparison.compare import evaluate_files

    pred, gold = _hoover_files(tmp_path)
    js, cs = tmp_path / "e.json", tmp_path / "e.csv"
    code, out, err = run(["eval", pred, "--gold", gold, "--baselines", "--hoover-uuas", "--json", js, "--csv", cs],
                         capsys)
    assert code == 0, err
    assert err.count(f"read 3 sentences from {pred}") == 1 and err.count(f"from {gold}") == 1   # each file read once
    header = [cell.strip() for cell in next(line for line in out.splitlines() if "| Name" in line).split("|")]
    assert header[3:7] == ["UAS", "UUAS", "Hoover UUAS", "Hoover mean UUAS"]
    model_line = next(line for line in out.splitlines() if line.startswith("| prediction "))
    assert f"{POOLED:.2f}" in model_line and f"{MEAN:.2f}" in model_line
    data = json.loads(js.read_text(encoding="utf-8"))
    rows = {row["name"]: row for row in data["rows"]}
    assert data["hoover_uuas"] == pytest.approx(POOLED) and data["hoover_uuas_mean"] == pytest.approx(MEAN)
    assert rows["prediction"]["hoover_uuas"] == pytest.approx(POOLED)
    assert rows["prediction"]["hoover_uuas_long"] == pytest.approx(100 * 3 / 5)   # without s3 (two words)
    for key, value in ADJACENT.items():
        assert rows["connect-adjacent"][key] == pytest.approx(value), key
        assert data["baselines"]["connect-adjacent"][key] == pytest.approx(value), key
    assert all("hoover_uuas" in row for row in data["rows"])
    table = {row["name"]: row for row in csv.DictReader(cs.open(encoding="utf-8"))}
    assert float(table["prediction"]["hoover_uuas"]) == pytest.approx(POOLED)
    assert float(table["connect-adjacent"]["hoover_uuas_mean"]) == pytest.approx(ADJACENT["hoover_uuas_mean"])
    result = evaluate_files(pred, gold, baselines=True, scores=["hoover_uuas"])
    assert result.score.to_dict()["hoover_uuas_mean"] == pytest.approx(MEAN)
    pytest.importorskip("pandas")
    frame = result.to_pandas().set_index("name")
    assert frame.loc["prediction", "hoover_uuas"] == pytest.approx(POOLED)
    assert frame.loc["connect-adjacent", "hoover_uuas"] == pytest.approx(ADJACENT["hoover_uuas"])


def test_hoover_uuas_reads_each_file_once(tmp_path, capsys):
    # issue 39, item 14: before, --hoover-uuas read both files a second time ("read ..." printed twice)
    pred, gold = _hoover_files(tmp_path)
    code, _, err = run(["eval", pred, "--gold", gold, "--hoover-uuas"], capsys)
    assert code == 0, err
    reads = [line for line in err.splitlines() if " read " in f" {line} "]
    assert len(reads) == 2 and sum(str(pred) in line for line in reads) == 1, err
    assert sum(str(gold) in line for line in reads) == 1, err


def test_without_hoover_uuas_no_output_mentions_it(tmp_path, capsys):
    from pmask.eval.comparison.compare import evaluate_files

    pred, gold = _hoover_files(tmp_path)
    js, cs = tmp_path / "e.json", tmp_path / "e.csv"
    code, out, _ = run(["eval", pred, "--gold", gold, "--baselines", "--json", js, "--csv", cs], capsys)
    assert code == 0 and "Hoover" not in out
    assert '"hoover_' not in js.read_text(encoding="utf-8") and "hoover_" not in cs.read_text(encoding="utf-8")
    assert not [key for key in evaluate_files(pred, gold).to_dict() if key.startswith("hoover")]


def test_hoover_uuas_on_brackets_is_refused_up_front(tmp_path, capsys):
    pred = tmp_path / "pred.txt"
    pred.write_text("(X (X The cat) (X sat (X on (X the mat))))\n", encoding="utf-8")
    for asked in (["--hoover-uuas"], ["--score", "hoover_uuas"]):   # today's spelling, and the score by name
        code, out, err = run(["eval", pred, "--gold", DATA / "mini.mrg", *asked], capsys)
        assert code == 1 and out == "" and err.count("\n") == 1, err
        assert err.startswith("pmask: error: --score hoover_uuas needs dependency trees") and "constituency" in err


# ------------- bracket breakdowns: eval --details, --json, to_pandas (issue 39, item 9)

BRACKET_GOLD = ["(S (NP (DT the) (NN dog)) (VP (VBD saw) (NP (DT a) (NN cat))))",
                "(S (NP (PRP it)) (VP (VBZ is) (ADJP (RB very) (JJ big))))"]
BRACKET_PRED = ["(X (X (X the dog) saw) (X a cat))", "(X (X it is) (X very big))"]
# Spans of two words or more, the whole sentence left out. Gold: NP 0-2, VP 2-5, NP 3-5; VP 1-4, ADJP 2-4.
# Predicted: 0-2, 0-3, 3-5; 0-2, 2-4. By length: 2 words: 3 gold, 4 predicted, 3 matched (P 75, R 100);
# 3 words: 2 gold, 1 predicted, none matched. By gold label: NP 2 of 2, VP 0 of 2, ADJP 1 of 1.
SPAN_CELLS = {"2": {"correct": 3, "total": 3, "pred": 4, "precision": 75.0, "recall": 100.0, "f1": 600 / 7},
              "3": {"correct": 0, "total": 2, "pred": 1, "precision": 0.0, "recall": 0.0, "f1": 0.0}}
LABEL_CELLS = {"NP": (2, 2, 100.0), "VP": (0, 2, 0.0), "ADJP": (1, 1, 100.0)}


def test_bracket_breakdowns_in_details_json_and_data_frames(tmp_path, capsys):
    from pmask.eval.comparison.compare import evaluate_files

    gold, pred, js = tmp_path / "gold.mrg", tmp_path / "pred.txt", tmp_path / "e.json"
    gold.write_text("\n".join(f"( {tree} )" for tree in BRACKET_GOLD) + "\n", encoding="utf-8")
    pred.write_text("\n".join(BRACKET_PRED) + "\n", encoding="utf-8")
    code, out, err = run(["eval", pred, "--gold", gold, "--details", "--json", js, "-q"], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert any(line.startswith("bracket F1 by span length") for line in lines)
    two = next(line.split() for line in lines if line.split()[:1] == ["2"])
    assert two[:3] == ["2", "3/3", "F1"] and two[3] == f"{600 / 7:.2f}" and two[5] == "75.00"
    vp = next(line.split() for line in lines if line.split()[:1] == ["VP"])
    assert vp == ["VP", "0/2", "0.00"]
    data = json.loads(js.read_text(encoding="utf-8"))["breakdowns"]
    assert list(data) == ["span_length", "label"] and list(data["span_length"]) == ["2", "3"]
    for bucket, cell in SPAN_CELLS.items():
        assert data["span_length"][bucket] == pytest.approx(cell), bucket
    assert list(data["label"]) == ["NP", "VP", "ADJP"]   # most gold spans first, then by name
    assert {k: (c["correct"], c["total"], c["accuracy"]) for k, c in data["label"].items()} == LABEL_CELLS
    pytest.importorskip("pandas")
    result = evaluate_files(pred, gold)
    frame = result.to_pandas("span_length").set_index("span_length")
    assert frame.loc["2", "f1"] == pytest.approx(600 / 7) and frame.loc["3", "pred"] == 1
    assert result.to_pandas("label").set_index("label").loc["ADJP", "accuracy"] == 100.0
    assert set(result.to_pandas("breakdowns")["breakdown"]) == {"span_length", "label"}
