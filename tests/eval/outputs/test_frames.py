"""``to_pandas()`` on the tabular results, and the one-line error naming the extra when pandas is missing."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pmask.cli import main
from pmask.common.errors import OptionError, PmaskError
from pmask.common.frames import MissingExtraError, data_frame, flatten
from pmask.corpora import read_corpus
from pmask.eval.comparison.compare import evaluate_files
from pmask.eval.comparison.tables import Comparison, ComparisonRow, LayerSweep
from pmask.eval.scores.bracket_score import BracketScore
from pmask.eval.scores.dependency_score import DependencyScore
from pmask.eval.studies.sweep import SweepResult

pd = pytest.importorskip("pandas")
DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def evaluation(tmp_path_factory):
    pred = tmp_path_factory.mktemp("frames") / "pred.conllu"
    assert main(["parse", str(DATA / "mini.conllu"), "--decoder", "right-chain", "-q", "-o", str(pred)]) == 0
    return evaluate_files(pred, DATA / "mini.conllu", baselines=True)


def test_comparison_rows(evaluation):
    frame = evaluation.table.to_pandas()
    assert list(frame["name"]) == [r.name for r in evaluation.table.rows]
    assert list(frame.columns[:4]) == ["name", "kind", "uas", "uuas"]
    assert "settings.decoder" in frame.columns and frame.loc[0, "settings.decoder"] == "right-chain"
    assert frame.loc[0, "uas"] == pytest.approx(evaluation.score.uas)
    assert evaluation.to_pandas().equals(frame)


def test_per_sentence_scores_and_breakdowns(evaluation):
    score = evaluation.score
    sentences = evaluation.to_pandas("sentences")
    assert list(sentences["id"]) == [s.id for s in score.per_sentence]
    assert sentences["correct"].sum() == score.correct
    relation = score.to_pandas("relation")
    assert relation["total"].sum() == score.total and list(relation["relation"]) == list(score.by_relation())
    assert list(score.to_pandas("arc_length")["arc_length"]) == list(score.by_length())
    assert score.to_pandas("sentence_length")["sentences"].sum() == score.sentences
    with pytest.raises(OptionError, match="unknown evaluation table 'nope'"):
        evaluation.to_pandas("nope")
    assert list(DependencyScore().to_pandas("relation").columns) == ["relation", "correct", "total", "accuracy"]


def test_bracket_scores_per_sentence():
    golds = read_corpus(DATA / "mini.mrg")
    score = BracketScore()
    for g in golds:
        score.add(g.tree, g.tree, sent_id=g.id)
    frame = score.to_pandas()
    assert list(frame["id"]) == [g.id for g in golds] and set(frame["f1"]) == {100.0}
    with pytest.raises(OptionError):
        score.to_pandas("relation")


def test_sweep_rows_are_indexed_by_layer():
    sweep = LayerSweep([(3, {"uas": 41.7, "uuas": 50.0}), (1, {"uas": 30.0})], ("uas", "uuas"))
    frame = sweep.to_pandas()
    assert frame.index.name == "layer" and list(frame.index) == [1, 3]
    assert frame.loc[3, "uas"] == 41.7 and pd.isna(frame.loc[1, "uuas"])
    assert SweepResult(sweep, "dependency").to_pandas().equals(frame)


def test_bench_tables(tmp_path, tiny_bert_dir):
    from pmask.eval.studies.bench.run import BenchSettings, run_bench

    result = run_bench([DATA / "mini.conllu"], tmp_path / "b", BenchSettings(model=str(tiny_bert_dir), layers=[1, 2],
                                                                            decoders=["eisner"]),
                       progress=False, write=False)
    rows = result.to_pandas()
    assert len(rows) == 2 and list(rows["layer"]) == [1, 2] and set(rows["decoder"]) == {"eisner"}
    assert set(result.to_pandas("baselines")["baseline"]) == {"right-chain", "left-chain", "random-projective"}
    assert result.to_pandas("treebanks").loc[0, "treebank"] == "mini"
    long = result.to_pandas("breakdowns")
    assert set(long["breakdown"]) == {"relation", "arc_length", "sentence_length"}
    first = result.breakdowns[0]
    cell = long[(long["layer"] == first["layer"]) & (long["breakdown"] == "relation")]
    assert cell["total"].sum() == sum(c["total"] for c in first["relation"].values())
    with pytest.raises(OptionError, match="unknown bench table"):
        result.to_pandas("cells")


def test_flatten_and_empty_frames():
    assert flatten({"a": 1, "s": {"x": 2, "y": {"z": 3}}}) == {"a": 1, "s.x": 2, "s.y.z": 3}
    assert list(data_frame([], columns=["a", "b"]).columns) == ["a", "b"]
    assert list(Comparison([], "dependency").to_pandas().columns) == ["name", "kind", "uas", "uuas"]


def test_missing_pandas_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)   # import pandas now raises ImportError
    table = Comparison([ComparisonRow("x", "model", {"uas": 1.0})], "dependency")
    with pytest.raises(MissingExtraError, match=r"pip install 'pmask\[pandas\]'") as err:
        table.to_pandas()
    assert isinstance(err.value, PmaskError) and isinstance(err.value, ImportError)
    assert "\n" not in str(err.value)


def test_to_pandas_keeps_whole_numbers_whole(tmp_path):
    pytest.importorskip("pandas")
    from pmask.eval.comparison.compare import evaluate_files

    pred = tmp_path / "p.conllu"
    assert main(["parse", str(DATA / "mini.conllu"), "--decoder", "right-chain", "-o", str(pred), "-q"]) == 0
    frame = evaluate_files(pred, DATA / "mini.conllu", baselines=True).to_pandas()
    assert str(frame["settings.seed"].dtype) == "Int64"   # the baselines' rows have no settings
    assert frame["settings.seed"].iloc[0] == 0 and frame["settings.seed"].isna().sum() == len(frame) - 1


# ------------------------------------------------------------------ documents of EDUs (issue 37)

def test_frames_of_a_documents_eval_and_sweep(tmp_path, capsys):
    """``to_pandas`` on documents: eval's comparison and arc-length frames and the sweep's, against UAS counted
    from the SciDTB JSON the prediction was written as and the gold parents (json read here)."""
    from scidtb_counts import SCIDTB, WORDS, count, parents

    import pmask
    from pmask.perturb.testing import make_tiny_bert

    model = str(make_tiny_bert(tmp_path / "m", WORDS, max_positions=64, seed=1))
    pred = tmp_path / "pred"
    assert main(["parse", str(SCIDTB), "--model", model, "-q", "-o", str(pred)]) == 0
    capsys.readouterr()
    right, undirected, total = count(parents(pred), parents(SCIDTB))
    evaluation = evaluate_files(pred, SCIDTB, baselines=True)
    frame = evaluation.to_pandas()
    model_row = frame[frame["kind"] == "model"].iloc[0]
    assert model_row["uas"] == pytest.approx(100 * right / total)
    assert model_row["uuas"] == pytest.approx(100 * undirected / total)
    assert {"right-chain", "left-chain"} <= set(frame[frame["kind"] == "baseline"]["name"])
    lengths = evaluation.to_pandas("arc_length")
    assert lengths["total"].sum() == total   # every EDU's gold arc once, roots included
    sweep = pmask.sweep(SCIDTB, model=model).to_pandas()
    assert list(sweep.index) == [1, 2, 3]
    assert sweep.loc[3, "uas"] == pytest.approx(100 * right / total)   # parse decodes the last layer
