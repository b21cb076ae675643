"""``run_bench``: one progress bar over every treebank, the decoders it does not run named, its margin
over the best baseline, and several impact metrics in one bench (``--metrics``)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from pmask.cli import main
from pmask.common.errors import PmaskError, SettingError
from pmask.eval.studies.bench.probe_stores import store_dir
from pmask.eval.studies.bench.results import best_layers, to_markdown
from pmask.eval.studies.bench.run import BenchSettings, decoders_not_run, run_bench
from pmask.eval.studies.bench.treebanks import find_treebanks
from pmask.perturb.engine.impact_settings import ImpactSettings
from pmask.perturb.fill.model_spec import ModelSpec
from pmask.perturb.store import read_manifest

DATA = Path(__file__).resolve().parents[3] / "data"


def test_bench_draws_one_bar_over_all_treebanks(tiny_bert_dir, tmp_path, capsys, monkeypatch):
    from pmask.common import progress

    monkeypatch.setattr(progress, "watched", lambda stream=None: True)   # as on a terminal
    inputs = []
    for name in ("a", "b"):
        inputs.append(tmp_path / f"{name}.conllu")
        shutil.copy(DATA / "mini.conllu", inputs[-1])
    assert main(["bench", *map(str, inputs), "--model", str(tiny_bert_dir), "--layers", "1",
                 "--decoders", "eisner", "-o", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    overall = [line for line in err.replace("\r", "\n").splitlines() if line.startswith("treebanks")]
    assert overall, err
    final = overall[-1]
    assert "10/10" in final and "sentence" in final and "<" in final   # counted in sentences, time left shown
    assert "2/2: b" in final


# --------------------------------------- bench names the decoders it does not run; its margin is over the best baseline

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


# ----------------------------------------------------------------- bench --metrics: several impact metrics in one bench

TEXT = """# sent_id = a1
1\tThe\tthe\tDET\t_\t_\t2\tdet\t_\t_
2\tnew\tnew\tADJ\t_\t_\t3\tamod\t_\t_
3\tbank\tbank\tNOUN\t_\t_\t0\troot\t_\t_
4\topened\topen\tVERB\t_\t_\t3\tacl\t_\t_
5\t.\t.\tPUNCT\t_\t_\t3\tpunct\t_\t_

# sent_id = a2
1\tShe\tshe\tPRON\t_\t_\t2\tnsubj\t_\t_
2\twalked\twalk\tVERB\t_\t_\t0\troot\t_\t_
3\thome\thome\tADV\t_\t_\t2\tadvmod\t_\t_
4\tslowly\tslowly\tADV\t_\t_\t2\tadvmod\t_\t_
5\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\t_

# sent_id = a3
1\tunbelievably\tunbelievably\tADV\t_\t_\t2\tadvmod\t_\t_
2\tlong\tlong\tADJ\t_\t_\t3\tamod\t_\t_
3\twords\tword\tNOUN\t_\t_\t0\troot\t_\t_
4\tsplit\tsplit\tVERB\t_\t_\t3\tacl\t_\t_

