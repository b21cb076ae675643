"""Span charts drawn start × length: the grid, the files, the report's rows."""
from __future__ import annotations

import numpy as np
import pytest
from nltk import Tree

from pmask.eval.figures.span_chart import render_span_chart, start_length_grid, tree_spans
from pmask.eval.html.impacts import span_rows
from pmask.trees.cky import normalise_by_length


def test_grid_puts_each_span_at_its_start_and_length():
    rng = np.random.default_rng(0)
    chart = np.triu(rng.random((5, 5)))
    chart[0, 4] = 0.0
    grid = start_length_grid(chart)
    norm = normalise_by_length(chart)
    for length in range(1, 5):
        for start in range(5 - length + 1):
            assert grid[length - 1, start] == norm[start, start + length - 1]
    assert np.isnan(grid[4]).all() and np.isnan(grid[3, 2])
    np.testing.assert_array_equal(span_rows(chart), grid[::-1])


@pytest.mark.parametrize("suffix", ["png", "svg", "html"])
def test_render_writes_each_format(tmp_path, suffix):
    words = ["a", "b", "c", "d"]
    chart = np.triu(np.arange(16.0).reshape(4, 4)) / 16
    tree = Tree("X", [Tree("X", ["a", "b"]), Tree("X", ["c", "d"])])
    out = render_span_chart(chart, words, tmp_path / f"m.{suffix}", gold_spans=tree_spans(tree),
                            pred_spans={(0, 2), (1, 4)}, title="t")
    assert out.is_file() and out.stat().st_size > 500
    assert tree_spans(tree) == {(0, 2), (2, 4), (0, 4)}
