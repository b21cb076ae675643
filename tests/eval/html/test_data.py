"""Issue 37: ``pmask report`` on documents of EDUs (a SciDTB folder as gold, a prediction with one EDU per
CoNLL-U row): each EDU is labelled by its index and first words in the arc diagram and the impact map, the
length breakdown counts EDUs, the arc-length one counts gold arcs in EDUs (hand-counted from the gold JSON)."""
from __future__ import annotations

import json
import re

import pytest

from pmask.cli import main

from headless import Browser, find_or_install_chromium

# A-1's EDUs, each with its index (none is over 24 characters, so none is cut)
A1 = ["1 We present a parser", "2 that reads discourse .", "3 It is fast ,", "4 and it is small ."]
# gold arcs of tests/data/scidtb by length |k - head| and the head's side (roots apart), counted by hand:
# A-1 2->1, 3->1, 4->3; A-2 1->2, 3->2; A-3 3->2, 4->1, 5->4; roots: A-1 1, A-2 2, A-3 1 and 2
ARCS = {("root", "root"): 4, ("1", "head left"): 5, ("1", "head right"): 1, ("2", "head left"): 1,
        ("3", "head left"): 1}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    from scidtb_counts import SCIDTB, WORDS

    from pmask.perturb.testing import make_tiny_bert

    d = tmp_path_factory.mktemp("docreport")
    model = make_tiny_bert(d / "m", WORDS, max_positions=64, seed=1)
    store, pred, out = d / "store", d / "pred.conllu", d / "report.html"
    assert main(["impact", str(SCIDTB), "--model", str(model), "--layers", "all", "-q", "-o", str(store)]) == 0
    assert main(["parse", str(store), "-q", "-o", str(pred)]) == 0
    assert main(["report", str(pred), "--gold", str(SCIDTB), "--store", str(store), "-q", "-o", str(out)]) == 0
    return out


def _data(path):
    return json.loads(re.search(r'type="application/json">(.*?)</script>', path.read_text(encoding="utf-8"),
                                re.S).group(1))


def test_edu_labels_and_breakdowns_in_edus(report):
    data = _data(report)
    first = data["sentences"][0]
    assert first["id"] == "A-1" and first["labels"] == A1 and first["words"] == [w.split(" ", 1)[1] for w in A1]
    tables = {b["id"]: b for b in data["breakdowns"]}
    assert tables["by-sentence-length"]["title"] == "UAS by document length (EDUs)"   # main: sentence length (words)
    rows = tables["by-arc-length"]["rows"]
    assert {(r["label"], r["direction"]): r["total"] for r in rows if r["total"]} == ARCS


def test_the_report_draws_the_shortened_labels(report):
    binary, why = find_or_install_chromium()
    if binary is None:
        pytest.skip(f"no headless Chromium: {why}")
    with Browser(binary) as browser:
        page = browser.open(report.resolve().as_uri())
        assert page.eval("document.documentElement.dataset.jsError || ''") == ""
        assert page.problems() == []
        words = page.eval("Array.from(document.querySelector('.sentence-view').querySelectorAll('text.word'))"
                          ".map(t => t.textContent)")
        assert words == A1
