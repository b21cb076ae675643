"""Impact-map heatmaps: valid PNG/SVG/PDF/HTML files, gold arcs, folders of maps, bad input."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PIL import Image

from pmask.common.errors import PmaskError
from pmask.eval.figures.heatmap import (
    GOLD_COLOUR,
    HEATMAP_DPI,
    HeatmapError,
    heatmap_figsize,
    render_heatmap,
    render_heatmaps,
    safe_stem,
)

WORDS = ["The", "cat", "<sat>", "on", "R&D", "$5", "mat", "."]
HEADS = [2, 3, 0, 7, 7, 7, 3, 3]          # CoNLL-U: word 3 "<sat>" is the root


@pytest.fixture
def F() -> np.ndarray:
    rng = np.random.default_rng(1)
    m = rng.random((len(WORDS), len(WORDS))).astype(np.float32)  # stores hold float32
    np.fill_diagonal(m, 0.0)
    return m


def _pixels(words, **kw) -> tuple[int, int]:
    w, h = heatmap_figsize(words, **kw)
    return round(w * HEATMAP_DPI), round(h * HEATMAP_DPI)


def _gold_pixels(path) -> int:
    rgb = np.asarray(Image.open(path).convert("RGB")).astype(int)
    target = np.array([int(GOLD_COLOUR[i:i + 2], 16) for i in (1, 3, 5)])
    return int((np.abs(rgb - target).sum(axis=2) < 60).sum())


def _no_temp_files(folder) -> bool:
    return not [p for p in folder.iterdir() if p.name.startswith(".") or p.suffix == ".tmp"]


def test_png_size_follows_sizing_rule(tmp_path, F):
    plain = render_heatmap(F, WORDS, tmp_path / "plain.png")
    with Image.open(plain) as im:
        assert im.format == "PNG"
        assert im.size == _pixels(WORDS)
    gold = render_heatmap(F, WORDS, tmp_path / "gold.png", gold_heads=HEADS, title="sentence s1")
    with Image.open(gold) as im:
        assert im.size == _pixels(WORDS, title="sentence s1", gold=True)
    # The figure grows with the sentence so labels stay readable.
    assert heatmap_figsize(WORDS * 3)[0] > heatmap_figsize(WORDS)[0]
    assert _no_temp_files(tmp_path)


def test_gold_arcs_are_drawn(tmp_path, F):
    plain = render_heatmap(F, WORDS, tmp_path / "plain.png")
    gold = render_heatmap(F, WORDS, tmp_path / "gold.png", gold_heads=HEADS)
    assert _gold_pixels(plain) == 0
    assert _gold_pixels(gold) > 200


def test_svg_is_xml_with_word_labels(tmp_path, F):
    path = render_heatmap(F, WORDS, tmp_path / "map.svg", gold_heads=HEADS, title="sentence s1")
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg")
    text = "".join(root.itertext())
    for word in WORDS + ["word i (measured)", "word j (masked)", "sentence s1"]:
        assert word in text
    # No dates or random ids: the same input gives the same file.
    again = render_heatmap(F, WORDS, tmp_path / "again.svg", gold_heads=HEADS, title="sentence s1")
    assert path.read_bytes() == again.read_bytes()


def test_pdf_has_a_page(tmp_path, F):
    data = render_heatmap(F, WORDS, tmp_path / "map.pdf", gold_heads=HEADS).read_bytes()
    assert data.startswith(b"%PDF")
    assert re.search(rb"/Type\s*/Page\b(?!s)", data)


def test_html_is_self_contained(tmp_path, F):
    F = F.copy()
    F[0, 1] = np.nan
    path = render_heatmap(F, WORDS, tmp_path / "map.html", gold_heads=HEADS, title="s <1>")
    page = path.read_text(encoding="utf-8")
    for word in ["The", "cat", "&lt;sat&gt;", "R&amp;D", "$5", "mat"]:
        assert word in page
    assert "<sat>" not in page and "R&D" not in page
    assert "http" not in page.lower() and "src=" not in page.lower()
    assert "<link" not in page and "@import" not in page
    # One hover value per cell, gold arcs and root row marked.
    assert len(re.findall(r"<td [^>]*title=", page)) == len(WORDS) ** 2
    assert "2 cat → 1 The: nan" in page
    assert f"1 The → 2 cat: {float(F[1, 0]):.4g}\"" in page
    assert re.search(r'title="3 &lt;sat&gt; → 2 cat: [0-9.e-]+"', page)
    assert len(re.findall(r'class="gold[ "]', page)) == sum(1 for h in HEADS if h)
    assert page.count('class="root"') == 1
    assert "s &lt;1&gt;" in page


def test_many_sentences_into_a_folder(tmp_path, F):
    small = F[:3, :3]
    items = [
        ("en/1", small, WORDS[:3], [2, 0, 2]),
        ("en:1", small, WORDS[:3], None),
        ("EN/1", small, WORDS[:3], None),
        ("../../etc", small, WORDS[:3], None),
        ("", small, WORDS[:3], None),
    ]
    out = tmp_path / "maps"   # the folder is created (its parent must exist)
    paths = render_heatmaps(items, out, fmt="html")
    assert len(paths) == len(items)
    names = [p.name for p in paths]
    assert len({n.lower() for n in names}) == len(names)
    assert all(p.parent == out and p.exists() and p.suffix == ".html" for p in paths)
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+", n) and not n.startswith(".") for n in names)
    pngs = render_heatmaps(items[:1], tmp_path / "png", fmt=".PNG")
    with Image.open(pngs[0]) as im:
        assert im.format == "PNG"


def test_safe_stem():
    taken: set[str] = set()
    assert safe_stem("n01001011", taken) == "n01001011"
    assert safe_stem("N01001011", taken) == "N01001011-2"
    assert safe_stem("a b/c", taken) == "a_b_c"
    assert safe_stem("../../etc", taken) == "etc"
    assert safe_stem("CON", taken) == "_CON"
    assert safe_stem(None, taken) == "None"
    assert len(safe_stem("x" * 500, taken)) <= 80


def test_unknown_suffix(tmp_path, F):
    with pytest.raises(ValueError, match=r"\.jpg"):
        render_heatmap(F, WORDS, tmp_path / "map.jpg")
    with pytest.raises(PmaskError, match="no suffix"):
        render_heatmap(F, WORDS, tmp_path / "map")
    with pytest.raises(ValueError, match="gif"):
        render_heatmaps([], tmp_path, fmt="gif")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "matrix, words, heads, message",
    [
        (np.zeros((3, 4)), ["a", "b", "c"], None, r"shape \(3, 4\), expected \(3, 3\)"),
        (np.zeros((2, 2)), ["a", "b", "c"], None, "expected"),
        (np.array([[0, np.inf], [1, 0]]), ["a", "b"], None, "infinite"),
        (np.zeros((2, 2)), ["a", "b"], [0], "1 gold heads for 2 words"),
        (np.zeros((2, 2)), ["a", "b"], [0, 3], "out of range"),
        (np.zeros((2, 2)), ["a", "b"], [0, 2], "itself"),
        (np.zeros((0, 0)), [], None, "empty"),
    ],
)
def test_bad_input_is_a_one_line_error(tmp_path, matrix, words, heads, message):
    path = tmp_path / "bad.html"
    with pytest.raises(HeatmapError, match=message) as info:
        render_heatmap(matrix, words, path, gold_heads=heads)
    assert isinstance(info.value, PmaskError) and "\n" not in str(info.value)
    assert str(path) in str(info.value)
    assert not path.exists()


def test_value_range_and_plain_lists(tmp_path):
    # Constant matrix (singular colour range), nested lists, explicit vmin/vmax, other cmap.
    render_heatmap([[1.0, 1.0], [1.0, 1.0]], ["a", "b"], tmp_path / "const.png")
    page = render_heatmap([[0.0, 5.0], [-5.0, 0.0]], ["a", "b"], tmp_path / "clip.html",
                          vmin=0, vmax=1, cmap="magma").read_text()
    assert "2 b → 1 a: 5" in page
    with pytest.raises(HeatmapError, match="colormap"):
        render_heatmap([[0.0]], ["a"], tmp_path / "x.html", cmap="no-such-map")
    with pytest.raises(HeatmapError, match="vmin"):
        render_heatmap([[0.0]], ["a"], tmp_path / "x.html", vmin=2, vmax=1)


def test_predicted_arcs_are_drawn_next_to_gold(tmp_path, F):
    pred = [2, 0, 2, 7, 4, 7, 3, 3]
    page = render_heatmap(F, WORDS, tmp_path / "map.html", gold_heads=HEADS, pred_heads=pred).read_text("utf-8")
    cells = re.findall(r'<td data-j="(\d+)"( class="[^"]*")?', page)
    marked = [(k // len(WORDS), int(j)) for k, (j, cls) in enumerate(cells) if "pred" in cls]
    assert marked == [(k - 1, (h or k) - 1) for k, h in enumerate(pred, start=1)]
    assert "Dots: predicted head" in page
    plain = render_heatmap(F, WORDS, tmp_path / "plain.png", gold_heads=HEADS)
    dotted = render_heatmap(F, WORDS, tmp_path / "pred.png", gold_heads=HEADS, pred_heads=pred)
    white = [int((np.asarray(Image.open(p).convert("RGB")).min(axis=2) > 250).sum()) for p in (plain, dotted)]
    assert white[1] > white[0]
    with pytest.raises(HeatmapError, match="predicted head 9 of word 1"):
        render_heatmap(F, WORDS, tmp_path / "bad.png", pred_heads=[9] + pred[1:])
