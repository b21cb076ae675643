"""The ``.edus`` reader refuses a file of word rows (issue 47 item 10)."""
from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from pmask.cli import main

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.mark.parametrize("source, line, looks, fmt", [
    ("mini.conllu", 4, "CoNLL-U (10 tab-separated columns)", "conllu"),   # its first line that is no comment
    ("mini.dp", 1, "a 3-column dependency file", "dep3"),
])
@pytest.mark.parametrize("how", ["--format edus", ".edus suffix", "standard input"])
def test_a_file_of_word_rows_read_as_edus_is_refused_in_one_line(tmp_path, capsys, monkeypatch, source, line, looks,
                                                                 fmt, how):
    """Main read each row of ``tests/data/mini.conllu`` (also ``# newdoc id = d1``) as an EDU, exited 0 and wrote
    "discourse trees" over them; reading the same file as text warns. Now: one line naming the file, the line and
    the format to use, exit 1, nothing written, before any model is asked for (none is given: the bundled one
    would be loaded)."""
    text = (DATA / source).read_text(encoding="utf-8")
    name = {"--format edus": "words.txt", ".edus suffix": "words.edus", "standard input": "-"}[how]
    if name == "-":
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8"))
    else:
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    flags = [] if how == ".edus suffix" else ["--format", "edus"]
    code = main(["parse", name, *flags, "--root", "free", "-o", "out.conllu"])
    err = capsys.readouterr().err
    shown = "<stdin>" if name == "-" else name
    assert code == 1 and err == (f"pmask: error: {shown}:{line}: read as EDUs (one per line), but it looks like "
                                 f"{looks}: each word row would be an EDU; read it with format {fmt}\n"), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ([] if name == "-" else [name])
