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
