"""Comparison reports and layer sweeps: Markdown, JSON (plain percentage keys), CSV and the plot."""
from __future__ import annotations

import csv
import io
import json

from PIL import Image

from pmask.eval.comparison.tables import Comparison, ComparisonRow, LayerSweep, plot_layer_sweep

DEP = {"uas": 41.7, "uuas": 50.0, "correct": 417, "total": 1000, "sentences": 50}


def comparison() -> Comparison:
    rows = [ComparisonRow("eisner", "model", DEP, {"layer": 12}),
            ComparisonRow("right-chain", "baseline", {**DEP, "uas": 35.04, "correct": 350}, {})]
    return Comparison(rows=rows, task="dependency", meta={"gold": "PUD.conllu", "punct": "include"})


def test_markdown_table_has_rows_and_columns():
    md = comparison().to_markdown()
    assert "| " in md and "UAS" in md and "UUAS" in md
    assert "eisner" in md and "right-chain" in md and "35.04" in md


def test_json_plain_percentage_keys(tmp_path):
    data = json.loads(comparison().to_json())
    assert data["rows"][0]["uas"] == 41.7 and data["rows"][1]["uas"] == 35.04
    assert data["rows"][0]["total"] == 1000
    path = comparison().write_json(tmp_path / "c.json")
    assert json.loads(path.read_text())["meta"]["gold"] == "PUD.conllu"


def test_csv_parses(tmp_path):
    rows = list(csv.DictReader(io.StringIO(comparison().to_csv())))
    assert [r["name"] for r in rows] == ["eisner", "right-chain"]
    assert float(rows[1]["uas"]) == 35.04


def test_layer_sweep_tables_and_plot(tmp_path):
    sweep = LayerSweep(rows=[(k, {"uas": 30 + k, "uuas": 40 + k}) for k in (3, 1, 2)], metric_keys=["uas", "uuas"])
    assert sweep.layers == [1, 2, 3]
    assert sweep.best("uas") == (3, 33)
    assert "uas" in sweep.to_markdown().lower()
    assert len(json.loads(sweep.to_json())["rows"]) == 3
    png = plot_layer_sweep(sweep, tmp_path / "s.png", baselines={"right-chain": 35.04})
    with Image.open(png) as img:
        assert img.format == "PNG" and img.size[0] > 300


# --- more detail: layout, round trips, atomic writes, bad input -------------------------

import math  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import pytest  # noqa: E402

from pmask.common.errors import PmaskError  # noqa: E402
from pmask.eval.comparison.tables import ReportError, atomic_write  # noqa: E402

BRACKETS = {"f1_sentence": 40.12, "f1_corpus": 38.5, "precision": 37.25, "recall": 39.75, "sentences": 20}


class FakeScore:
    """Stands in for DependencyScore / BracketScore: only ``to_dict()`` is used."""

    def __init__(self, d):
        self.d = d

    def to_dict(self):
        return dict(self.d)


def _table_lines(md: str) -> list[str]:
    return [line for line in md.splitlines() if line.startswith("|")]


def test_markdown_is_aligned_marks_best_and_shows_meta():
    md = comparison().to_markdown()
    assert md.splitlines()[0].startswith("**Dependency comparison**") and "gold: PUD.conllu" in md
    lines = _table_lines(md)
    assert len(lines) == 2 + 2 and len({len(line) for line in lines}) == 1
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    assert header == ["Name", "Kind", "UAS", "UUAS", "Words", "Sentences", "Settings"]
    assert "**41.70**" in lines[2] and "**50.00**" in lines[2] and "**50.00**" in lines[3]  # ties both marked
    assert "35.04" in lines[3] and "**35.04**" not in lines[3] and "layer=12" in lines[2]
    plain = comparison().to_markdown(mark_best=False, header=False)
    assert "**" not in plain and plain.startswith("| Name")


def test_constituency_columns_and_missing_values():
    c = Comparison([], "constituency", {"gold": "wsj_0001.mrg"})
    c.add("mart", FakeScore(BRACKETS), settings={"layer": 9})
    c.add("right-branching", {**BRACKETS, "f1_sentence": float("nan")}, kind="baseline")
    header = _table_lines(c.to_markdown())[0]
    for label in ("Sentence F1", "Corpus F1", "P", "R", "Sentences"):
        assert f" {label} " in header
    assert "UAS" not in header and "Words" not in header
    assert " - " in _table_lines(c.to_markdown())[3]
    row = json.loads(c.to_json())["rows"][1]
    assert row["f1_sentence"] is None and row["precision"] == 37.25 and row["kind"] == "baseline"
    assert set(json.loads(c.to_json())["rows"][0]) == {"name", "kind", "settings", *BRACKETS}


