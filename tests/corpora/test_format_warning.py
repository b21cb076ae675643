"""Issue 18 (friction): a file that looks like CoNLL-U but is read as plain text gets one warning."""
from __future__ import annotations

import logging
from pathlib import Path

from pmask.cli import main
from pmask.corpora import read_corpus

DATA = Path(__file__).resolve().parents[1] / "data"


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_conllu_read_as_text_warns_once(tmp_path, caplog):
    copy = tmp_path / "pud.txt"
    copy.write_bytes((DATA / "mini.conllu").read_bytes())
    with caplog.at_level(logging.WARNING):
        read_corpus(DATA / "mini.conllu", "text")
        read_corpus(copy)                      # auto: the suffix says text
    messages = _warnings(caplog)
    assert len(messages) == 2 and all("looks like CoNLL-U" in m and "format conllu" in m for m in messages)
    assert "format text was asked for" in messages[0] and "'.txt'" in messages[1]


def test_text_and_conllu_read_as_themselves_do_not_warn(caplog):
    with caplog.at_level(logging.WARNING):
        read_corpus(DATA / "mini.txt", "text")
        read_corpus(DATA / "mini.conllu")
    assert _warnings(caplog) == []


def test_the_command_line_shows_the_warning_on_one_line(tmp_path, capsys):
    out = tmp_path / "rc.conllu"
    assert main(["parse", str(DATA / "mini.conllu"), "--format", "text", "--decoder", "right-chain", "--root",
                 "free", "-o", str(out)]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if "looks like CoNLL-U" in line]
    assert len(lines) == 1 and lines[0].startswith("pmask: ")
