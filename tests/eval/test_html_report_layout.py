"""Issue 27 item 8: the report's labels are never clipped, the page never scrolls sideways (down to
800 px; wide diagrams and tables scroll inside their own box), and the summary states truthfully
how punctuation was treated (PTB trees lose it when the treebank is read)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from headless import Browser, find_or_install_chromium
from pmask.cli import main
from pmask.eval.html import ReportOptions, build_report, report_data

MINI_PTB = Path(__file__).resolve().parents[1] / "data" / "mini.mrg"
WIDE_PTB = """( (S (NP-SBJ (DT The) (JJ international) (NNS representatives) (, ,))
    (VP (VBD acknowledged) (NP (DT the) (JJ extraordinary) (NNS circumstances))
        (PP (IN during) (NP (NNP Wednesday) (POS 's) (NNS negotiations)))) (. .)))
"""

# Every text in the "Where it fails" charts and in any SVG lies inside its chart (or SVG) box.
CLIPPED_LABELS_JS = """(() => {
  const bad = [];
  const charts = Array.from(document.querySelectorAll('#failures .card'))
    .map(c => c.querySelector('h3').nextElementSibling);
  for (const box of charts.concat(Array.from(document.querySelectorAll('svg')))) {
    const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    for (let t = walker.nextNode(); t; t = walker.nextNode()) {
      if (!t.textContent.trim() || t.parentElement.closest('title')) continue;
      const outer = (t.parentElement.closest('svg') || box).getBoundingClientRect();
      const range = document.createRange();
      range.selectNodeContents(t);
      const r = range.getBoundingClientRect();
      if (!r.width) continue;   // not shown (a hidden sentence view)
      if (r.left < outer.left - 0.5 || r.right > outer.right + 0.5) {
        bad.push(t.textContent + ': ' + (r.left - outer.left).toFixed(1) + ' / ' + (outer.right - r.right).toFixed(1));
      }
    }
  }
  return bad;
})()"""

# The font a reader's browser picks may be wider than the one the script measured with (macOS's
# system-ui is wider than Helvetica, the "sans-serif" the labels were sized with): widen it.
WIDER_FONT_JS = """(() => {
  const sheet = document.styleSheets[0];
  sheet.insertRule('#failures * { font-size: 15px !important; letter-spacing: 1.5px !important; }',
                   sheet.cssRules.length);
  return document.body.offsetWidth;
})()"""


def _conllu(sent_id: str, words: list[str], heads: list[int]) -> str:
    lines = [f"# sent_id = {sent_id}", "# text = " + " ".join(words)]
    for k, (w, h) in enumerate(zip(words, heads), start=1):
        lines.append(f"{k}\t{w}\t{w}\tX\tX\t_\t{h}\t{'root' if h == 0 else 'nsubj:pass'}\t_\t_")
    return "\n".join(lines) + "\n\n"


def _bench(folder: Path) -> Path:
    """A bench directory of 3 treebanks × 12 layers (a wide treebank × layer table)."""
    treebanks = (("en_pud-ud-test", "English"), ("de_pud-ud-test", "German"), ("ja_pud-ud-test", "Japanese"))
    rows = [{"treebank": tb, "language": lang, "layer": layer, "decoder": "eisner", "root": "gold",
             "uas": 30.0 + layer + k, "uuas": 40.0, "sentences": 8, "words": 100}
            for k, (tb, lang) in enumerate(treebanks) for layer in range(1, 13)]
    baselines = [{"treebank": tb, "baseline": "right-chain", "root": "gold", "uas": 35.0, "words": 100}
                 for tb, _ in treebanks]
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps({"rows": rows, "baselines": baselines, "model": {"name": "tiny"},
                                                     "settings": {"metric": "dist"}}), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def dependency_report(tmp_path_factory) -> Path:
    """A 70-word sentence (arcs of every length bucket, a diagram far wider than the page), a short one,
    and a bench view."""
    d = tmp_path_factory.mktemp("layout-dep")
    words = [f"word{k}" for k in range(1, 71)]
    gold_heads = [0] + [1 if k % 3 else k - 1 for k in range(2, 71)]     # heads left, lengths 1 … 69
    short = ["a", "b", "c", "d", "e", "f", "g", "h"]
    gold = d / "gold.conllu"
    gold.write_text(_conllu("long", words, gold_heads) + _conllu("short", short, [8, 8, 8, 8, 8, 8, 8, 0]),
                    encoding="utf-8")
    pred = d / "pred.conllu"
    assert main(["parse", str(gold), "--decoder", "right-chain", "--root", "gold", "-q", "-o", str(pred)]) == 0
    return build_report(pred, gold, d / "dep.html", ReportOptions(bench=_bench(d / "bench")))


@pytest.fixture(scope="module")
def constituency_report(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("layout-ptb")
    gold = d / "wide.mrg"
    gold.write_text(WIDE_PTB, encoding="utf-8")
    pred = d / "pred.txt"
    assert main(["parse", str(gold), "--max-words", "12", "--decoder", "right-branching", "-q", "-o", str(pred)]) == 0
    return build_report(pred, gold, d / "ptb.html")


@pytest.fixture(scope="module")
def browser():
    binary, why = find_or_install_chromium()
    if binary is None:
        pytest.skip(f"no headless Chromium: {why}")
    with Browser(binary) as b:
        yield b


def _open(browser: Browser, path: Path, width: int):
    browser.width, browser.height = width, 900   # the viewport of the next page opened
    page = browser.open(path.resolve().as_uri())
    assert page.eval("document.documentElement.dataset.jsError || ''") == ""
    assert page.eval("window.innerWidth") == width
    return page


# ------------------------------------------------------------------ in the browser

@pytest.mark.parametrize("width", [1400, 800])
@pytest.mark.parametrize("which", ["dependency_report", "constituency_report"])
def test_no_sideways_scroll(browser, request, which, width):
    page = _open(browser, request.getfixturevalue(which), width)
    assert page.eval("document.documentElement.scrollWidth") <= width
    # the wide diagram is still all there, in its own scroll box
    assert page.eval("(() => { const s = document.querySelector('.sentence-view:not([hidden]) .scroll');"
                     "return s.scrollWidth >= s.clientWidth && getComputedStyle(s).overflowX; })()") == "auto"
    assert page.problems() == []


@pytest.mark.parametrize("width", [1400, 800])
def test_chart_labels_are_not_clipped(browser, dependency_report, width):
    page = _open(browser, dependency_report, width)
    labels = page.eval("Array.from(document.querySelectorAll('#by-arc-length *'))"
                       ".filter(e => !e.closest('details') && !e.children.length).map(e => e.textContent)")
    assert "6-10 · head left" in labels and ">10 · head left" in labels
    assert page.eval(CLIPPED_LABELS_JS) == []
    page.eval(WIDER_FONT_JS)
    assert page.eval(CLIPPED_LABELS_JS) == []
    assert page.eval("document.documentElement.scrollWidth") <= width


def test_constituency_chart_labels_are_not_clipped(browser, constituency_report):
    page = _open(browser, constituency_report, 1400)
    assert page.eval(CLIPPED_LABELS_JS) == []
    page.eval(WIDER_FONT_JS)
    assert page.eval(CLIPPED_LABELS_JS) == []


# ------------------------------------------------------------------ the summary's text

@pytest.mark.parametrize("punct", ["include", "exclude"])
def test_ptb_summary_says_punctuation_is_removed(tmp_path, punct):
    pred = tmp_path / "pred.txt"
    assert main(["parse", str(MINI_PTB), "--max-words", "10", "--decoder", "right-branching", "-q",
                 "-o", str(pred)]) == 0
    summary = report_data(pred, MINI_PTB, ReportOptions(punct=punct))["summary"]
    text = summary["settings"]["punct"]
    assert "include" not in text and "removed" in text and "reading the treebank" in text, text
    assert summary["corpus"]["max_words"] == 10


@pytest.mark.parametrize("punct, says", [("include", "scored"), ("exclude", "not scored")])
def test_dependency_summary_says_whether_punctuation_is_scored(tmp_path, punct, says):
    gold = tmp_path / "gold.conllu"
    gold.write_text(_conllu("s1", ["a", "b", "."], [0, 1, 1]), encoding="utf-8")
    summary = report_data(gold, gold, ReportOptions(punct=punct))["summary"]
    assert summary["settings"]["punct"].startswith(says + " ")
    assert summary["corpus"]["max_words"] is None


def test_span_chart_row_labels_are_not_clipped(browser, tiny_bert_dir, tmp_path):
    """A span chart's rows say "length k", which is wider than short words: the map makes room for it."""
    store, pred = tmp_path / "st", tmp_path / "pred.txt"
    assert main(["impact", str(MINI_PTB), "--model", str(tiny_bert_dir), "--probe", "distortion", "-q",
                 "-o", str(store)]) == 0
    assert main(["parse", str(store), "-q", "-o", str(pred)]) == 0
    page = _open(browser, build_report(pred, MINI_PTB, tmp_path / "span.html", ReportOptions(store=store)), 1400)
    # the first sentence (6 words, 26 px cells, a 12 px font): its map is drawn when the page opens
    room = page.eval("""(() => {
        const canvas = document.querySelector('canvas.impactmap');
        const left = parseFloat(canvas.style.width) - 6 * 26 - 8;
        const ctx = document.createElement('canvas').getContext('2d');
        ctx.font = "12px system-ui, sans-serif";
        return left - 4 - ctx.measureText("length 6").width; })()""")
    assert room >= 0, f"the row label 'length 6' sticks out {-room:.1f} px to the left of the map"
