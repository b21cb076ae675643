"""Issue 18 (friction): ``heatmap --pred`` draws predicted arcs from the command line, a gold CoNLL-U
source draws its own gold arcs, and a prediction of another run is refused."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from pmask.cli import main

from test_cli import SMALL


@pytest.fixture(scope="module")
def made(tmp_path_factory, tiny_bert_dir):
    base = tmp_path_factory.mktemp("heatmap_pred")
    corpus = base / "small.conllu"
    corpus.write_text(SMALL, encoding="utf-8")
    store, pred = base / "store", base / "pred.conllu"
    assert main(["impact", str(corpus), "--model", str(tiny_bert_dir), "--layers", "2,3", "-q",
                 "-o", str(store)]) == 0
    assert main(["parse", str(store), "-q", "-o", str(pred)]) == 0
    return corpus, store, pred


def _cells(page: Path, kind: str) -> int:
    return len(re.findall(rf'<td data-j="\d+" class="[^"]*\b{kind}\b', page.read_text(encoding="utf-8")))


def test_pred_draws_one_dot_per_word(made, tmp_path, capsys):
    _, store, pred = made
    out = tmp_path / "a1.html"
    assert main(["heatmap", str(store), "-s", "a1", "--pred", str(pred), "-q", "-o", str(out)]) == 0, \
        capsys.readouterr().err
    assert _cells(out, "pred") == 5 and "Dots: predicted head" in out.read_text(encoding="utf-8")
    folder = tmp_path / "maps"
    assert main(["heatmap", str(store), "-s", "all", "--pred", str(pred), "--as", "html", "-q",
                 "-o", str(folder)]) == 0
    assert sorted(_cells(p, "pred") for p in folder.glob("*.html")) == [3, 5]


def test_a_gold_conllu_source_draws_its_own_gold_arcs(made, tmp_path, capsys, tiny_bert_dir):
    corpus, store, _ = made
    for source, extra in ((store, []), (corpus, ["--model", str(tiny_bert_dir)])):
        out = tmp_path / f"{source.name}.html"
        assert main(["heatmap", str(source), "-s", "a1", *extra, "-q", "-o", str(out)]) == 0, capsys.readouterr().err
        assert _cells(out, "gold") == 4   # 5 words, one of them the root (a dashed row, no cell)


def test_a_prediction_of_another_model_is_refused(made, tmp_path, capsys, tiny_roberta_dir):
    corpus, store, _ = made
    other = tmp_path / "roberta.conllu"
    assert main(["parse", str(corpus), "--model", str(tiny_roberta_dir), "-q", "-o", str(other)]) == 0
    assert main(["heatmap", str(store), "-s", "a1", "--pred", str(other), "-q", "-o", str(tmp_path / "x.svg")]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "model:" in err and not (tmp_path / "x.svg").exists()


def test_a_prediction_from_another_layer_warns(made, tmp_path, capsys):
    _, store, _ = made
    pred2 = tmp_path / "l2.conllu"
    assert main(["parse", str(store), "--layer", "2", "-q", "-o", str(pred2)]) == 0
    assert main(["heatmap", str(store), "-s", "a2", "--pred", str(pred2), "-o", str(tmp_path / "a2.svg")]) == 0
    assert "decoded from layer 2; the map shows layer -1" in capsys.readouterr().err


def test_gold_and_predicted_marks_get_a_caption_that_fits(tmp_path):
    import numpy as np
    from PIL import Image

    from pmask.eval.figures.heatmap import HEATMAP_DPI, heatmap_figsize, render_heatmap

    words = ["The", "cat", "sat"]
    out = render_heatmap(np.ones((3, 3)), words, tmp_path / "m.png", gold_heads=[2, 3, 0], pred_heads=[2, 0, 2],
                         title="s")
    w, h = heatmap_figsize(words, title="s", gold=True, caption_lines=2)   # too narrow for one caption line
    with Image.open(out) as im:
        assert im.size == (round(w * HEATMAP_DPI), round(h * HEATMAP_DPI))
    assert h > heatmap_figsize(words, title="s", gold=True)[1]


def test_a_corpus_source_is_compared_by_its_model_spec(made, tmp_path, capsys, tiny_bert_dir):
    """A corpus and --model (no store) is checked against the prediction too: same run drawn, another probe or
    head refused in one line."""
    corpus, _, pred = made
    out = tmp_path / "c.svg"
    assert main(["heatmap", str(corpus), "--model", str(tiny_bert_dir), "-s", "a1", "--pred", str(pred), "-q",
                 "-o", str(out)]) == 0, capsys.readouterr().err
    assert main(["heatmap", str(corpus), "--model", str(tiny_bert_dir), "--probe", "single", "-s", "a1",
                 "--pred", str(pred), "-q", "-o", str(tmp_path / "x.svg")]) == 1
    err = capsys.readouterr().err
    assert "probe:" in err and "has pair" in err and "has single" in err and not (tmp_path / "x.svg").exists()
    attention = tmp_path / "att.conllu"
    assert main(["parse", str(corpus), "--model", str(tiny_bert_dir), "--probe", "attention", "--head", "1",
                 "-q", "-o", str(attention)]) == 0
    assert main(["heatmap", str(corpus), "--model", str(tiny_bert_dir), "--probe", "attention", "-s", "a1",
                 "--pred", str(attention), "-q", "-o", str(tmp_path / "y.svg")]) == 1
    assert "head: the model" in capsys.readouterr().err and not (tmp_path / "y.svg").exists()