def test_json_round_trip_and_settings_in_csv(tmp_path):
    c = comparison()
    path = c.write_json(tmp_path / "first.json")
    again = Comparison.read_json(path)
    assert again == c
    rows = list(csv.DictReader(io.StringIO(c.to_csv())))
    assert list(rows[0])[:4] == ["name", "kind", "uas", "uuas"]
    assert rows[0]["settings.layer"] == "12" and rows[1]["settings.layer"] == ""
    for suffix in ("md", "json", "csv"):
        c.write(tmp_path / f"c.{suffix}")
    assert Comparison.read_json(tmp_path / "c.json") == c
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_atomic_write_replaces_and_keeps_mode(tmp_path):
    path = atomic_write(tmp_path / "x.txt", "one")
    path.chmod(0o600)
    atomic_write(path, b"two")
    assert path.read_text() == "two" and (path.stat().st_mode & 0o777) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["x.txt"]


def test_bad_input_is_a_report_error(tmp_path):
    with pytest.raises(ReportError, match="task"):
        Comparison([], "tagging")
    with pytest.raises(ReportError, match="kind"):
        ComparisonRow("x", "oracle", DEP)
    with pytest.raises(ReportError, match="clash"):
        ComparisonRow("x", "model", {"name": 1.0})
    with pytest.raises(ReportError, match=r"duplicate layer\(s\) \[2\]"):
        LayerSweep([(2, DEP), (2, DEP)])
    with pytest.raises(PmaskError, match=r"\.jpg"):
        plot_layer_sweep(LayerSweep([(1, DEP)]), tmp_path / "s.jpg")
    with pytest.raises(ReportError, match="cannot read"):
        Comparison.read_json(tmp_path / "missing.json")
    assert issubclass(ReportError, ValueError)


def test_layer_sweep_formats(tmp_path):
    sweep = LayerSweep([(k, FakeScore({"f1_sentence": 30.0 + k, "f1_corpus": math.nan})) for k in range(4)],
                       meta={"model": "tiny"})
    assert sweep.metric_keys == ("f1_sentence", "f1_corpus")  # inferred
    lines = _table_lines(sweep.to_markdown())
    assert len(lines) == 2 + 4 and len({len(line) for line in lines}) == 1 and "**33.00**" in lines[-1]
    data = json.loads(sweep.to_json())
    assert data["rows"][0] == {"layer": 0, "f1_sentence": 30.0, "f1_corpus": None}
    assert LayerSweep.from_dict(data).layers == [0, 1, 2, 3]
    rows = list(csv.DictReader(io.StringIO(sweep.to_csv())))
    assert [r["layer"] for r in rows] == ["0", "1", "2", "3"] and rows[0]["f1_sentence"] == "30.0"
    svg = plot_layer_sweep(sweep, tmp_path / "s.svg", baselines={"right-branching": 35.0, "none": None})
    text = svg.read_text()
    assert "<svg" in text and "right-branching (35.0)" in text and "layer" in text


def test_importing_reports_loads_neither_torch_nor_matplotlib():
    code = ("import sys, pmask.eval.comparison.tables, pmask.eval.figures.heatmap; "
            "print(sorted(m for m in ('torch', 'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("table", [comparison(), LayerSweep([(1, {"uas": 30.0}), (2, {"uas": 31.5})])],
                         ids=["comparison", "sweep"])
def test_both_tables_write_through_one_writer(table, tmp_path):
    """Comparison and LayerSweep share their JSON/CSV/Markdown writers (TableFile), suffix-chosen."""
    from pmask.eval.outputs.writers import TableFile

    assert isinstance(table, TableFile)
    for name in ("to_json", "write_json", "write_csv", "write"):
        assert getattr(type(table), name) is getattr(TableFile, name)
    assert json.loads(table.write(tmp_path / "t.json").read_text()) == table.to_dict()
    assert table.write(tmp_path / "t.csv").read_text() == table.to_csv()
    assert table.write(tmp_path / "t.md").read_text() == table.to_markdown()
    assert table.write_json(tmp_path / "u.json").read_text() == table.to_json()
    assert table.write_csv(tmp_path / "u.csv").read_text() == table.to_csv()
    with pytest.raises(ReportError, match="unsupported output format"):
        table.write(tmp_path / "t.txt")