"""


METRICS = ["prob", "dist", "cpmi"]


TB = "gold"


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    from pmask.perturb.testing import make_tiny_bert

    # "unbelievably" and "words" are left out of the vocabulary: split into pieces (cpmi's chain rule)
    words = ["the", "new", "bank", "opened", ".", "she", "walked", "home", "slowly", "long", "split",
             "un", "##bel", "##iev", "##ably", "word", "##s"]
    return make_tiny_bert(tmp_path_factory.mktemp("tiny_metrics"), words, layers=2)


@pytest.fixture(scope="module")
def gold(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("gold") / f"{TB}.conllu"
    path.write_text(TEXT, encoding="utf-8")
    return path


class Loader:
    def __init__(self, model_dir):
        self.model_dir, self.calls = model_dir, 0

    def __call__(self):
        from pmask.perturb.models.load import load_model

        self.calls += 1
        return load_model(str(self.model_dir), device="cpu")


def _settings(model_dir, **kw) -> BenchSettings:
    return BenchSettings(model=str(model_dir), decoders=["eisner"], layers=[1, 2], **kw)


def _by_metric(rows) -> dict[str, list[tuple]]:
    out: dict[str, list[tuple]] = {}
    for r in rows:
        out.setdefault(r["metric"], []).append((r["probe"], r["layer"], r["decoder"], r["uas"], r["uuas"]))
    return out


@pytest.fixture(scope="module")
def bench(model_dir, gold, tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "out"
    loader = Loader(model_dir)
    result = run_bench([gold], out, _settings(model_dir, probes=["pair"], metrics=METRICS),
                       model_loader=loader, progress=False)
    assert loader.calls == 1
    return out, result


@pytest.fixture(scope="module")
def singles(model_dir, gold, tmp_path_factory):
    """The same treebank benched once per metric with --metric (the one-metric case)."""
    out = {}
    for metric in METRICS:
        folder = tmp_path_factory.mktemp(f"single_{metric}") / "out"
        settings = BenchSettings(model=ModelSpec(str(model_dir), **_impact(metric)), decoders=["eisner"],
                                 layers=[1, 2], probes=["pair"])
        out[metric] = (folder, run_bench([gold], folder, settings, model_loader=Loader(model_dir), progress=False))
    return out


def _impact(metric: str) -> dict:
    return {"impact": ImpactSettings(metric, None, None, None, None)}   # unset: the CLI's --metric M alone


def test_one_store_per_metric_each_holding_its_own_metric(bench):
    out, _ = bench
    for metric in METRICS:
        impact = read_manifest(store_dir(out, TB, "pair", metric))
        assert impact["metric"] == metric
        assert impact["subword"] == ("sum" if metric == "cpmi" else "avg")   # each metric's own default
    assert store_dir(out, TB, "pair", "cpmi") == out / "stores" / f"{TB}.cpmi"
    assert store_dir(out, TB, "single", "dist").name == f"{TB}.single.dist"
    assert not (out / "stores" / TB).exists()   # no store without a metric in its name


def test_rows_name_the_metric_and_equal_a_one_metric_bench(bench, singles):
    _, result = bench
    rows = _by_metric(result.rows)
    assert sorted(rows) == sorted(METRICS) and all(len(v) == 2 for v in rows.values())
    for metric in METRICS:   # each metric's rows are those of a bench of that metric alone
        assert rows[metric] == _by_metric(singles[metric][1].rows)[metric]
    assert rows["prob"] != rows["dist"] or rows["dist"] != rows["cpmi"]   # the stores differ


def test_results_files_name_the_metric(bench):
    out, _ = bench
    md = (out / "results.md").read_text(encoding="utf-8")
    assert "probes pair (prob), pair (dist), pair (cpmi);" in md
    for metric in METRICS:
        assert f"| {TB} | {TB} | pair {metric} | eisner |" in md   # best table
        assert f"| {TB} | pair {metric} | eisner |" in md            # score by layer
        assert (out / f"heatmap-pair-{metric}-eisner.png").is_file()
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert data["settings"]["metrics"] == {"pair": METRICS} and data["settings"]["metric"] is None
    assert {b["impact_metric"] for b in data["best"]} == set(METRICS)
    csv_rows = (out / "results.csv").read_text(encoding="utf-8").splitlines()
    assert csv_rows[0].endswith(",metric") and {line.rsplit(",", 1)[1] for line in csv_rows[1:7]} == set(METRICS)


def test_a_rerun_computes_nothing_and_metric_is_part_of_the_row_key(bench, model_dir, gold):
    out, result = bench
    loader = Loader(model_dir)
    again = run_bench([gold], out, _settings(model_dir, probes=["pair"], metrics=METRICS), model_loader=loader,
                      progress=False)
    assert loader.calls == 0 and again.timing["computed"] == 0 and again.rows == result.rows
    narrower = _settings(model_dir, probes=["pair"], metrics=["prob", "dist"])
    with pytest.raises(SettingError, match=r"metrics cpmi left out; rerun with rescore"):
        run_bench([gold], out, narrower, model_loader=loader, progress=False)
    rescored = run_bench([gold], out, narrower, model_loader=loader, progress=False, rescore=True)
    assert {r["metric"] for r in rescored.rows} == {"prob", "dist"}
    wider = run_bench([gold], out, _settings(model_dir, probes=["pair"], metrics=METRICS), model_loader=loader,
                      progress=False)   # cpmi back: an extension, its store reused
    assert loader.calls == 0 and _by_metric(wider.rows) == _by_metric(result.rows)


def test_a_one_metric_study_extends_to_several(model_dir, gold, tmp_path, singles):
    out = tmp_path / "out"
    first = BenchSettings(model=ModelSpec(str(model_dir), **_impact("dist")), decoders=["eisner"], layers=[1, 2])
    run_bench([gold], out, first, model_loader=Loader(model_dir), progress=False)
    assert read_manifest(out / "stores" / TB)["metric"] == "dist"   # --metric: the folder of old
    loader = Loader(model_dir)
    wider = run_bench([gold], out, _settings(model_dir, metrics=["prob", "dist"]), model_loader=loader,
                      progress=False)
    assert loader.calls == 1 and _by_metric(wider.rows)["dist"] == _by_metric(singles["dist"][1].rows)["dist"]


def test_metrics_a_probe_does_not_take_are_refused_before_model_work(model_dir, gold, tmp_path):
    loader = Loader(model_dir)
    cases = [({"probes": ["pair", "attention"], "metrics": ["prob", "dist"]},
              r"probe attention takes metric weight, not prob"),
             ({"probes": ["single"], "metrics": ["dist", "cpmi"]}, r"probe single takes metric .*, not cpmi"),
             ({"probes": ["pair"], "metrics": ["prob", "cpmi"], "model": "subword-avg"},
              r"cpmi takes subword sum only, not avg")]
    for kw, message in cases:
        avg = ModelSpec(str(model_dir), impact=ImpactSettings(None, "avg", None, None, None))
        model = avg if kw.pop("model", None) else None
        with pytest.raises(SettingError, match=message):
            settings = BenchSettings(model=model or str(model_dir), decoders=["eisner"], layers=[1], **kw)
            run_bench([gold], tmp_path / "out", settings, model_loader=loader, progress=False)
    with pytest.raises(SettingError, match=r"metric and metrics both given"):
        BenchSettings(model=ModelSpec(str(model_dir), **_impact("dist")), metrics=["prob", "dist"])
    assert loader.calls == 0 and not (tmp_path / "out").exists()


def test_one_metric_in_metrics_is_the_metric_case(model_dir):
    one = BenchSettings(model=str(model_dir), metrics=["cpmi"])
    assert one.metrics is None and one.runs == [("pair", "cpmi")]
    assert one.to_dict() == BenchSettings(model=ModelSpec(str(model_dir), **_impact("cpmi"))).to_dict()


def test_cli_metrics_and_the_stores_bar(model_dir, gold, tmp_path, capsys, monkeypatch):
    import pmask.common.progress as progress

    monkeypatch.setattr(progress, "watched", lambda stream=None: True)   # bars as on a terminal
    code = main(["bench", str(gold), "--model", str(model_dir), "--probes", "pair", "--metrics", "prob,dist,cpmi",
                 "--layers", "1", "--decoders", "eisner", "-o", str(tmp_path / "b")])
    out, err = capsys.readouterr()
    assert code == 0 and "| pair cpmi | eisner |" in out
    assert "treebanks: 100%" in err and "3/3" in err   # the overall bar over the (probe, metric) stores
    code = main(["bench", str(gold), "--model", str(model_dir), "--probes", "pair,attention", "--metrics", "prob,dist",
                 "-o", str(tmp_path / "c"), "-q"])
    out, err = capsys.readouterr()
    assert code == 1 and err.count("\n") == 1 and err.startswith("pmask: error: --probe attention takes")
    assert not (tmp_path / "c").exists()


def test_the_report_shows_each_metric_as_a_probe_of_its_own(bench):
    from pmask.eval.studies.bench.html import read_bench

    out, _ = bench
    rows = read_bench(out)["rows"]
    assert {(r["probe"], r["metric"]) for r in rows} == {(f"pair {m}", m) for m in METRICS}
