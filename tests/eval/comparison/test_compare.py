"""The comparison (``pmask.eval.comparison.compare``): a score over nothing is refused, relation subtypes
follow one convention everywhere, every ``--details`` breakdown is in the JSON, and ``repr()``s are short."""
from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import pytest

from pmask.cli import main
from pmask.eval.comparison.compare import evaluate_files
from pmask.eval.html.data import dependency_breakdowns, dependency_sentences, load_inputs
from pmask.eval.scores.dependency_score import DependencyScore, relation_key
from pmask.eval.studies.bench.scoring import breakdown


def _stdin(monkeypatch, text: str) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8"))


DATA = Path(__file__).resolve().parents[2] / "data"


def test_bracket_score_over_nothing_is_refused(monkeypatch, capsys):
    from pmask.eval.comparison import compare
    monkeypatch.setattr(compare, "read_prediction", lambda path: ("constituency", [None, None, None, None]))
    assert main(["eval", "pred.txt", "--gold", str(DATA / "mini.mrg")]) == 1
    err = capsys.readouterr().err
    assert "nothing to score" in err and "has a predicted tree" in err


# ----------------------------- one convention for relation subtypes, every --details breakdown in the JSON, short reprs

# (word, head, relation) of a sentence with subtyped relations: nmod:poss next to nmod, obl:tmod next to obl
_BASE = [("My", 2, "nmod:poss"), ("cat", 3, "nsubj"), ("sat", 0, "root"), ("on", 6, "case"), ("the", 6, "det"),
         ("mat", 3, "obl"), ("of", 8, "case"), ("John", 6, "nmod"), ("yesterday", 3, "obl:tmod")]


