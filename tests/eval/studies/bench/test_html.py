"""Issue 18 (friction): the report's "Layers and languages" chart has a legend (checked in headless
Chromium, as tests/eval/test_html.py checks the page)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pmask.eval.html import ReportOptions, build_report

from headless import Browser, find_or_install_chromium


@pytest.fixture(scope="module")
def browser():
    binary, why = find_or_install_chromium()
    if binary is None:
        pytest.skip(f"no headless Chromium: {why}")
    with Browser(binary) as b:
        yield b


def _report(tmp_path: Path) -> Path:
    treebanks = (("en_pud-ud-test", "English"), ("de_pud-ud-test", "German"), ("ja_pud-ud-test", "Japanese"))
    rows = [{"treebank": tb, "language": lang, "layer": layer, "decoder": "eisner", "root": "gold",
             "uas": 30.0 + layer + k, "uuas": 40.0, "sentences": 8, "words": 100}
            for k, (tb, lang) in enumerate(treebanks) for layer in (1, 2, 3)]
    baselines = [{"treebank": tb, "baseline": "right-chain", "root": "gold", "uas": 35.0, "words": 100}
                 for tb, _ in treebanks]
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "results.json").write_text(json.dumps({"rows": rows, "baselines": baselines, "model": {"name": "tiny"},
                                                    "settings": {"metric": "dist"}}), encoding="utf-8")
    gold = tmp_path / "gold.conllu"
    gold.write_text("# sent_id = s1\n1\ta\ta\tX\tX\t_\t0\troot\t_\t_\n2\tb\tb\tX\tX\t_\t1\tdep\t_\t_\n\n",
                    encoding="utf-8")
    return build_report(gold, gold, tmp_path / "r.html", ReportOptions(bench=bench))


def test_layers_chart_has_a_legend_in_the_lines_colours(browser, tmp_path):
    page = browser.open(_report(tmp_path).resolve().as_uri())
    assert page.eval("document.documentElement.dataset.jsError || ''") == ""
    items = page.eval("Array.from(document.querySelectorAll('#bench ul.legend li[data-treebank]'))"
                      ".map(function (li) { return [li.textContent, getComputedStyle(li.querySelector('.swatch'))"
                      ".borderTopColor]; })")
    assert [text for text, _ in items] == ["en_pud-ud-test (English)", "de_pud-ud-test (German)",
                                           "ja_pud-ud-test (Japanese)"]
    lines = page.eval("Array.from(document.querySelectorAll('#bench g.series'))"
                      ".map(function (g) { return getComputedStyle(g.querySelector('polyline')).stroke; })")
    assert [colour for _, colour in items] == lines and len(set(lines)) == 3
    assert "right-chain" in page.eval("document.querySelector('#bench ul.legend li.baseline-key').textContent")
    page.eval("document.querySelector('#bench ul.legend li[data-treebank=\"de_pud-ud-test\"]')"
              ".dispatchEvent(new MouseEvent('mouseenter'))")
    assert page.eval("document.querySelector('#bench svg.linechart').classList.contains('focus')") is True
    assert page.eval("document.querySelector('#bench g.series.hot').dataset.treebank") == "de_pud-ud-test"
    assert page.problems() == []
