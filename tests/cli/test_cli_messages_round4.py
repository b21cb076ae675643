"""Issue 33, item 11: messages that say what is true (layer range, a subcommand's usage, a missing
store or config.json, how much of a corpus was read), whole numbers that stay whole in pandas, a
short ``repr`` of a parsed sentence, and the checksum of a corpus read from standard input."""
from __future__ import annotations

import hashlib
import io
import json
import logging
import re
import sys
from pathlib import Path

import pytest

from pmask.cli import main

DATA = Path(__file__).resolve().parents[1] / "data"


def test_layer_out_of_range_does_not_offer_layer_zero_to_a_decoder(tiny_bert_dir, tmp_path, capsys):
    assert main(["parse", str(DATA / "mini.conllu"), "--model", str(tiny_bert_dir), "--layer", "9",
                 "-o", str(tmp_path / "p.conllu"), "-q"]) == 1
    err = capsys.readouterr().err
    layers = re.search(r"with (\d+) layers", err)
    assert layers, err
    n = int(layers.group(1))
    assert "0.." not in err and f"1..{n}" in err and f"-{n}..-1" in err   # the range `parse` accepts
    assert main(["parse", str(DATA / "mini.conllu"), "--model", str(tiny_bert_dir), "--layer", "0",
                 "-o", str(tmp_path / "p.conllu"), "-q"]) == 1   # and 0 is refused, as the message implies


def test_an_unknown_flag_prints_the_subcommands_usage(capsys):
    assert main(["eval", "p.conllu", "--gold", "g.conllu", "--nosuch"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: pmask eval ") and "pmask eval: error: unrecognized arguments: --nosuch" in err


def test_info_of_a_missing_path_says_it_does_not_exist(tmp_path, capsys):
    assert main(["info", str(tmp_path / "nosuch")]) == 1
    err = capsys.readouterr().err
    assert "no such file or directory" in err and "manifest" not in err
    (tmp_path / "empty").mkdir()
    assert main(["info", str(tmp_path / "empty")]) == 1
    assert "no manifest.json" in capsys.readouterr().err   # an existing folder that is no store


def test_a_model_folder_without_config_json_says_so(tmp_path, capsys):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "vocab.txt").write_text("[PAD]\n", encoding="utf-8")
    assert main(["parse", str(DATA / "mini.conllu"), "--model", str(folder), "-o", str(tmp_path / "p.conllu"),
                 "-q"]) == 1
    err = capsys.readouterr().err
    assert "has no config.json" in err and "model_type" not in err


def test_reading_that_stops_at_the_limit_does_not_pass_for_the_corpus_size(caplog):
    from pmask.corpora import read_corpus

    with caplog.at_level(logging.INFO, logger="pmask"):   # the logger's level is restored afterwards
        # mini.mrg: 6, 3, 1 and 2 words; the first sentence of at most 3 words is the second
        assert len(read_corpus(DATA / "mini.mrg", max_words=3, limit=1)) == 1
    line = caplog.text
    assert "read 1 of the first 2 sentences" in line and "stopped at the limit" in line, line


def test_to_pandas_keeps_whole_numbers_whole(tmp_path):
    pytest.importorskip("pandas")
    from pmask.eval.comparison.compare import evaluate_files

    pred = tmp_path / "p.conllu"
    assert main(["parse", str(DATA / "mini.conllu"), "--decoder", "right-chain", "-o", str(pred), "-q"]) == 0
    frame = evaluate_files(pred, DATA / "mini.conllu", baselines=True).to_pandas()
    assert str(frame["settings.seed"].dtype) == "Int64"   # the baselines' rows have no settings
    assert frame["settings.seed"].iloc[0] == 0 and frame["settings.seed"].isna().sum() == len(frame) - 1


def test_repr_of_a_parsed_sentence_is_short():
    import numpy as np

    from pmask.corpora import Sentence
    from pmask.perturb.source import Impact
    from pmask.pipeline.induce import Parsed

    n = 60
    words = [f"w{k}" for k in range(n)]
    parsed = Parsed(Sentence(id="s1", words=words), heads=np.arange(n), impact=Impact(F=np.random.rand(n, n)))
    text = repr(parsed)
    assert len(text) < 200 and "\n" not in text and "s1" in text and "60 words" in text


def test_meta_json_hashes_a_corpus_read_from_stdin(tmp_path, monkeypatch):
    data = (DATA / "mini.conllu").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    out = tmp_path / "p.conllu"
    assert main(["parse", "-", "--decoder", "right-chain", "-o", str(out), "-q"]) == 0
    corpus = json.loads((tmp_path / "p.conllu.meta.json").read_text())["corpus"]
    assert corpus["path"] == "-" and corpus["sha256"] == hashlib.sha256(data).hexdigest()


def test_tokenize_text_groups_its_per_word_warnings_into_one_line(tiny_bert_dir, tmp_path, capsys):
    rows = []
    for s, words in enumerate([["ワシントン", "の", "キャピトルヒル", "で"], ["ソーシャル", "メディア", "を", "フォロー"]]):
        rows.append(f"# sent_id = j{s}")
        rows += [f"{k}\t{w}\t_\t_\t_\t_\t{0 if k == 1 else 1}\t_\t_\tSpaceAfter=No"
                 for k, w in enumerate(words, start=1)]
        rows.append("")
    corpus = tmp_path / "ja.conllu"
    corpus.write_text("\n".join(rows) + "\n", encoding="utf-8")
    assert main(["impact", str(corpus), "--model", str(tiny_bert_dir), "--tokenize", "text",
                 "-o", str(tmp_path / "store")]) == 0
    err = capsys.readouterr().err.splitlines()
    grouped = [line for line in err if "tokenize text:" in line]
    per_word = [line for line in err if "(word " in line]
    assert not per_word, err
    assert len(grouped) == 1 and re.search(r"\d+ words in 2 sentences", grouped[0]), err
