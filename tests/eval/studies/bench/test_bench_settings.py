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


# ------------------------------------------------------------------ documents of EDUs (issue 37)

def test_bench_of_a_scidtb_folder_counted_against_the_gold_json(tmp_path, capsys):
    """A SciDTB folder is one treebank (named after the folder, language English (SciDTB)); each row equals the
    trees ``parse`` decodes from the bench's own store at that layer, scored here against the gold parents; its
    data frame holds them."""
    pytest.importorskip("pandas")
    from scidtb_counts import SCIDTB, WORDS, count, parents

    from pmask.perturb.testing import make_tiny_bert

    model = make_tiny_bert(tmp_path / "m", WORDS, max_positions=64, seed=1)
    out = tmp_path / "out"
    assert main(["bench", str(SCIDTB), "--model", str(model), "-q", "-o", str(out)]) == 0
    capsys.readouterr()
    written = json.loads((out / "results.json").read_text())
    assert [(t["treebank"], t["language"], t["sentences"], t["words"]) for t in written["treebanks"]] == \
           [("scidtb", "English (SciDTB)", 3, 12)]
    gold = parents(SCIDTB)
    rows = written["rows"]
    assert sorted((r["layer"], r["decoder"]) for r in rows) == [(k, d) for k in (1, 2, 3) for d in ("cle", "eisner")]
    for row in rows:
        pred = tmp_path / f"{row['decoder']}{row['layer']}"
        assert main(["parse", str(out / "stores" / "scidtb"), "--layer", str(row["layer"]), "--decoder",
                     row["decoder"], "-q", "-o", str(pred)]) == 0
        right, undirected, _ = count(parents(pred), gold)
        assert row["uas"] == pytest.approx(100 * right / 12) and row["uuas"] == pytest.approx(100 * undirected / 12)
    baselines = {b["baseline"]: b["uas"] for b in written["baselines"]}
    assert baselines["right-chain"] == pytest.approx(100 * 4 / 12)   # hand-counted (see test_sweep's CHAINS)
    assert baselines["left-chain"] == pytest.approx(100 * 8 / 12)
    frame = BenchResult.read(out).to_pandas()
    assert sorted(frame["uas"]) == pytest.approx(sorted(r["uas"] for r in rows))
    assert set(frame["language"]) == {"English (SciDTB)"}


def test_bench_of_documents_takes_their_metric_over_the_models_recorded_one(tmp_path, capsys):
    """pmask-tiny-en records metric prob, which cannot pool an EDU's pieces: bench on SciDTB failed on main
    ("documents of EDUs take metric dist or cos …, not prob"); now its store and rows are dist's."""
    from scidtb_counts import SCIDTB

    out = tmp_path / "out"
    assert main(["bench", str(SCIDTB), "--model", "pmask-tiny-en", "--layers", "2", "--decoders", "eisner", "-q",
                 "-o", str(out)]) == 0, capsys.readouterr().err
    written = json.loads((out / "results.json").read_text())
    assert {r["metric"] for r in written["rows"]} == {"dist"}
    assert json.loads((out / "stores" / "scidtb" / "manifest.json").read_text())["metric"] == "dist"
