"""Notebook display: what each result draws (``_repr_html_``, ``_repr_png_``), escaped and self-contained."""
from __future__ import annotations

import html
import re
from pathlib import Path

import numpy as np
import pytest

import pmask
from pmask.cli import main
from pmask.common import display
from pmask.common.display import ImpactMap
from pmask.common.errors import PmaskError
from pmask.corpora import Sentence, read_corpus
from pmask.eval.comparison.compare import baseline_scores, comparison, evaluate_files
from pmask.eval.comparison.tables import Comparison, ComparisonRow, LayerSweep
from pmask.eval.scores.dependency_score import DependencyScore
from pmask.eval.studies.sweep import SweepResult

DATA = Path(__file__).resolve().parents[1] / "data"
HOSTILE = ["<script>alert(1)</script>", "&amp;", '"quoted"', "it's", "שלום", "🙂👍🏽", "<!--", "日本語"]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def assert_static(markup: str, words: list[str]) -> None:
    """Every word appears escaped, none raw where escaping changes it; no script, no URL, no style sheet."""
    for w in words:
        assert html.escape(w) in markup, w
        if html.escape(w) != w:
            assert w not in markup.replace(html.escape(w), ""), w
    assert "<script" not in markup.lower() and "<style" not in markup.lower()
    assert not re.search(r"(?i)\b(?:https?|ftp):|src=[\"']?//|url\(", markup)
    assert all(src.startswith("data:") for src in re.findall(r'src="([^"]*)"', markup))


def hostile_parse(gold: bool = True):
    heads = [0] + [1] * (len(HOSTILE) - 1) if gold else None
    sent = Sentence(id="<b>s1</b>", words=list(HOSTILE), heads=heads,
                    deprels=["root"] + ["<dep>"] * (len(HOSTILE) - 1) if gold else None)
    return pmask.parse([sent], decoder="right-chain", root="gold" if gold else "free")[0]


def test_parsed_shows_its_arc_diagram_with_gold_below():
    p = hostile_parse()
    markup = p._repr_html_()
    assert_static(markup, HOSTILE + ["<b>s1</b>", "<dep>"])
    n = len(HOSTILE)
    assert markup.count("<title>predicted") == n and markup.count("<title>gold") == n
    correct = sum(int(a) == int(b) for a, b in zip(p.heads, p.sentence.heads))
    assert markup.count(" ✓</title>") == correct and markup.count(" ✗</title>") == n - correct
    assert markup.count('stroke-dasharray="5 3"') == n - correct          # wrong predicted arcs are dashed
    assert f"({correct}/{n} heads)" in markup and "gold, missed" in markup
    assert p._repr_png_() is None        # an arc diagram is SVG inside the HTML


def test_parsed_without_gold_shows_the_predicted_arcs_only():
    markup = hostile_parse(gold=False)._repr_html_()
    assert "<title>gold" not in markup and "gold, missed" not in markup and "no gold heads" in markup
    assert markup.count("<title>predicted") == len(HOSTILE)


def test_a_skipped_sentence_says_why():
    from pmask.pipeline.induce import Parsed

    markup = Parsed(Sentence(id="s9", words=["a", "<b>"]), skipped="too long for the model")._repr_html_()
    assert_static(markup, ["a", "<b>"])
    assert "no tree: too long for the model" in markup


def test_a_constituency_parse_shows_both_trees():
    sents = read_corpus(DATA / "mini.mrg")
    p = pmask.parse(sents[:1], decoder="right-branching")[0]
    markup = p._repr_html_()
    assert markup.count("<svg") == 2 and 'aria-label="predicted tree"' in markup and 'aria-label="gold tree"' in markup
    assert_static(markup, list(sents[0].words))


def test_impact_map_is_a_heatmap_with_the_words():
    n = len(HOSTILE)
    F = np.arange(n * n, dtype=float).reshape(n, n)
    F[1, 2] = np.nan
    m = ImpactMap(words=HOSTILE, F=F, gold_heads=[0] + [1] * (n - 1), pred_heads=[2, 0] + [1] * (n - 2),
                  title="<i>map</i>")
    markup = m._repr_html_()
    assert_static(markup, HOSTILE + ["<i>map</i>"])
    assert markup.count("<rect><title>") == 0 and markup.count("</title></rect>") == n * n   # one cell each
    assert f"2 {html.escape(HOSTILE[1])} → 1 {html.escape(HOSTILE[0])}: 1</title>" in markup  # F[0][1] = 1
    assert ": nan</title>" in markup
    assert markup.count("<circle") == n and 'stroke-dasharray="3 2"' in markup                  # dots; root row
    assert m._repr_png_().startswith(PNG_MAGIC)


