"""``pmask heatmap``: a PDF heatmap says only what pmask says (no third-party logger's chatter)."""
from __future__ import annotations

from pathlib import Path

import pytest

from pmask.cli import main

from test_cli import SMALL


@pytest.fixture(scope="module")
def store(tmp_path_factory, tiny_bert_dir) -> Path:
    """A store of the two SMALL sentences, layers 2 and 3."""
    base = tmp_path_factory.mktemp("store")
    corpus = base / "small.conllu"
    corpus.write_text(SMALL, encoding="utf-8")
    out = base / "store"
    assert main(["impact", str(corpus), "--model", str(tiny_bert_dir), "--layers", "2,3", "-q", "-o", str(out)]) == 0
    return out


def run(args: list, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("verbosity", [[], ["-v"]])
def test_a_pdf_heatmap_says_only_what_pmask_says(verbosity, store, tmp_path, capsys):
    said = {}
    for suffix in ("png", "pdf"):
        code, _, err = run(["heatmap", store, "--sentence", "a1", *verbosity, "-o", tmp_path / f"h.{suffix}"], capsys)
        assert code == 0, err
        said[suffix] = err.replace(f"h.{suffix}", "h.*").splitlines()
    assert said["pdf"] == said["png"]   # fontTools' font subsetting (PDF only) says nothing
    assert all(line.startswith("pmask: ") for line in said["pdf"])


# ---------------------------------------------------------------------------- issue 45: a causal model's maps

def _blank_cells(page: Path) -> set[tuple[int, int]]:
    """The (i, j) cells of a heatmap page drawn blank (NaN)."""
    import re

    out, i = set(), -1
    for line in page.read_text(encoding="utf-8").splitlines():
        if (row := re.match(r'<tr data-i="(\d+)"', line)) is not None:
            i = int(row.group(1))
        out |= {(i, int(j)) for j in re.findall(r'<td data-j="(\d+)" class="[^"]*\bnan\b', line)}
    return out


def test_a_causal_models_map_draws_its_lower_triangle_alone(tmp_path_factory, tmp_path, capsys):
    """Issue 45, item 6: a causal model fills F[i, j] for j < i only (word j moves the words after it); its map
    draws the cells above the diagonal blank, not as zeros, from a store and from the corpus; the distance probe
    (both sides filled) is drawn whole."""
    from family_impacts import causal_model

    folder, corpus = causal_model(tmp_path_factory)
    store = tmp_path / "store"
    assert main(["impact", str(corpus), "--model", str(folder), "--layers", "2", "-q", "-o", str(store)]) == 0
    n = 6   # sentence c1: The committee approved the plan .
    upper = {(i, j) for i in range(n) for j in range(n) if j > i}
    for source, extra in ((store, []), (corpus, ["--model", str(folder)])):
        page = tmp_path / f"{source.name}.html"
        assert main(["heatmap", str(source), *extra, "-s", "c1", "-q", "-o", str(page)]) == 0, \
            capsys.readouterr().err
        assert _blank_cells(page) == upper
    assert main(["heatmap", str(store), "-s", "c1", "-q", "-o", str(tmp_path / "c1.png")]) == 0
    assert (tmp_path / "c1.png").stat().st_size > 1000
    whole = tmp_path / "distance.html"
    assert main(["heatmap", str(corpus), "--model", str(folder), "--probe", "distance", "-s", "c1", "-q",
                 "-o", str(whole)]) == 0
    assert _blank_cells(whole) == set()
