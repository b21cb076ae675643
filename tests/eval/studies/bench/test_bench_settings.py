"""Issue 39 item 10: a finished bench is read back (``BenchResult.read``): its settings, rows and tables as the run
gave them, and its data frame holds the rows of ``results.csv`` (read here with ``csv``)."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from pmask.cli import main
from pmask.common.errors import PmaskError
from pmask.eval.studies.bench.run import BenchResult

DATA = Path(__file__).resolve().parents[3] / "data"


def test_a_finished_bench_is_read_back(tiny_bert_dir, tmp_path):
    pytest.importorskip("pandas")
    out = tmp_path / "out"
    assert main(["bench", str(DATA / "mini.conllu"), "--model", str(tiny_bert_dir), "--layers", "1,2",
                 "--probes", "pair,attention", "--seed", "3", "--punct", "exclude", "-o", str(out)]) == 0
    written = json.loads((out / "results.json").read_text())
    result = BenchResult.read(out)
    assert {**result.to_dict(), "best": written["best"]} == written
    assert result.settings.seed == 3 and result.settings.punct == "exclude"
    assert list(result.settings.probes) == ["pair", "attention"]
    frame = result.to_pandas()
    with open(out / "results.csv", newline="") as f:
        model_rows = [r for r in csv.DictReader(f) if r["kind"] == "model"]
    assert len(frame) == len(model_rows) == 2 * 2 * 2   # probes x layers x decoders (eisner, cle)
    assert sorted(round(float(r["uas"]), 2) for r in model_rows) == sorted(round(x, 2) for x in frame["uas"])
    assert result.to_markdown().splitlines()[-1] in (out / "results.md").read_text()


def test_reading_a_folder_without_a_bench_says_so(tmp_path):
    with pytest.raises(PmaskError, match="no results.json"):
        BenchResult.read(tmp_path)