def test_impact_map_errors_name_the_problem():
    with pytest.raises(PmaskError, match=r"shape \(2, 2\), expected \(3, 3\)"):
        ImpactMap(words=["a", "b", "c"], F=np.zeros((2, 2)))._repr_html_()


def test_parsed_impact_map_needs_impacts(tiny_bert_dir):
    with pytest.raises(PmaskError, match="no impact matrix"):
        hostile_parse().impact_map()
    sent = read_corpus(DATA / "mini.conllu")[1]
    p = pmask.parse([sent], model=str(tiny_bert_dir))[0]
    m = p.impact_map()
    assert m.words == sent.words and m.gold_heads == sent.heads and m.pred_heads == [int(h) for h in p.heads]
    assert_static(m._repr_html_(), sent.words)


def test_a_stored_sentence_shows_the_heatmap_of_its_last_layer():
    from pmask.perturb.store.reader import StoredImpact

    n = 3
    item = StoredImpact(index=0, id="s<1>", words=["a", "<b>", "c"], matrix=np.random.default_rng(0).random((2, n, n)),
                        cls_matrix=None, layers=(1, 3), input_ids=np.arange(5), word_index=np.array([-1, 0, 1, 2, -1]),
                        pieces=["[CLS]", "a", "<b>", "c", "[SEP]"])
    markup = item._repr_html_()
    assert_static(markup, ["a", "<b>", "c", "s<1>"])
    assert "layer 3" in markup and item.impact_map(1).title.endswith("layer 1")
    assert item._repr_png_().startswith(PNG_MAGIC)


def test_comparison_shows_its_table_with_the_best_in_bold():
    golds = read_corpus(DATA / "mini.conllu")
    score = DependencyScore()
    for g in golds:
        score.add(g.heads, g.heads, sent_id=g.id)
    table = comparison("dependency", score, baseline_scores("dependency", golds, root="gold"), pred_name="<gold> & co",
                       meta={"gold": "mini.conllu"}, settings={"layer": 7})
    markup = table._repr_html_()
    assert_static(markup, ["<gold> & co", "right-chain", "left-chain", "layer=7", "mini.conllu"])
    assert re.search(r"font-weight:700[^>]*>100\.00<", markup)
    assert table._repr_png_() is None


def test_sweeps_show_their_table_and_plot():
    sweep = LayerSweep([(1, {"uas": 30.0, "uuas": 40.0}), (2, {"uas": 41.7, "uuas": 39.0})], ("uas", "uuas"),
                       meta={"model": "<m>"})
    markup = sweep._repr_html_()
    assert_static(markup, ["<m>", "UAS", "UUAS"])
    assert re.search(r"font-weight:700[^>]*>41\.70<", markup) and 'src="data:image/png;base64,' in markup
    result = SweepResult(sweep, "dependency", baselines={"right-chain": 35.0}, title="tiny · eisner")
    markup = result._repr_html_()
    assert_static(markup, ["right-chain", "tiny · eisner"])
    assert result._repr_png_().startswith(PNG_MAGIC) and sweep._repr_png_().startswith(PNG_MAGIC)


def test_an_evaluation_shows_its_comparison(tmp_path):
    pred = tmp_path / "pred.conllu"
    assert main(["parse", str(DATA / "mini.conllu"), "--decoder", "left-chain", "-q", "-o", str(pred)]) == 0
    markup = evaluate_files(pred, DATA / "mini.conllu", baselines=True)._repr_html_()
    assert_static(markup, ["left-chain", "right-chain", "random-projective"])


def test_bench_results_show_their_tables(tmp_path, tiny_bert_dir):
    from pmask.eval.studies.bench.run import BenchSettings, run_bench

    result = run_bench([DATA / "mini.conllu"], tmp_path / "bench", BenchSettings(model=str(tiny_bert_dir),
                                                                                layers=[1, 2], decoders=["eisner"]),
                       progress=False, write=False)
    markup = result._repr_html_()
    assert_static(markup, ["mini", "eisner", "L1", "L2", "right-chain", "Best layer per treebank"])


def test_without_a_connected_renderer_nothing_is_drawn(monkeypatch):
    monkeypatch.setattr(display, "_renderers", {})
    assert hostile_parse()._repr_html_() is None
    with pytest.raises(ValueError, match="unknown display format"):
        display.connect("svg", lambda obj: "")


def test_comparison_rows_draw_nothing_special():
    row = ComparisonRow("x", "model", {"uas": 1.0})
    assert not hasattr(row, "_repr_html_")
    assert Comparison([row], "dependency")._repr_html_().count("<tr") == 2
