"""Corpus formats are one entry each (pmask.corpora.formats): reading, detection by suffix, sniffing of
standard input, ``--format``'s choices and the task scoring and ``bench`` read follow from the entry, with
no other list to edit (the recipe of docs/architecture.md, "A corpus format")."""
from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

import pytest

from pmask.common.errors import PmaskError
from pmask.corpora import read_corpus, write_conllu
from pmask.corpora.formats import CORPUS_FORMATS, FORMAT_TABLE, FORMATS, CorpusFormat, detect_format, sniff_format
from pmask.corpora.sentence import Sentence

# ---------------------------------------------------------------------------- what a reader module would hold

def _parse_slashes(text: str, name: str) -> list[Sentence]:
    """One sentence per line, each word written ``form/head`` (0 = the root)."""
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            pairs = [token.rsplit("/", 1) for token in line.split()]
            out.append(Sentence(id=str(number), words=[w for w, _ in pairs], heads=[int(h) for _, h in pairs],
                                path=name, line=number))
    return out


def _read_slashes(path, max_words, limit, _) -> list[Sentence]:
    sentences = [s for s in _parse_slashes(Path(path).read_text(encoding="utf-8"), str(path))
                 if max_words is None or len(s.words) <= max_words]
    return sentences[:limit]


#: The entry ``corpora/formats.py`` would register for it.
SLASHES = CorpusFormat(
    "slashes", "one sentence per line, each word form/head", read=_read_slashes,
    parse=lambda text, name, _: _parse_slashes(text, name), task="dependency", suffixes=(".slash",),
    looks_like=lambda line: all("/" in token for token in line.split()), sniff_order=5)

GOLD = "The/2 cat/3 sat/0 ./3\nA/2 dog/0\n"


@pytest.fixture
def slashes():
    """The format registered for one test, as ``corpora/formats.py`` registers its entries."""
    with FORMATS.registered(SLASHES):
        yield SLASHES


def test_the_cli_choices_are_the_entries():
    assert list(CORPUS_FORMATS) == ["auto", *(f.name for f in FORMAT_TABLE)] == ["auto", *FORMATS]


def test_a_new_format_is_read_detected_and_sniffed(tmp_path, monkeypatch, slashes):
    path = tmp_path / "c.slash"
    path.write_text(GOLD, encoding="utf-8")
    assert detect_format(path) == "slashes"
    assert [(s.words, s.heads) for s in read_corpus(path)] == [(["The", "cat", "sat", "."], [2, 3, 0, 3]),
                                                                (["A", "dog"], [2, 0])]
    assert [s.words for s in read_corpus(path, "slashes", limit=1)] == [["The", "cat", "sat", "."]]
    assert sniff_format("# comment\nthe/2 cat/0\n") == "slashes"
    monkeypatch.setattr(sys, "stdin", io.StringIO("a/0 b/1\n"))
    assert [s.heads for s in read_corpus("-")] == [[0, 1]]


def test_a_new_format_is_a_format_choice(slashes):
    from pmask.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for command in ("parse", "impact", "sweep"):
        action = next(a for a in sub.choices[command]._actions if "--format" in a.option_strings)
        assert "slashes" in (action.choices or [])


def test_a_new_format_s_task_is_what_scoring_and_bench_read(tmp_path, slashes):
    from pmask.eval.comparison.compare import evaluate_files
    from pmask.eval.studies.bench.treebanks import find_treebanks
    from pmask.trees.tasks import corpus_task

    gold = tmp_path / "gold.slash"
    gold.write_text(GOLD, encoding="utf-8")
    sentences = read_corpus(gold)
    assert corpus_task(sentences) == "dependency"
    (treebank,) = find_treebanks([gold])
    assert (treebank.fmt, treebank.task, treebank.name) == ("slashes", "dependency", "gold")
    pred = tmp_path / "pred.conllu"
    write_conllu(sentences, [[2, 3, 0, 2], [0, 1]], pred)    # 3 of 4 heads, then 0 of 2
    score = evaluate_files(pred, gold).score.to_dict()
    assert (score["correct"], score["total"]) == (3, 6)
    trees = tmp_path / "pred.txt"
    trees.write_text("(X The cat)\n(X A dog)\n", encoding="utf-8")
    with pytest.raises(PmaskError, match="holds bracketed trees .* but the gold .*gold.slash holds dependency heads"):
        evaluate_files(trees, gold)


def test_sniffing_order_keeps_a_dep3_line_that_opens_a_bracket():
    assert sniff_format("(\tPUNCT\t0\n") == "dep3"
    assert sniff_format("(S (NN a))\n") == "ptb"
