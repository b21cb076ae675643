"""The unit entries (issue 46 item 2): a record's unit owns its nouns, its job, the authors' texts and what
applies to it (refused in one line naming the setting: ``tests/pipeline/test_checks.py``); the outputs say
documents and EDUs (issue 47 item 14)."""
from __future__ import annotations

from pathlib import Path

import pmask
from pmask.cli import main
from pmask.common.units import UNITS, UnitEntry, unit_entry, unit_marked, unit_of
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


def _conllu(records: list[list[str]], noun: str) -> str:
    """CoNLL-U of ``records``, one unit a row, marked ``# units = NOUN`` as pmask writes records of units."""
    blocks = []
    for k, units in enumerate(records, start=1):
        rows = [f"{j}\t{u}\t_\t_\t_\t_\t_\t_\t_\t_" for j, u in enumerate(units, start=1)]
        blocks.append("\n".join([f"# sent_id = p{k}", f"# units = {noun}", *rows]))
    return "\n\n".join(blocks) + "\n\n"


def test_a_new_unit_is_read_run_said_and_refused_by_its_entry_alone(tmp_path, capsys):
    """The recipe of docs/architecture.md ("A unit"): one registered ``UnitEntry`` beside its job, and no other
    file: records marked with its noun are read as it, run as its job, said in its nouns and refused in its
    words (issue 46 item 4)."""
    from pmask.perturb.engine.documents import DocumentJob

    made: list[int] = []

    class ClauseJob(DocumentJob):
        def __init__(self, index, *args, **kwargs):
            made.append(index)
            super().__init__(index, *args, **kwargs)

    clause = UnitEntry(
        "clause", "a passage of clauses (made up for this test)", record="passage", noun="clause",
        split=lambda text: [c.strip() for c in text.split(";") if c.strip()], least=2,
        why_least="a passage needs two clauses", long=True, marked=True, job=ClauseJob,
        sequences=lambda units: units * (units + 1) // 2, probes=("pair",), subwords=("avg",), tokenize=("words",),
        takes_context=False, pooled=True, pooling="on the mean of each clause's piece states", skips_long=False)
    records = [["the cat sat", "on the mat", "and slept"], ["dogs bark", "at night"]]
    path = tmp_path / "clauses.conllu"
    path.write_text(_conllu(records, "clause"), encoding="utf-8")
    with UNITS.registered(clause):
        read = read_corpus(path)
        assert [(r.unit, r.words) for r in read] == [("clause", units) for units in records]
        assert main(["parse", str(path), "--model", TINY, "--dry-run", "-o", str(tmp_path / "x.conllu")]) == 0
        err = capsys.readouterr().err
        assert f"read 2 passages from {path}" in err and "2 passages to compute" in err and "sentence" not in err
        assert main(["parse", str(path), "--model", TINY, "--probe", "single", "-o", str(tmp_path / "y.conllu")]) == 1
        assert "passages of clauses take --probe pair only, not single" in capsys.readouterr().err
        parsed = pmask.parse(["the cat sat ; on the mat ; and slept", "dogs bark ; at night"], unit="clause",
                             model=TINY, decoder="eisner")
        assert sorted(made) == [0, 1]   # its job ran each record, in place of the probe's
        assert [len(p.heads) for p in parsed] == [3, 2] and [list(p.heads).count(0) for p in parsed] == [1, 1]
        assert "3 clauses" in repr(parsed[0]) and parsed[0].sentence.noun == "passage"
    assert "clause" not in UNITS
