"""Issue 39 item 1: a bench scores a probe only where some benched decoder reads what it gives (distortion's span
charts: cky, on constituency treebanks), skips it elsewhere with one line, and refuses one that fits no treebank
before any model work. Expectations are literals (the README's rule: cky alone reads span charts)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pmask.cli import main
from pmask.common.errors import SettingError
from pmask.eval.studies.bench.run import BenchSettings, run_bench

DATA = Path(__file__).resolve().parents[3] / "data"


def _bench(tmp_path, tiny, *args):
    out = tmp_path / "out"
    assert main(["bench", *map(str, args), "--model", str(tiny), "--layers", "1,2", "-o", str(out)]) == 0
    return out, json.loads((out / "results.json").read_text())


# ------------------------------------------- item 1: a span probe on a dependency treebank is skipped, never decoded

def test_a_span_probe_is_scored_only_where_it_fits(tiny_bert_dir, tmp_path, capsys):
    shutil.copy(DATA / "mini.conllu", tmp_path / "ud.conllu")
    shutil.copy(DATA / "mini.mrg", tmp_path / "ptb.mrg")
    out, data = _bench(tmp_path, tiny_bert_dir, tmp_path / "ud.conllu", tmp_path / "ptb.mrg",
                       "--probes", "pair,distortion")
    # cky alone reads span charts, and it makes constituency trees: nothing scores distortion on a CoNLL-U file
    assert sorted((r["treebank"], r["probe"], r["decoder"], r["layer"]) for r in data["rows"]) == sorted(
        (tb, probe, decoder, layer) for tb, probe, decoder in (("ud", "pair", "eisner"), ("ud", "pair", "cle"),
                                                              ("ptb", "pair", "mart"), ("ptb", "distortion", "cky"))
        for layer in (1, 2))
    assert (out / "stores" / "ptb.distortion").is_dir()
    assert not (out / "stores" / "ud.distortion").exists()   # its store is never computed
    assert [t.get("probes_not_run") for t in data["treebanks"]] == [["distortion"], None]
    lines = [line for line in capsys.readouterr().err.splitlines() if "distortion" in line and "ud" in line]
    assert len(lines) == 1 and "not scored on ud" in lines[0] and "span charts" in lines[0], lines
    assert sorted(p.name for p in out.glob("heatmap-*")) == ["heatmap-cle.png", "heatmap-distortion-cky.png",
                                                             "heatmap-eisner.png", "heatmap-mart.png"]
    assert "distortion" in (out / "results.md").read_text().split("Probes not run")[1]


def test_a_probe_that_fits_no_treebank_is_refused_before_any_work(tmp_path):
    def refuse():
        raise AssertionError("the model was loaded")

    for decoders in (None, ["eisner"]):   # the defaults of a dependency treebank, or eisner named
        with pytest.raises(SettingError, match=r"probe distortion gives span charts.*dependency treebank"):
            run_bench([DATA / "mini.conllu"], tmp_path / "out",
                      BenchSettings(model="x", probes=["pair", "distortion"], decoders=decoders),
                      model_loader=refuse, progress=False)
    with pytest.raises(SettingError, match=r"probe distortion gives span charts"):
        run_bench([DATA / "mini.conllu"], tmp_path / "out", BenchSettings(model="x", probes=["distortion"]),
                  model_loader=refuse, progress=False)
    assert not (tmp_path / "out").exists()


def test_hoover_uuas_on_constituency_treebanks_alone_is_refused_before_any_work(tmp_path):
    def refuse():
        raise AssertionError("the model was loaded")

    with pytest.raises(SettingError, match=r"hoover_uuas scores dependency trees.*constituency treebank"):
        run_bench([DATA / "mini.mrg"], tmp_path / "out", BenchSettings(model="x", scores=("hoover_uuas",)),
                  model_loader=refuse, progress=False)
    assert not (tmp_path / "out").exists()


# ------------------------------------------- issue 47 item 2: --faithful on documents without --decoders

def test_faithful_on_documents_benches_the_decoders_of_wu_et_als_discourse_pipeline(tmp_path, capsys):
    """Under ``--faithful`` on documents of EDUs the pair probe's pipeline decodes with the decoders that have a
    discourse mode (eisner, cle), not refused for a decoder nobody named (it said "... not mst-projective")."""
    out = tmp_path / "out"
    code = main(["bench", str(DATA / "scidtb"), "--faithful", "--model", "pmask-tiny-en", "--layers", "2",
                 "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 0 and "mst-projective" not in err, err
    rows = json.loads((out / "results.json").read_text())["rows"]
    assert sorted({r["decoder"] for r in rows}) == ["cle", "eisner"] and all(r["faithful"] for r in rows)
