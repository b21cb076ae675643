"""Issue 18, defect 7: bench names decoders it does not run, and its margin is over the best baseline."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from pmask.common.errors import PmaskError
from pmask.eval.studies.bench.results import best_layers, to_markdown
from pmask.eval.studies.bench.run import BenchSettings, decoders_not_run, run_bench
from pmask.eval.studies.bench.treebanks import find_treebanks

DATA = Path(__file__).resolve().parents[1] / "data"


def _head_final_result() -> SimpleNamespace:
    """A treebank where left-chain beats right-chain by far (as on Japanese)."""
    rows = [{"treebank": "ja", "language": "Japanese", "layer": k, "decoder": "eisner", "root": "gold",
             "uas": uas} for k, uas in ((1, 30.0), (2, 41.21))]
    baselines = [{"treebank": "ja", "baseline": name, "root": "gold", "uas": uas}
                 for name, uas in (("right-chain", 35.0), ("left-chain", 56.0), ("random-projective", 20.0))]
    settings = BenchSettings(model="m", root="gold", punct="include", limit=None)
    return SimpleNamespace(rows=rows, baselines=baselines, settings=settings, model={"name": "m"},
                           treebanks=[{"treebank": "ja", "language": "Japanese", "task": "dependency"}],
                           timing={"total_seconds": 1.0})


def test_the_margin_is_over_the_best_baseline_and_names_it():
    [best] = best_layers(_head_final_result())
    assert best["layer"] == 2 and best["baseline"] == "left-chain" and best["baseline_score"] == 56.0
    assert best["margin"] == pytest.approx(41.21 - 56.0)
    assert best["reference_baseline"] == "right-chain" and best["reference_margin"] == pytest.approx(6.21)
    md = to_markdown(_head_final_result())
    row = next(line for line in md.splitlines() if line.startswith("| ja | Japanese | pair | eisner"))
    assert "| left-chain | 56.00 | -14.79 | 6.21 |" in row


def test_a_decoder_that_fits_no_treebank_is_refused_before_any_work(tmp_path):
    def refuse():
        raise AssertionError("the model was loaded")

    with pytest.raises(PmaskError, match=r"decoders mart: .*constituency trees.*dependency treebank"):
        run_bench([DATA / "mini.conllu"], tmp_path / "out", BenchSettings(model="x", decoders=["eisner", "mart"]),
                  model_loader=refuse, progress=False)
    assert not (tmp_path / "out").exists()


def test_mixed_treebanks_name_the_decoders_not_run(tmp_path, tiny_bert_dir):
    settings = BenchSettings(model=str(tiny_bert_dir), decoders=["eisner", "mart"], layers=[-1], limit=2)
    treebanks = find_treebanks([DATA / "mini.conllu", DATA / "mini.mrg"], limit=2)
    assert decoders_not_run(treebanks, settings) == {treebanks[0].name: ["mart"], treebanks[1].name: ["eisner"]}
    out = tmp_path / "out"
    run_bench([DATA / "mini.conllu", DATA / "mini.mrg"], out, settings, progress=False)
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert [t["decoders_not_run"] for t in data["treebanks"]] == [["mart"], ["eisner"]]
    assert {(b["treebank"], b["decoder"]) for b in data["best"]} == {(treebanks[0].name, "eisner"),
                                                                    (treebanks[1].name, "mart")}
    assert all(b["baseline"] and b["margin"] is not None for b in data["best"])
    assert "Decoders not run" in (out / "results.md").read_text(encoding="utf-8")


def test_layer_0_is_refused_by_the_library_too(tmp_path):
    with pytest.raises(PmaskError, match="layer 0"):
        run_bench([DATA / "mini.conllu"], tmp_path / "out", BenchSettings(model="x", layers=[0, 1]), progress=False)
