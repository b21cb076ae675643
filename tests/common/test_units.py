"""The unit entries (issue 46 item 2): a record's unit owns its nouns, its job, the authors' texts and what
applies to it (refused in one line naming the setting: ``tests/pipeline/test_checks.py``); the outputs say
documents and EDUs (issue 47 item 14)."""
from __future__ import annotations

from pathlib import Path

import pmask
from pmask.cli import main
from pmask.common.units import UNITS, unit_entry, unit_marked, unit_of
from pmask.corpora import Sentence, read_corpus

DATA = Path(__file__).resolve().parents[1] / "data"
SCIDTB = DATA / "scidtb"
TINY = "pmask-tiny-en"


def test_each_unit_owns_its_nouns_job_texts_and_what_applies():
    word, edu = UNITS["word"], UNITS["edu"]
    assert (word.record, word.noun, edu.record, edu.noun) == ("sentence", "word", "document", "EDU")
    assert word.job is None and edu.job.__name__ == "DocumentJob"
    assert edu.authors_texts is not None and word.authors_texts is None
    assert edu.refusal("pair", "cos", "avg", "words", 0) is None and word.refusal("single", "prob", "max", "text", 5) \
        is None
    assert edu.metrics("pair") == ("dist", "cos")   # the metrics that pool (MetricEntry.pools), in pair's order
    assert unit_of(read_corpus(SCIDTB)) is edu and unit_of([]) is word and unit_marked("EDU") is edu
    assert Sentence(id="d", words=["a b", "c"], unit="edu").where() == "<input> (document d)"


def test_documents_are_said_documents(tmp_path, capsys):
    """Issue 47 item 14: what is read, what is computed and what a run refused says documents, never sentences."""
    code = main(["parse", str(SCIDTB), "--model", TINY, "--dry-run", "-o", str(tmp_path / "x.conllu")])
    err = capsys.readouterr().err
    assert code == 0, err
    assert f"read 3 documents from {SCIDTB}" in err and "3 documents to compute" in err and "sentence" not in err
    pred = tmp_path / "rc.conllu"
    assert main(["parse", str(SCIDTB), "--decoder", "right-chain", "-q", "-o", str(pred)]) == 0
    assert main(["eval", str(pred), "--gold", str(SCIDTB), "--details"]) == 0
    out = capsys.readouterr().out
    assert "| EDUs | Documents |" in out.replace("  ", " ").replace("  ", " ") and "by document length (scored EDUs)" \
        in out and "Sentences" not in out, out
    parsed = pmask.parse(read_corpus(SCIDTB)[:1], decoder="right-chain")[0]
    assert "4 EDUs" in repr(parsed) and parsed.sentence.noun == "document"
    assert unit_entry("edu").labels(["We present a parser", "which beats the state of the art"]) == [
        "1 We present a parser", "2 which beats the…"]
