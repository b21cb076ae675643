"""Impact-map files: valid PNG/SVG/PDF of the promised size, self-contained HTML with every label."""
from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PIL import Image

from pmask.eval.heatmap import HEATMAP_DPI, heatmap_figsize, render_heatmap, render_heatmaps

WORDS = ["The", "<cat>", "sat", "&", "purred", "."]
HEADS = [2, 3, 0, 3, 3, 3]


@pytest.fixture()
def F() -> np.ndarray:
    M = np.random.default_rng(0).random((len(WORDS), len(WORDS))).astype(np.float32)
    np.fill_diagonal(M, 0.0)
    return M


def test_png_has_expected_size(tmp_path, F):
    path = render_heatmap(F, WORDS, tmp_path / "m.png", gold_heads=HEADS, title="s1")
    w_in, h_in = heatmap_figsize(WORDS, title="s1", gold=True)
    with Image.open(path) as img:
        assert img.format == "PNG"
        assert img.size == (round(w_in * HEATMAP_DPI), round(h_in * HEATMAP_DPI))


def test_png_grows_with_sentence_length(tmp_path):
    small = heatmap_figsize(["a"] * 5)
    large = heatmap_figsize(["a"] * 40)
    assert large[0] > small[0] and large[1] > small[1]


def test_svg_is_xml_with_labels(tmp_path, F):
    path = render_heatmap(F, WORDS, tmp_path / "m.svg")
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg")
    text = path.read_text(encoding="utf-8")
    assert "purred" in text


def test_pdf_has_a_page(tmp_path, F):
    data = render_heatmap(F, WORDS, tmp_path / "m.pdf").read_bytes()
    assert data.startswith(b"%PDF") and b"/Page" in data


def test_html_is_self_contained_with_every_label(tmp_path, F):
    html = render_heatmap(F, WORDS, tmp_path / "m.html", gold_heads=HEADS).read_text(encoding="utf-8")
    for word in ("The", "&lt;cat&gt;", "sat", "&amp;", "purred"):
        assert word in html
    assert "<cat>" not in html
    assert "http://" not in html and "https://" not in html and "src=" not in html
    assert f"{F[1, 0]:.4g}" in html  # hover values


def test_many_sentences_into_a_folder(tmp_path, F):
    items = [("n01/1", F, WORDS, HEADS), ("n01/1", F, WORDS, None), ("x y", F[:2, :2], WORDS[:2], None)]
    paths = render_heatmaps(items, tmp_path / "maps", fmt="svg")
    assert len({p.name for p in paths}) == 3 and all(p.is_file() for p in paths)


def test_bad_input_is_a_clear_error(tmp_path, F):
    with pytest.raises(ValueError, match="format"):
        render_heatmap(F, WORDS, tmp_path / "m.bmp")
    with pytest.raises(ValueError):
        render_heatmap(F, WORDS[:3], tmp_path / "m.png")
    assert math.isfinite(float(F.max()))
