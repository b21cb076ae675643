"""Corpus formats are one entry each (pmask.corpora.formats): reading, detection by suffix and
sniffing of standard input follow from the entry, with no other list to edit."""
from __future__ import annotations

import io
import sys
from pathlib import Path

from pmask.corpora import read_corpus
from pmask.corpora.formats import CORPUS_FORMATS, FORMAT_TABLE, FORMATS, CorpusFormat, detect_format, sniff_format
from pmask.corpora.sentence import Sentence


def _pipe_sentences(text: str, name: str) -> list[Sentence]:
    return [Sentence(id=f"pipe#{k}", words=line.split("|"), path=name)
            for k, line in enumerate((ln for ln in text.splitlines() if ln.strip()), start=1)]


PIPES = CorpusFormat(
    "pipes", "words separated by |, one sentence per line",
    read=lambda path, max_words, limit, _: _pipe_sentences(Path(path).read_text(encoding="utf-8"), str(path))[:limit],
    parse=lambda text, name, _: _pipe_sentences(text, name),
    suffixes=(".pipes",), looks_like=lambda line: "|" in line and "\t" not in line, sniff_order=5)


def test_the_cli_choices_are_the_entries():
    assert list(CORPUS_FORMATS) == ["auto", *(f.name for f in FORMAT_TABLE)]
    assert list(FORMATS) == ["conllu", "ptb", "dep3", "scidtb", "edus", "text"]


def test_a_new_format_is_one_entry(tmp_path, monkeypatch):
    monkeypatch.setitem(FORMATS, "pipes", PIPES)
    path = tmp_path / "c.pipes"
    path.write_text("the|cat|sat\na|dog\n", encoding="utf-8")
    assert detect_format(path) == "pipes"
    assert [s.words for s in read_corpus(path)] == [["the", "cat", "sat"], ["a", "dog"]]
    assert [s.words for s in read_corpus(path, "pipes", limit=1)] == [["the", "cat", "sat"]]
    assert sniff_format("# comment\nthe|cat\n") == "pipes"
    monkeypatch.setattr(sys, "stdin", io.StringIO("a|b\n"))
    assert [s.words for s in read_corpus("-")] == [["a", "b"]]


def test_sniffing_order_keeps_a_dep3_line_that_opens_a_bracket():
    assert sniff_format("(\tPUNCT\t0\n") == "dep3"
    assert sniff_format("(S (NN a))\n") == "ptb"