def _sentence(k: int) -> str:
    """Sentence k: the base words, k adverbs and a full stop (lengths 10 to 29 words)."""
    rows = _BASE + [("really", 3, "advmod")] * k + [(".", 3, "punct")]
    lines = [f"{i}\t{w}\t{w.lower()}\t{'PUNCT' if rel == 'punct' else 'X'}\t_\t_\t{h}\t{rel}\t_\t_"
             for i, (w, h, rel) in enumerate(rows, start=1)]
    return f"# sent_id = s{k}\n# text = {' '.join(w for w, _, _ in rows)}\n" + "\n".join(lines) + "\n\n"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A 20-sentence gold file with relation subtypes and a right-chain prediction of it (``pmask parse``)."""
    folder = tmp_path_factory.mktemp("details")
    gold, pred = folder / "gold.conllu", folder / "pred.conllu"
    gold.write_text("".join(_sentence(k) for k in range(20)), encoding="utf-8")
    assert main(["parse", str(gold), "--decoder", "right-chain", "-q", "-o", str(pred)]) == 0
    return pred, gold


_TITLES = {"by gold relation": "relation", "by gold arc length": "arc_length", "by sentence length": "sentence_length"}


_ROW = re.compile(r"^\s+(\S+)\s+(\d+)/(\d+)\s+([\d.]+)$")


def printed_breakdowns(out: str) -> dict[str, dict[str, tuple[int, int, float]]]:
    """The sections ``eval --details`` printed: breakdown → {bucket: (correct, total, accuracy)}."""
    found: dict[str, dict[str, tuple[int, int, float]]] = {}
    section = None
    for line in out.splitlines():
        title = next((name for prefix, name in _TITLES.items() if line.startswith(prefix)), None)
        if title is not None:
            section = found.setdefault(title, {})
        elif section is not None and (m := _ROW.match(line)):
            section[m[1]] = (int(m[2]), int(m[3]), float(m[4]))
    return found


def cells(table: dict[str, dict[str, float]]) -> dict[str, tuple[int, int, float]]:
    return {key: (int(c["correct"]), int(c["total"]), round(float(c["accuracy"]), 2)) for key, c in table.items()}


def run_eval(files, tmp_path, capsys, *extra: str) -> tuple[dict[str, dict[str, tuple[int, int, float]]], dict]:
    pred, gold = files
    out_json = tmp_path / "scores.json"
    assert main(["eval", str(pred), "--gold", str(gold), "--details", "--json", str(out_json), *extra]) == 0
    printed = printed_breakdowns(capsys.readouterr().out)
    assert set(printed) == set(_TITLES.values())
    return printed, json.loads(out_json.read_text(encoding="utf-8"))


def test_relation_key_merges_subtypes_unless_asked():
    assert relation_key("nmod:poss") == "nmod" and relation_key("acl:relcl") == "acl"
    assert relation_key("nmod:poss", subtypes=True) == "nmod:poss" and relation_key("obj") == "obj"


def test_json_holds_every_printed_breakdown(files, tmp_path, capsys):
    printed, data = run_eval(files, tmp_path, capsys)
    assert data["relation_subtypes"] is False
    for name, table in printed.items():
        assert cells(data["breakdowns"][name]) == table, name
    assert data["breakdowns"]["sentence_length"]["1-10"]["sentences"] == 1   # sentence length also counts sentences
    assert data["uas"] == pytest.approx(evaluate_files(*files).score.uas)   # the top-level figures stay


def test_subtypes_merged_alike_in_the_table_the_json_pandas_and_the_report(files, tmp_path, capsys):
    pytest.importorskip("pandas")
    printed, _ = run_eval(files, tmp_path, capsys)
    relations = printed["relation"]
    assert "nmod:poss" not in relations and relations["nmod"][1] == 40 and relations["obl"][1] == 40
    evaluation = evaluate_files(*files)
    frame = evaluation.to_pandas("relation")
    assert {r.relation: (r.correct, r.total, round(r.accuracy, 2)) for r in frame.itertuples()} == relations
    assert list(frame["relation"]) == list(relations)   # same order: most frequent first
    assert evaluation.score.to_pandas("relation").equals(frame)
    inputs = load_inputs(*files)
    report = dependency_breakdowns(inputs, dependency_sentences(inputs))[0]
    assert {r["label"]: (r["correct"], r["total"], round(r["accuracy"], 2)) for r in report["rows"]} == relations
    assert cells(breakdown(evaluation.score)["relation"]) == relations   # bench's results.json


def test_subtypes_kept_on_request(files, tmp_path, capsys):
    pytest.importorskip("pandas")
    printed, data = run_eval(files, tmp_path, capsys, "--subtypes")
    relations = printed["relation"]
    assert relations["nmod:poss"][1] == 20 and relations["nmod"][1] == 20 and relations["obl:tmod"][1] == 20
    assert data["relation_subtypes"] is True and cells(data["breakdowns"]["relation"]) == relations
    evaluation = evaluate_files(*files, subtypes=True)
    frame = evaluation.to_pandas("relation")
    assert {r.relation: (r.correct, r.total, round(r.accuracy, 2)) for r in frame.itertuples()} == relations
    assert evaluation.score.to_pandas("relation", subtypes=True).equals(frame)
    assert cells(evaluation.score.by_relation(subtypes=True)) == relations


def test_breakdowns_in_long_form(files):
    pytest.importorskip("pandas")
    evaluation = evaluate_files(*files)
    frame = evaluation.to_pandas("breakdowns")
    assert list(frame.columns[:2]) == ["breakdown", "bucket"]
    assert list(frame["breakdown"].unique()) == ["relation", "arc_length", "sentence_length"]
    relation = frame[frame["breakdown"] == "relation"]
    assert dict(zip(relation["bucket"], relation["total"])) == {
        k: c["total"] for k, c in evaluation.score.by_relation().items()}


def test_repr_of_an_evaluation_is_a_short_summary(files):
    evaluation = evaluate_files(*files, baselines=True)
    text = repr(evaluation)
    assert len(text) < 2000 and len(text.splitlines()) <= 12, text
    assert "20 sentences" in text and f"{evaluation.score.uas:.2f}" in text and "UAS" in text
    assert all(row.name in text for row in evaluation.table.rows)
    assert len(repr(evaluation.table)) < 2000 and "right-chain" in repr(evaluation.table)
    score = repr(evaluation.score)   # the prediction's scores: UAS/UUAS alone unless an optional one is asked
    assert score.startswith("ScoreSet(DependencyScore(") and len(score.splitlines()) == 1 and len(score) < 300
    assert "sentences=20" in score and f"uas={evaluation.score.uas:.2f}" in score
    assert len(evaluation._repr_html_() or "") < 20_000   # the comparison table, whatever the corpus size


def test_repr_of_a_bracket_evaluation(tmp_path):
    pred = tmp_path / "pred.txt"
    assert main(["parse", str(DATA / "mini.mrg"), "--decoder", "right-branching", "-q", "-o", str(pred)]) == 0
    evaluation = evaluate_files(pred, DATA / "mini.mrg", baselines=True)
    text = repr(evaluation)
    assert len(text) < 2000 and "constituency" in text and "Sentence F1" in text, text
    assert repr(evaluation.score).startswith("ScoreSet(BracketScore(") and "f1_sentence=" in repr(evaluation.score)
    assert "sentences=0" in repr(DependencyScore())


def test_faithful_discourse_baselines_are_their_chains():
    """Under Wu et al.'s discourse pipeline the chains leave the last EDU out (scored wrong)."""
    from pmask.corpora import Sentence
    from pmask.eval.comparison.compare import baseline_scores

    doc = Sentence(id="d", words=["a", "b", "c", "d"], heads=[0, 1, 2, 3], unit="edu")
    clean = baseline_scores("dependency", [doc], root="gold", names=["left-chain"])["left-chain"]
    theirs = baseline_scores("dependency", [doc], root="gold", names=["left-chain"], faithful=True)["left-chain"]
    assert (clean.correct, theirs.correct, theirs.total) == (4, 3, 4)
