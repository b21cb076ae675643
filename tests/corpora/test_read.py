"""Corpus input edges: the max_words/limit selection, standard input, plain text, format mix-ups."""
from __future__ import annotations

import io
import logging
import sys
from pathlib import Path

import pytest

from pmask.cli import main
from pmask.common.errors import CorpusError, PmaskError
from pmask.corpora import (
    format_conllu,
    read_brackets,
    read_conllu,
    read_corpus,
    read_dep3,
    read_ptb,
    read_text,
    write_brackets,
    write_conllu,
)
from pmask.corpora.formats import sniff_format

DATA = Path(__file__).resolve().parents[1] / "data"
READERS = [
    pytest.param(read_conllu, DATA / "mini.conllu", id="conllu"),
    pytest.param(read_ptb, DATA / "mini.mrg", id="ptb"),
    pytest.param(read_dep3, DATA / "mini.dp", id="dep3"),
    pytest.param(read_text, DATA / "mini.txt", id="text"),
    pytest.param(read_corpus, DATA / "mini.conllu", id="read_corpus"),
]


def feed_stdin(monkeypatch, text: str) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8"))


# --------------------------------------------------------------------------- max_words / limit

@pytest.mark.parametrize("reader,path", READERS)
@pytest.mark.parametrize("bad", [{"limit": 0}, {"limit": -3}, {"max_words": 0}, {"limit": 1.5}, {"limit": True}])
def test_selection_below_one_is_refused(reader, path, bad):
    with pytest.raises(PmaskError, match=rf"^{next(iter(bad))} must be a whole number of .* >= 1, not "):
        reader(path, **bad)


@pytest.mark.parametrize("reader,path", READERS)
def test_limit_counts_after_the_length_filter(reader, path):
    every = reader(path)
    short = [s.id for s in every if len(s) <= 2]
    assert [s.id for s in reader(path, max_words=2)] == short
    assert [s.id for s in reader(path, max_words=2, limit=1)] == short[:1]
    assert [s.id for s in reader(path, limit=1)] == [every[0].id]


def test_limit_stops_reading_before_a_later_error(tmp_path):
    """Lazy selection: sentences after the limit are not parsed (a broken tail does not matter)."""
    path = tmp_path / "tail.dp"
    path.write_text("a\tDT\t0\n\nb\tNN\tx\n", encoding="utf-8")
    assert [s.words for s in read_dep3(path, limit=1)] == [["a"]]
    with pytest.raises(CorpusError, match=r"tail.dp:3: HEAD 'x' is not an integer"):
        read_dep3(path)


def test_refused_limit_does_not_consume_stdin(monkeypatch):
    feed_stdin(monkeypatch, "one two\n")
    with pytest.raises(PmaskError):
        read_corpus("-", "text", limit=0)
    assert sys.stdin.read() == "one two\n"


# --------------------------------------------------------------------------- standard input

def test_stdin_text(monkeypatch):
    feed_stdin(monkeypatch, "The cat sat .\n\n  Yes  \n")
    sents = read_corpus("-", "text")
    assert [(s.id, s.words, s.path, s.line) for s in sents] == [
        ("1", ["The", "cat", "sat", "."], "<stdin>", 1), ("3", ["Yes"], "<stdin>", 3)]
    assert sents[1].where() == "<stdin>:3 (sentence 3)"


def test_stdin_conllu_explicit_and_auto(monkeypatch):
    text = (DATA / "mini.conllu").read_text(encoding="utf-8")
    expected = [(s.id, s.words, s.heads) for s in read_conllu(DATA / "mini.conllu")]
    for fmt in ("conllu", "auto"):
        feed_stdin(monkeypatch, text)
        sents = read_corpus("-", fmt)
        assert [(s.id, s.words, s.heads) for s in sents] == expected
        assert {s.path for s in sents} == {"<stdin>"}


@pytest.mark.parametrize("name,fmt", [("mini.mrg", "ptb"), ("mini.dp", "dep3"), ("mini.txt", "text")])
def test_stdin_auto_by_content(monkeypatch, name, fmt):
    text = (DATA / name).read_text(encoding="utf-8")
    assert sniff_format(text) == fmt
    feed_stdin(monkeypatch, text)
    got = read_corpus("-", max_words=3)
    assert [s.words for s in got] == [s.words for s in read_corpus(DATA / name, max_words=3)]
    assert all(s.path == "<stdin>" for s in got)
    if fmt in ("ptb", "dep3"):
        assert got[0].id.startswith("stdin#")


def test_stdin_errors_name_stdin(monkeypatch):
    feed_stdin(monkeypatch, "1\ta\t_\t_\t_\t_\t0\troot\t_\n")
    with pytest.raises(CorpusError, match=r"^<stdin>:1: expected 10 tab-separated columns, found 9"):
        read_corpus("-", "conllu")
    feed_stdin(monkeypatch, "\n \n")
    with pytest.raises(CorpusError, match=r"^<stdin>:1: no sentences"):
        read_corpus("-", "text")


