"""Comparison reports and layer sweeps: Markdown, JSON (plain percentage keys), CSV and the plot."""
from __future__ import annotations

import csv
import io
import json

from PIL import Image

from pmask.eval.report import Comparison, ComparisonRow, LayerSweep, plot_layer_sweep

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
