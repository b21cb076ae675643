"""Each score class knows its columns and headline (SuPar-style); every table asks it, and every
caller that scores fills it.

A tiny new score class, registered in ``SCORES`` and nowhere else, shows up in the comparison, the
layer sweep, ``bench``'s CSV, headline choice and the labels; a new score of an existing task, registered
in ``SCORES`` alone, is computed (its values, not only its column) by ``eval`` (prediction and
baselines; table, JSON, CSV, data frame), ``sweep`` and ``bench``; and the tables the built-in scores
give are the ones the hand-written lists gave before.
"""
from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest

from pmask.cli import main
from pmask.eval import BracketScore, DependencyScore, Score
from pmask.eval.comparison.tables import Comparison, LayerSweep
from pmask.eval.scores import columns
from pmask.eval.scores.score import SCORES, Column
from pmask.eval.studies.bench import results
from pmask.eval.studies.bench.scoring import summary

from entry_checks import score_is_whole


@dataclass(repr=False)
class AlignmentScore(Score):
    """A made-up score of a made-up task: aligned words out of all."""

    name = "alignment"
    task = "alignment"
    columns = (Column("aer", "AER"), Column("recall_aligned", "Aligned R", per_layer=False))

    aligned: int = 0
    total: int = 0

    def to_dict(self):
        return {"aer": 100 * self.aligned / max(self.total, 1), "recall_aligned": 50.0, "total": self.total}


@pytest.fixture
def with_new_score():
    with SCORES.registered(AlignmentScore):
        yield


def test_every_table_s_columns_are_the_registered_scores_columns_in_their_order():
    """The columns every table shows are the score classes' (one class after the other, in registry order): no
    table keeps a list of its own (issue 46: no list to edit when a score is added)."""
    for task in columns.tasks():
        own = [cls for cls in SCORES.values() if cls.task == task and not cls.optional]
        assert columns.percent_keys(task) == tuple(c.key for cls in own for c in cls.columns)
        assert columns.layer_keys(task) == tuple(c.key for cls in own for c in cls.columns if c.per_layer)
        assert columns.headline_key(task) == own[0].columns[0].key
    assert columns.all_percent_keys() == tuple(c.key for cls in SCORES.values() for c in cls.columns)
    layer = tuple(c.key for cls in SCORES.values() if not cls.optional for c in cls.columns if c.per_layer)
    fields = results.csv_fields()
    assert fields[fields.index("faithful") + 1:fields.index("sentences")] == layer
    assert columns.labels() == {**{c.key: c.label for cls in SCORES.values() for c in cls.columns},
                                "words": "Words", "sentences": "Sentences"}
    assert {columns.short_label(c.key) for cls in SCORES.values() for c in cls.columns} == {
        c.short or c.label for cls in SCORES.values() for c in cls.columns}


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


@dataclass(repr=False)
class RootScore(Score):
    """A made-up dependency score: the sentences whose gold root word the prediction attaches to ROOT."""

    name = "root_hits"
    task = "dependency"
    columns = (Column("root_hits", "Root"),)

    hits: int = 0
    seen: int = 0

    def add_sentence(self, pred, gold, *, punct_mask=None):
        self.hits += int(pred[gold.heads.index(0)]) == 0
        self.seen += 1

    def to_dict(self):
        return {"root_hits": 100 * self.hits / self.seen if self.seen else 0.0, "root_seen": self.seen}


@pytest.fixture
def with_root_score():
    """RootScore registered in SCORES as the score modules register theirs, and nowhere else."""
    with SCORES.registered(RootScore):
        score_is_whole(RootScore)   # its kind's contract (it lives in this test, not in eval/scores/)
        yield


DATA = Path(__file__).resolve().parents[2] / "data"


def _conllu(heads_by_sentence) -> str:
    return "".join(f"# sent_id = s{k}\n" + "".join(f"{i}\tw{i}\t_\tNOUN\t_\t_\t{h}\t_\t_\t_\n"
                                                  for i, h in enumerate(heads, start=1)) + "\n"
                   for k, heads in enumerate(heads_by_sentence, start=1))


def _heads(path: Path) -> list[list[int]]:
    """The heads of each sentence of a CoNLL-U file, read here (column 7 of the word lines)."""
    out: list[list[int]] = [[]]
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = line.split("\t")
        if len(cells) == 10 and cells[0].isdigit():
            out[-1].append(int(cells[6]))
        elif not line.strip() and out[-1]:
            out.append([])
    return [heads for heads in out if heads]


