"""The ``OUT.meta.json`` record: a corpus read from standard input is hashed as read."""
from __future__ import annotations

import hashlib
import io
import json
import sys
from pathlib import Path

from pmask.cli import main

DATA = Path(__file__).resolve().parents[1] / "data"


def test_meta_json_hashes_a_corpus_read_from_stdin(tmp_path, monkeypatch):
    data = (DATA / "mini.conllu").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    out = tmp_path / "p.conllu"
    assert main(["parse", "-", "--decoder", "right-chain", "-o", str(out), "-q"]) == 0
    corpus = json.loads((tmp_path / "p.conllu.meta.json").read_text())["corpus"]
    assert corpus["path"] == "-" and corpus["sha256"] == hashlib.sha256(data).hexdigest()



