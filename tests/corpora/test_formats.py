"""Corpus formats are one entry each (pmask.corpora.formats): reading, detection by suffix, sniffing of
standard input, ``--format``'s choices and the task scoring and ``bench`` read follow from the entry, with
no other list to edit (the recipe of docs/architecture.md, "A corpus format")."""
from __future__ import annotations

import argparse
import io
import json
import logging
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from pmask.common.errors import PmaskError
from pmask.corpora import read_corpus, write_conllu
from pmask.corpora.formats import CORPUS_FORMATS, FORMAT_TABLE, FORMATS, CorpusFormat, detect_format, sniff_format
from pmask.corpora.sentence import Sentence

from entry_checks import check_entry

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


def _write_slashes(sentences, heads, path, deprel) -> None:
    """Predicted heads as form/head lines (what a writer module would hold)."""
    Path(path).write_text("".join(" ".join(f"{w}/{int(h)}" for w, h in zip(s.words, hs)) + "\n"
                                  for s, hs in zip(sentences, heads)), encoding="utf-8")


#: The same entry, with a writer: pmask writes predictions in it and reads them back.
WRITTEN = replace(SLASHES, write=_write_slashes, predictions=True)


def test_a_new_format_with_a_writer_takes_predictions_and_is_read_back(tmp_path, capsys):
    """A format registered with its writer alone: ``parse -o x.slash`` writes in it and ``eval`` reads it back
    (SciDTB output was special-cased in pipeline/trees_output.py; now every format's writer is its entry's)."""
    from pmask.cli import main

    gold = tmp_path / "gold.slash"
    gold.write_text(GOLD, encoding="utf-8")
    out, js = tmp_path / "pred.slash", tmp_path / "e.json"
    with FORMATS.registered(WRITTEN):
        check_entry("corpus format", WRITTEN)
        assert main(["parse", str(gold), "--decoder", "right-chain", "--root", "free", "-q", "-o", str(out)]) == 0
        assert out.read_text(encoding="utf-8") == "The/2 cat/3 sat/4 ./0\nA/2 dog/0\n"   # right-chain, by hand
        assert main(["eval", str(out), "--gold", str(gold), "-q", "--json", str(js)]) == 0
    # against the gold: The, cat, A, dog right; sat and . wrong (counted by hand)
    assert json.loads(js.read_text(encoding="utf-8"))["uas"] == pytest.approx(100 * 4 / 6)
    assert main(["parse", str(gold), "--decoder", "right-chain", "-q", "-o", str(tmp_path / "again.slash")]) == 1
    assert "CoNLL-U" in capsys.readouterr().err   # without its writer, a name for bracketed trees


def test_the_auto_help_is_the_entries_suffixes(slashes):
    help_text = CORPUS_FORMATS["auto"]
    assert all("/".join(f.suffixes) in help_text for f in FORMATS.values() if f.suffixes) and ".slash" in help_text
    assert help_text.endswith(f"else {next(f.name for f in FORMATS.values() if f.fallback)})")


def test_standard_input_read_as_text_says_which_formats_it_cannot_tell(monkeypatch, caplog):
    """A format without ``looks_like`` cannot be recognised on standard input: reading it as text says so, naming
    it and its ``--format`` (it was silent: a file of EDUs piped in became one sentence per EDU)."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("We present a parser\nthat reads .\n"))
    unseen = replace(SLASHES, name="plain-slashes", looks_like=None, suffixes=())
    with FORMATS.registered(unseen), caplog.at_level(logging.INFO, logger="pmask.corpora.read"):
        assert [s.words for s in read_corpus("-")] == [["We", "present", "a", "parser"], ["that", "reads", "."]]
    said = [r.getMessage() for r in caplog.records if "cannot be told" in r.getMessage()]
    assert len(said) == 1 and "edus" in said[0] and "plain-slashes" in said[0] and "--format" in said[0]
    caplog.clear()
    monkeypatch.setattr(sys, "stdin", io.StringIO("1\ta\t_\t_\t_\t_\t0\t_\t_\t_\n"))
    with caplog.at_level(logging.INFO, logger="pmask.corpora.read"):
        read_corpus("-")   # CoNLL-U, recognised: nothing to say
    assert not [r for r in caplog.records if "cannot be told" in r.getMessage()]


def test_sniffing_order_keeps_a_dep3_line_that_opens_a_bracket():
    assert sniff_format("(\tPUNCT\t0\n") == "dep3"
    assert sniff_format("(S (NN a))\n") == "ptb"