def test_sniff_format():
    assert sniff_format("# sent_id = 1\n1\ta\t_\t_\t_\t_\t0\troot\t_\t_\n") == "conllu"
    assert sniff_format("1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n") == "conllu"
    assert sniff_format("\n  (S (NN a))\n") == "ptb"
    assert sniff_format("a\tDT\t0\n") == "dep3"
    assert sniff_format("#hashtag only\n") == "text"
    assert sniff_format("just words here\n") == "text"


def test_writers_take_dash_for_stdout(capsys):
    sents = read_conllu(DATA / "mini.conllu")[:1]
    write_conllu(sents, [sents[0].heads], "-")
    assert capsys.readouterr().out == format_conllu(sents[0], sents[0].heads)
    write_brackets([read_ptb(DATA / "mini.mrg")[0].tree, None], "-")
    out = capsys.readouterr().out.split("\n")
    assert out[0].startswith("(") and out[1:] == ["", ""]


# --------------------------------------------------------------------------- format mix-ups

def test_conllu_where_brackets_are_expected_says_so():
    for reader in (read_ptb, read_brackets, lambda p: read_corpus(p, "ptb")):
        with pytest.raises(CorpusError) as err:
            reader(DATA / "mini.conllu")
        assert str(err.value) == (f"{DATA / 'mini.conllu'}: looks like CoNLL-U (dependency trees), "
                                  "not bracketed constituency trees")
    with pytest.raises(CorpusError, match="looks like a 3-column dependency file"):
        read_ptb(DATA / "mini.dp")


def test_max_words_is_a_generic_length_filter_for_conllu():
    """Documented: max_words skips longer sentences in every format, CoNLL-U included."""
    every = read_conllu(DATA / "mini.conllu")
    assert [s.id for s in read_conllu(DATA / "mini.conllu", max_words=3)] == [s.id for s in every if len(s) <= 3]


# --------------------------------------------------------------------------- issue 27, item 9d: what ends a line

#: Characters str.splitlines() would break a line at that are not a newline in a file.
NOT_NEWLINES = ["\u2028", "\u2029", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85"]


@pytest.mark.parametrize("char", NOT_NEWLINES, ids=[f"U+{ord(c):04X}" for c in NOT_NEWLINES])
def test_text_lines_end_at_newlines_only(tmp_path, char):
    path = tmp_path / "t.txt"
    path.write_text(f"one two{char}three\r\n\nfour five\n", encoding="utf-8")
    sentences = read_text(path)
    assert [s.words for s in sentences] == [["one", "two", "three"], ["four", "five"]]
    assert [(s.id, s.line) for s in sentences] == [("1", 1), ("3", 3)]
    assert read_corpus(path)[1].line == 3   # the format is sniffed from lines split the same way


@pytest.mark.parametrize("char", NOT_NEWLINES[:2], ids=["U+2028", "U+2029"])
def test_dep3_and_bracket_lines_end_at_newlines_only(tmp_path, char):
    dep3 = tmp_path / "t.dp"
    dep3.write_text(f"a{char}b\tX\t0\n\nc\tX\t0\n", encoding="utf-8")
    assert [s.line for s in read_dep3(dep3)] == [1, 3]
    trees = tmp_path / "t.mrg"
    trees.write_text(f"(S (X a{char}b))\n(S (X c))\n", encoding="utf-8")
    assert len(read_brackets(trees)) == 2


def test_reading_that_stops_at_the_limit_does_not_pass_for_the_corpus_size(caplog):
    from pmask.corpora import read_corpus

    with caplog.at_level(logging.INFO, logger="pmask"):   # the logger's level is restored afterwards
        # mini.mrg: 6, 3, 1 and 2 words; the first sentence of at most 3 words is the second
        assert len(read_corpus(DATA / "mini.mrg", max_words=3, limit=1)) == 1
    line = caplog.text
    assert "read 1 of the first 2 sentences" in line and "stopped at the limit" in line, line


# -------------------------------------------- a file that looks like CoNLL-U but is read as plain text gets one warning

def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_conllu_read_as_text_warns_once(tmp_path, caplog):
    copy = tmp_path / "pud.txt"
    copy.write_bytes((DATA / "mini.conllu").read_bytes())
    with caplog.at_level(logging.WARNING):
        read_corpus(DATA / "mini.conllu", "text")
        read_corpus(copy)                      # auto: the suffix says text
    messages = _warnings(caplog)
    assert len(messages) == 2 and all("looks like CoNLL-U" in m and "format conllu" in m for m in messages)
    assert "format text was asked for" in messages[0] and "'.txt'" in messages[1]


def test_text_and_conllu_read_as_themselves_do_not_warn(caplog):
    with caplog.at_level(logging.WARNING):
        read_corpus(DATA / "mini.txt", "text")
        read_corpus(DATA / "mini.conllu")
    assert _warnings(caplog) == []


def test_the_command_line_shows_the_warning_on_one_line(tmp_path, capsys):
    out = tmp_path / "rc.conllu"
    assert main(["parse", str(DATA / "mini.conllu"), "--format", "text", "--decoder", "right-chain", "--root",
                 "free", "-o", str(out)]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if "looks like CoNLL-U" in line]
    assert len(lines) == 1 and lines[0].startswith("pmask: ")
