"""Issue 27, item 7: ``pmask report --bench`` warns in one line when the bench scored other sentences
than the prediction (another --limit or --max-words, or another corpus), naming both sets."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pmask.cli import main

CORPUS = Path(__file__).resolve().parents[1] / "data" / "mini.conllu"


def run(args: list, capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = main([str(a) for a in args])   # not -q: it hides warnings
    return code, capsys.readouterr().err


@pytest.fixture(scope="module")
def made(tmp_path_factory, tiny_bert_dir):
    """mini.conllu parsed with --limit 2 (layer 3), and benches of its first 2 and first 3 sentences."""
    base = tmp_path_factory.mktemp("report_sets")
    corpus = base / "mini.conllu"
    shutil.copy(CORPUS, corpus)
    pred = base / "pred.conllu"
    assert main(["parse", str(corpus), "--model", str(tiny_bert_dir), "--limit", "2", "-q", "-o", str(pred)]) == 0
    benches = {}
    for name, flags in (("two", ["--limit", "2"]), ("three", ["--limit", "3"]), ("short", ["--max-words", "2"])):
        benches[name] = base / name
        assert main(["bench", str(corpus), "--model", str(tiny_bert_dir), "--layers", "-1", "--decoders", "eisner",
                     *flags, "-q", "-o", str(benches[name])]) == 0
    return corpus, pred, benches


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if "sentences" in line and "bench" in line]


def test_a_bench_of_the_same_sentences_gives_no_warning(made, tmp_path, capsys):
    corpus, pred, benches = made
    code, err = run(["report", pred, "--gold", corpus, "--bench", benches["two"], "-o", tmp_path / "r.html"], capsys)
    assert code == 0 and not _warnings(err), err


@pytest.mark.parametrize(("bench", "theirs"), [("three", "3 sentences (limit 3, max-words none)"),
                                               ("short", "3 sentences (limit none, max-words 2)")])
def test_a_bench_of_other_sentences_warns_in_one_line(made, tmp_path, capsys, bench, theirs):
    corpus, pred, benches = made
    code, err = run(["report", pred, "--gold", corpus, "--bench", benches[bench], "-o", tmp_path / "r.html"], capsys)
    assert code == 0 and (tmp_path / "r.html").is_file()
    (line,) = _warnings(err)
    assert "2 sentences (limit 2, max-words none)" in line and theirs in line and "mini.conllu" in line, line


def test_a_bench_without_the_predictions_corpus_warns(made, tmp_path, capsys, tiny_bert_dir):
    corpus, pred, _ = made
    other = tmp_path / "other.conllu"
    other.write_text(CORPUS.read_text(encoding="utf-8").replace("Sue likes tea", "Sue likes tee"), encoding="utf-8")
    bench = tmp_path / "bench"
    assert run(["bench", other, "--model", tiny_bert_dir, "--layers", "-1", "--decoders", "eisner", "--limit", "2",
                "-o", bench], capsys)[0] == 0
    code, err = run(["report", pred, "--gold", corpus, "--bench", bench, "-o", tmp_path / "r.html"], capsys)
    assert code == 0
    (line,) = _warnings(err)
    assert "none of its treebanks" in line and "other.conllu" in line and "mini.conllu" in line, line
