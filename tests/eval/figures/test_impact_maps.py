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


# ------------------------------------------------------------------ documents of EDUs (issue 37)

@pytest.fixture(scope="module")
def doc_model(tmp_path_factory):
    from scidtb_counts import WORDS

    from pmask.perturb.testing import make_tiny_bert

    return make_tiny_bert(tmp_path_factory.mktemp("docs"), WORDS + ["which", "beats", "the", "state", "of", "art"],
                          max_positions=64, seed=1)


def test_a_documents_map_labels_each_edu_by_its_index_and_first_words(doc_model, tmp_path, monkeypatch):
    """Labels "k first words…" (cut after a whole word, at most 24 characters), axes and title name EDUs and the
    document; the HTML map keeps each EDU's whole text on hover. On main: the bare EDU text, "word j (masked)"."""
    import matplotlib

    monkeypatch.setitem(matplotlib.rcParams, "svg.fonttype", "none")   # text stays text in the SVG
    edus = tmp_path / "long.edus"
    edus.write_text("# doc_id = d1\nWe present a parser\nwhich beats the state of the art on four treebanks .\n"
                    "It is fast .\n", encoding="utf-8")
    # hand-cut: "2 which beats the state" is 23 characters, its last word may go on: cut before it
    labels = ["1 We present a parser", "2 which beats the…", "3 It is fast ."]
    assert main(["heatmap", str(edus), "--model", str(doc_model), "-s", "d1", "-q", "-o", str(tmp_path / "m.svg")]) == 0
    svg = (tmp_path / "m.svg").read_text(encoding="utf-8")
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert all(texts.count(label) == 2 for label in labels)   # both axes
    assert "EDU j (masked)" in texts and "EDU i (measured)" in texts
    assert any(t.startswith("document d1, layer 3") for t in texts)
    assert main(["heatmap", str(edus), "--model", str(doc_model), "-s", "0", "-q", "-o", str(tmp_path / "m.html")]) == 0
    page = (tmp_path / "m.html").read_text(encoding="utf-8")
    rows = re.findall(r'<th class="row" id="r\d+" title="([^"]*)">([^<]*)</th>', page)
    assert rows == [("We present a parser", labels[0]),
                    ("which beats the state of the art on four treebanks .", labels[1]), ("It is fast .", labels[2])]
    assert "impact of masking EDU j (column) on EDU i (row)" in page and "3 EDUs." in page


def test_a_faithful_prediction_is_drawn_without_a_dot_for_the_dropped_edu(doc_model, tmp_path, capsys):
    """``--faithful`` leaves each abstract's last EDU without a head (-1): main refused the map ("predicted head
    -1 … out of range"); now every other EDU has its dot, the last none."""
    from scidtb_counts import SCIDTB

    pred = tmp_path / "f.conllu"
    assert main(["parse", str(SCIDTB), "--model", str(doc_model), "--faithful", "-q", "-o", str(pred)]) == 0
    heads = [line.split("\t")[6] for line in pred.read_text(encoding="utf-8").splitlines()[3:7]]
    assert heads[-1] == "_"
    assert main(["heatmap", str(SCIDTB), "--model", str(doc_model), "-s", "A-1", "--pred", str(pred), "-q",
                 "-o", str(tmp_path / "f.html")]) == 0, capsys.readouterr().err
    page = (tmp_path / "f.html").read_text(encoding="utf-8")
    dots = [(int(i), int(j)) for i, cells in re.findall(r'<tr data-i="(\d+)"[^>]*>(.*?)</tr>', page, re.S)
            for j, cls in re.findall(r'<td data-j="(\d+)"(?: class="([^"]*)")?', cells) if "pred" in cls.split()]
    want = [(k, (int(h) or k + 1) - 1) for k, h in enumerate(heads[:-1])]   # the predicted root's dot: its diagonal
    assert sorted(dots) == sorted(want)
