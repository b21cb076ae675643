"""Each score class knows its columns and headline (SuPar-style); every table asks it.

A tiny new score class, named in ``SCORES`` and nowhere else, shows up in the comparison, the
layer sweep, ``bench``'s CSV, headline choice and the labels; and the tables the built-in scores
give are the ones the hand-written lists gave before.
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from types import SimpleNamespace

import pytest

from pmask.eval import BracketScore, DependencyScore, Score
from pmask.eval.comparison.tables import Comparison, LayerSweep
from pmask.eval.scores import columns
from pmask.eval.scores.score import Column
from pmask.eval.studies.bench import results
from pmask.eval.studies.bench.scoring import summary


@dataclass(repr=False)
class AlignmentScore(Score):
    """A made-up score of a made-up task: aligned words out of all."""

    task = "alignment"
    columns = (Column("aer", "AER"), Column("recall_aligned", "Aligned R", per_layer=False))

    aligned: int = 0
    total: int = 0

    def to_dict(self):
        return {"aer": 100 * self.aligned / max(self.total, 1), "recall_aligned": 50.0, "total": self.total}


@pytest.fixture
def with_new_score(monkeypatch):
    monkeypatch.setattr(columns, "SCORES", [*columns.SCORES, AlignmentScore])


def test_the_built_in_scores_give_the_columns_the_lists_held():
    """The three hand-written lists (output.PERCENT_KEYS/LABELS, sweep.SWEEP_KEYS, bench CSV_FIELDS), as they were."""
    assert columns.percent_keys("dependency") == ("uas", "uuas")
    assert columns.percent_keys("constituency") == ("f1_sentence", "f1_corpus", "precision", "recall")
    assert columns.all_percent_keys() == ("uas", "uuas", "f1_sentence", "f1_corpus", "precision", "recall")
    assert {t: columns.layer_keys(t) for t in ("dependency", "constituency")} == {
        "dependency": ("uas", "uuas"), "constituency": ("f1_sentence", "f1_corpus")}
    assert results.csv_fields() == ("kind", "treebank", "language", "probe", "head", "layer", "decoder", "root",
                                  "uas", "uuas", "f1_sentence", "f1_corpus", "sentences", "words", "metric")
    assert columns.labels() == {"uas": "UAS", "uuas": "UUAS", "f1_sentence": "Sentence F1", "f1_corpus": "Corpus F1",
                                "precision": "P", "recall": "R", "words": "Words", "sentences": "Sentences"}
    assert [results.primary_key(r) for r in ({"uas": 1.0}, {"f1_sentence": 2.0}, {"uas": None}, {})] == [
        "uas", "f1_sentence", "f1_sentence", "f1_sentence"]
    assert (columns.short_label("uas"), columns.short_label("f1_sentence")) == ("UAS", "F1")


def test_a_score_knows_its_headline():
    dep = DependencyScore()
    dep.add([2, 0, 2], [2, 0, 2])
    dep.add([0, 1], [2, 0])
    assert DependencyScore.headline_key() == "uas" and dep.headline == pytest.approx(60.0) == dep.uas
    assert BracketScore.headline_key() == "f1_sentence" and BracketScore.layer_keys() == ("f1_sentence", "f1_corpus")


def test_bench_rows_hold_each_scores_per_layer_columns():
    dep = DependencyScore()
    dep.add([2, 0], [2, 0])
    assert summary(dep, []) == {"uas": 100.0, "uuas": 100.0, "sentences": 1, "words": 2}
    assert list(summary(BracketScore(), [])) == ["f1_sentence", "f1_corpus", "sentences", "words"]


def test_a_new_score_is_one_class_and_every_table_shows_it(with_new_score):
    # the comparison (eval): its columns, labelled, as percentages; its task accepted
    table = Comparison([], "alignment")
    table.add("model", AlignmentScore(aligned=1, total=4))
    markdown = table.to_markdown(header=False)
    header = [cell.strip() for cell in markdown.splitlines()[0].strip("|").split("|")]
    assert header == ["Name", "Kind", "AER", "Aligned R"], header
    assert "25.00" in markdown and "50.00" in markdown
    assert next(csv.reader(io.StringIO(table.to_csv())))[:4] == ["name", "kind", "aer", "recall_aligned"]
    # the layer sweep: found among the percentage keys, labelled, and probe columns of it too
    sweep = LayerSweep([(1, {"aer": 12.5}), (2, {"aer": 20.0})])
    assert sweep.metric_keys == ("aer",) and "AER" in sweep.to_markdown() and "20.00" in sweep.to_markdown()
    assert columns.is_percent_key("pair aer") and columns.layer_keys("alignment") == ("aer",)
    # bench: a results.csv column, and the headline of its rows
    assert "aer" in results.csv_fields() and "recall_aligned" not in results.csv_fields()
    row = {"treebank": "t", "layer": 1, "decoder": "d", "aer": 33.3}
    assert results.primary_key(row) == "aer"
    result = SimpleNamespace(rows=[row], baselines=[])
    assert next(csv.DictReader(io.StringIO(results.to_csv(result))))["aer"] == "33.30"
    assert columns.short_label("aer") == "AER" and columns.headline_key("alignment") == "aer"


def test_an_unknown_task_is_refused_by_name():
    with pytest.raises(KeyError, match="alignment"):
        columns.score_class("alignment")
    with pytest.raises(ValueError, match="'dependency' or 'constituency'"):
        Comparison([], "alignment")
