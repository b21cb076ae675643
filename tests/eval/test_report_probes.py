"""The HTML report labels the probe: the summary, the impact maps of a store that keeps every head,
and the bench page, which chooses one probe at a time."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pmask.cli import main
from pmask.eval.html import ReportOptions, build_report
from pmask.eval.html.impacts import dequantise, impacts_for
from test_html_report import PUD, _clean, _conllu, _open, browser  # noqa: F401  (fixture)


@pytest.fixture(scope="module")
def attention_report(tmp_path_factory, tiny_bert_dir):
    if not PUD.is_file():
        pytest.skip("shared UD English PUD data not available")
    d = tmp_path_factory.mktemp("att")
    store, pred, out = d / "store", d / "pred.conllu", d / "report.html"
    assert main(["impact", str(PUD), "--model", str(tiny_bert_dir), "--probe", "attention", "--limit", "5",
                 "--layers", "all", "-q", "-o", str(store)]) == 0
    assert main(["parse", str(store), "--head", "1", "-q", "-o", str(pred)]) == 0
    assert main(["report", str(pred), "--gold", str(PUD), "--store", str(store), "-q", "-o", str(out)]) == 0
    return store, pred, out


def test_impact_maps_of_a_store_of_every_head_show_the_heads_mean(attention_report):
    from pmask.perturb.store import ImpactStore

    store, pred, _ = attention_report
    held = ImpactStore.open(store)
    sentences = [{"id": item.id, "words": item.words} for item in held]
    data = impacts_for(store, sentences)
    assert data["label"] == "attention (head mean)" and data["metric"] == "weight"
    item = next(iter(held))
    got = dequantise(data["items"]["0"]["data"], data["items"]["0"]["lo"], data["items"]["0"]["step"], len(item))
    want = item.matrix.mean(axis=1)
    step = max(data["items"]["0"]["step"])
    np.testing.assert_allclose(got, want, atol=step)


def test_the_report_names_the_probe(browser, attention_report):  # noqa: F811
    _, _, out = attention_report
    page = _open(browser, out)
    _clean(page)
    text = page.eval("document.getElementById('summary').textContent")
    assert "attention (head 1)" in text


def test_the_bench_view_chooses_a_probe(browser, tmp_path):  # noqa: F811
    rows = [{"treebank": "en", "language": "English", "probe": probe, "layer": layer, "decoder": "eisner",
             "root": "gold", "uas": 30.0 + layer + (10 if probe == "attention" else 0), "uuas": 40.0, "sentences": 8,
             "words": 100, **({"head": "mean"} if probe == "attention" else {})}
            for probe in ("pair", "attention") for layer in (1, 2, 3)]
    baselines = [{"treebank": "en", "baseline": "right-chain", "root": "gold", "uas": 35.0, "words": 100}]
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "results.json").write_text(json.dumps({"rows": rows, "baselines": baselines, "model": {"name": "tiny"},
                                                    "settings": {}}), encoding="utf-8")
    gold = tmp_path / "gold.conllu"
    gold.write_text(_conllu("s1", ["a", "b"], [0, 1]), encoding="utf-8")
    page = _open(browser, build_report(gold, gold, tmp_path / "r.html", ReportOptions(bench=bench)))
    _clean(page)
    options = page.eval("Array.from(document.querySelectorAll('#bench select')[0].options).map(o => o.value)")
    assert options == ["pair", "attention (head mean)"]
    assert page.eval("document.querySelectorAll('#bench circle.point').length") == 3   # one probe at a time
    scores = page.eval("Array.from(document.querySelectorAll('#bench circle.point')).map(c => c.dataset.score)")
    assert scores == ["31", "32", "33"]
    page.eval("const s = document.querySelectorAll('#bench select')[0]; s.value = 'attention (head mean)';"
              "s.dispatchEvent(new Event('change'))")
    scores = page.eval("Array.from(document.querySelectorAll('#bench circle.point')).map(c => c.dataset.score)")
    assert scores == ["41", "42", "43"]
    assert Path(tmp_path / "r.html").is_file()
