"""Issue 39 item 2: bench's plots show each decoder's own headline: an undirected decoder's heatmap and line are its
UUAS (titled so), connect-adjacent's line its UUAS, a directed decoder's its UAS."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from pmask.eval.studies.bench import plots


def _result() -> Any:
    rows = [{"treebank": "tb", "language": "L", "probe": "pair", "decoder": decoder, "layer": layer,
             "uas": 10.0 + layer, "uuas": 50.0 + layer} for decoder in ("eisner", "mst") for layer in (1, 2)]
    baselines = [{"treebank": "tb", "baseline": name, "uas": uas, "uuas": uuas}
                 for name, uas, uuas in (("right-chain", 30.0, 60.0), ("connect-adjacent", 31.0, 61.0))]
    return SimpleNamespace(treebanks=[{"treebank": "tb", "language": "L", "task": "dependency"}], rows=rows,
                           baselines=baselines)


def _saved(monkeypatch) -> list[Any]:
    figures: list[Any] = []
    monkeypatch.setattr(plots, "save_figure", lambda fig, path, dpi=110: figures.append(fig) or Path(path))
    return figures


def test_an_undirected_heatmap_shows_uuas(tmp_path, monkeypatch):
    figures = _saved(monkeypatch)
    plots.plot_heatmap(_result(), "mst", tmp_path / "h.png", "pair")
    plots.plot_heatmap(_result(), "eisner", tmp_path / "e.png", "pair")
    (mst_ax, *_), (eisner_ax, *_) = (f.axes for f in figures)
    assert mst_ax.get_title() == "mst: UUAS" and eisner_ax.get_title() == "eisner: UAS"
    assert np.asarray(mst_ax.images[0].get_array()).tolist() == [[51.0, 52.0]]
    assert np.asarray(eisner_ax.images[0].get_array()).tolist() == [[11.0, 12.0]]


def test_the_layer_plot_draws_each_line_by_its_own_score(tmp_path, monkeypatch):
    figures = _saved(monkeypatch)
    plots.plot_layers(_result(), tmp_path / "layers.png")
    lines = {line.get_label(): list(line.get_ydata()) for line in figures[0].axes[0].get_lines()}
    assert lines["mst (UUAS)"] == [51.0, 52.0] and lines["eisner"] == [11.0, 12.0]
    assert lines["connect-adjacent (UUAS)"] == [61.0, 61.0] and lines["right-chain"] == [30.0, 30.0]