def test_a_new_score_is_computed_by_eval_for_every_row(with_root_score, tmp_path, capsys):
    from pmask.eval.comparison.compare import evaluate_files

    gold, pred = tmp_path / "gold.conllu", tmp_path / "pred.conllu"
    gold.write_text(_conllu([[2, 0, 2], [0, 1, 2, 3]]), encoding="utf-8")   # roots: word 2, word 1
    pred.write_text(_conllu([[2, 0, 2], [2, 0, 2, 3]]), encoding="utf-8")   # the second root is wrong
    js, cs = tmp_path / "e.json", tmp_path / "e.csv"
    assert main(["eval", str(pred), "--gold", str(gold), "--baselines", "--root", "free", "-q",
                 "--json", str(js), "--csv", str(cs)]) == 0
    out = capsys.readouterr().out
    # free root: right-chain roots the last word (wrong twice), left-chain the first word (right once)
    expected = {"prediction": 50.0, "right-chain": 0.0, "left-chain": 50.0}
    header = [cell.strip() for cell in next(line for line in out.splitlines() if "| Name" in line).split("|")]
    assert header[3:6] == ["UAS", "UUAS", "Root"]
    for name, value in expected.items():
        cells = [c.strip() for c in next(line for line in out.splitlines() if line.startswith(f"| {name} ")).split("|")]
        assert cells[5].strip("*") == f"{value:.2f}", name
    rows = {row["name"]: row for row in json.loads(js.read_text(encoding="utf-8"))["rows"]}
    assert {name: rows[name]["root_hits"] for name in expected} == expected
    assert all(row["root_seen"] == 2 for row in rows.values())
    table = {row["name"]: row for row in csv.DictReader(cs.open(encoding="utf-8"))}
    assert {name: float(table[name]["root_hits"]) for name in expected} == expected
    result = evaluate_files(pred, gold, baselines=True, root="free")
    assert result.to_dict()["root_hits"] == 50.0
    pytest.importorskip("pandas")
    frame = result.to_pandas().set_index("name")
    assert {name: frame.loc[name, "root_hits"] for name in expected} == expected


def test_a_new_score_is_computed_by_sweep_and_bench(with_root_score, tiny_bert_dir, tmp_path, capsys):
    mini = DATA / "mini.conllu"
    gold = _heads(mini)
    gold_roots = [heads.index(0) for heads in gold]   # 0-based
    # sweep with a free root: its last layer's value is the one the trees of parse --layer -1 give, counted here
    js, parsed = tmp_path / "s.json", tmp_path / "p.conllu"
    assert main(["sweep", str(mini), "--model", str(tiny_bert_dir), "--root", "free", "--baselines", "-q",
                 "--json", str(js)]) == 0
    assert main(["parse", str(mini), "--model", str(tiny_bert_dir), "--root", "free", "--layer", "-1", "-q",
                 "-o", str(parsed)]) == 0
    hits = sum(heads[root] == 0 for heads, root in zip(_heads(parsed), gold_roots))
    sweep = json.loads(js.read_text(encoding="utf-8"))
    assert "root_hits" in sweep["metric_keys"]
    assert sweep["rows"][-1]["root_hits"] == pytest.approx(100 * hits / len(gold_roots))
    assert all(row["root_seen"] == len(gold_roots) for row in sweep["rows"])
    left = next(b for b in sweep["baselines"] if b["name"] == "left-chain")   # free root: the first word
    assert left["root_hits"] == pytest.approx(100 * gold_roots.count(0) / len(gold_roots))
    # bench (gold root): every row and baseline row finds the gold root; 0.0 had it not been filled
    out = tmp_path / "bench"
    assert main(["bench", str(mini), "--model", str(tiny_bert_dir), "--layers", "1", "-q", "-o", str(out)]) == 0
    capsys.readouterr()
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert [row["root_hits"] for row in results["rows"] + results["baselines"]] == [100.0] * (
        len(results["rows"]) + len(results["baselines"]))
    table = list(csv.DictReader((out / "results.csv").open(encoding="utf-8")))
    assert {row["root_hits"] for row in table} == {"100.00"}


@dataclass(repr=False)
class AskedRootScore(RootScore):
    """RootScore computed only when asked for, by its name."""

    name = "root_asked"
    optional = True
    columns = (Column("root_asked", "Root (asked)"),)

    def to_dict(self):
        return {"root_asked": 100 * self.hits / self.seen if self.seen else 0.0}


def test_a_new_optional_score_is_asked_for_by_name(tmp_path, capsys):
    """An optional score registered alone is a ``--score`` choice of eval, sweep and bench, computed where asked
    and nowhere else (issue 46: ``scores=[...]``, ``--score NAME``)."""
    gold, pred = tmp_path / "gold.conllu", tmp_path / "pred.conllu"
    gold.write_text(_conllu([[2, 0, 2], [0, 1, 2, 3]]), encoding="utf-8")   # roots: word 2, word 1
    pred.write_text(_conllu([[2, 0, 2], [2, 0, 2, 3]]), encoding="utf-8")   # the second root is wrong
    js = tmp_path / "e.json"
    with SCORES.registered(AskedRootScore):
        score_is_whole(AskedRootScore)
        for command in ("eval", "sweep", "bench"):
            assert main([command, "--help"]) == 0
            help_text = " ".join(capsys.readouterr().out.split())
            assert re.search(r"--score NAME add an optional score .*?\(repeatable\): hoover_uuas, root_asked",
                             help_text), command
        assert main(["eval", str(pred), "--gold", str(gold), "--score", "root_asked", "-q", "--json", str(js)]) == 0
        row = json.loads(js.read_text(encoding="utf-8"))["rows"][0]
        assert row["root_asked"] == 50.0   # counted above: one root of two
        assert main(["eval", str(pred), "--gold", str(gold), "-q", "--json", str(js)]) == 0
        assert "root_asked" not in json.loads(js.read_text(encoding="utf-8"))["rows"][0]   # not asked: as it was
    assert main(["eval", str(pred), "--gold", str(gold), "--score", "root_asked"]) == 2   # gone with its entry
    assert "invalid choice: 'root_asked'" in capsys.readouterr().err


def test_an_unknown_task_is_refused_by_name():
    with pytest.raises(KeyError, match="alignment"):
        columns.score_class("alignment")
    with pytest.raises(ValueError, match="'dependency' or 'constituency'"):
        Comparison([], "alignment")
