"""Issue 27, item 7: the legend of bench's ``layers.png`` is fully visible at every number of lines,
names every line of every panel, and a line looks the same in every panel."""
from __future__ import annotations

import struct
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pmask.eval.studies.bench import plots as results
from pmask.eval.studies.bench.plots import plot_heatmap, plot_layers

DEPENDENCY_BASELINES = ("right-chain", "left-chain", "random-projective")
BRACKET_BASELINES = ("right-branching", "left-branching", "random-binary")


def _result(treebanks: int, probes: tuple[str, ...], decoders: tuple[str, ...], ptb: bool = False) -> Any:
    """A bench result with ``treebanks`` panels (the last one a PTB treebank with ``ptb``)."""
    tbs, rows, baselines = [], [], []
    for t in range(treebanks):
        bracket = ptb and t == treebanks - 1
        name, key = ("combined", "f1_sentence") if bracket else (f"xx_pud-ud-test-{t}", "uas")
        tbs.append({"treebank": name, "language": f"Language {t}",
                    "task": "constituency" if bracket else "dependency"})
        for probe in probes:
            for decoder in ("mart",) if bracket else decoders:
                rows += [{"treebank": name, "language": f"Language {t}", "probe": probe, "decoder": decoder,
                          "layer": layer, key: 30.0 + layer + t} for layer in (1, 2, 3)]
        baselines += [{"treebank": name, "baseline": b, key: 20.0 + 5 * k}
                      for k, b in enumerate(BRACKET_BASELINES if bracket else DEPENDENCY_BASELINES)]
    return SimpleNamespace(treebanks=tbs, rows=rows, baselines=baselines)


def _figure(result: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The figure ``plot_layers`` saves, drawn."""
    figures: list[Any] = []
    monkeypatch.setattr(results, "save_figure", lambda fig, path, dpi=110: figures.append(fig) or Path(path))
    results.plot_layers(result, tmp_path / "layers.png")
    (figure,) = figures
    figure.canvas.draw()
    return figure


@pytest.mark.parametrize(("treebanks", "probes", "decoders", "ptb"), [
    (1, ("pair",), ("eisner",), False),
    (2, ("pair", "single", "attention", "distance"), ("eisner", "cle"), True),
    (6, ("pair", "single", "attention", "distance"), ("eisner", "cle", "right-chain"), False),
    (20, ("pair", "single"), ("eisner", "cle"), True),
])
def test_the_legend_lies_inside_the_figure_and_off_the_panels(treebanks, probes, decoders, ptb, tmp_path,
                                                               monkeypatch):
    figure = _figure(_result(treebanks, probes, decoders, ptb), tmp_path, monkeypatch)
    renderer = figure.canvas.get_renderer()
    (legend,) = figure.legends
    box, page = legend.get_window_extent(renderer), figure.bbox
    assert page.x0 - 0.5 <= box.x0 and box.x1 <= page.x1 + 0.5, (box, page)
    assert page.y0 - 0.5 <= box.y0 and box.y1 <= page.y1 + 0.5, (box, page)
    for ax in figure.axes:
        if ax.get_visible() and ax.axison:
            assert not box.overlaps(ax.get_tightbbox(renderer)), ax.get_title()


def test_the_legend_names_every_line_of_every_panel_once(tmp_path, monkeypatch):
    figure = _figure(_result(3, ("pair", "single"), ("eisner", "cle"), ptb=True), tmp_path, monkeypatch)
    labels = [t.get_text() for t in figure.legends[0].get_texts()]
    assert len(labels) == len(set(labels))
    assert set(labels) == {f"{p} {d}" for p in ("pair", "single") for d in ("eisner", "cle", "mart")} | {
        *DEPENDENCY_BASELINES, *BRACKET_BASELINES}
    # a label has one colour in every panel, so the legend describes each of them
    colours: dict[str, set[Any]] = {}
    for ax in figure.axes:
        for line in ax.get_lines():
            colours.setdefault(line.get_label(), set()).add(line.get_color())
    assert all(len(c) == 1 for c in colours.values()), colours


def _one_treebank() -> SimpleNamespace:
    rows = [{"treebank": "en_pud-ud-test", "language": "English", "probe": "pair", "decoder": "eisner",
             "layer": layer, "uas": score} for layer, score in ((1, 39.8), (2, 48.2))]
    baselines = [{"treebank": "en_pud-ud-test", "baseline": "right-chain", "uas": 41.0}]
    return SimpleNamespace(rows=rows, baselines=baselines,
                           treebanks=[{"treebank": "en_pud-ud-test", "language": "English"}])


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def test_bench_pngs_of_one_treebank_are_large_enough_to_read(tmp_path):
    result = _one_treebank()
    heat = plot_heatmap(result, "eisner", tmp_path / "heatmap-eisner.png", "pair")
    width, height = _png_size(heat)
    assert width >= 800 and height >= 400, (width, height)   # was 440 × 123 px
    width, height = _png_size(plot_layers(result, tmp_path / "layers.png"))
    assert width >= 800 and height >= 400, (width, height)   # was 330 × 335 px
