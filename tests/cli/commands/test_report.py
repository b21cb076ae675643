"""``pmask report``: ``--max-words`` scores only those sentences, and a store lacking some of them warns."""
from __future__ import annotations

import io
import sys
from pathlib import Path

from pmask.cli import main


def _no_heads(path: Path) -> str:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        cols = line.split("\t")
        if len(cols) == 10:
            cols[6] = "_"
        rows.append("\t".join(cols))
    return "\n".join(rows) + "\n"


def _stdin(monkeypatch, text: str) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8"))


DATA = Path(__file__).resolve().parents[2] / "data"


def test_report_takes_max_words_and_scores_only_those_sentences(tmp_path, capsys):
    pred = tmp_path / "pred.conllu"
    assert main(["parse", str(DATA / "mini.conllu"), "--decoder", "right-chain", "-o", str(pred), "-q"]) == 0
    capsys.readouterr()
    page = tmp_path / "r.html"
    assert main(["report", str(pred), "--gold", str(DATA / "mini.conllu"), "--max-words", "2", "-o", str(page)]) == 0
    assert "scoring 3 of its 5 sentences" in capsys.readouterr().err
    html = page.read_text(encoding="utf-8")
    assert '"s1"' not in html and '"s4"' in html   # s1 has 6 words


def test_report_warns_when_the_store_lacks_some_of_its_sentences(tiny_bert_dir, tmp_path, capsys):
    store, pred = tmp_path / "store", tmp_path / "pred.conllu"
    assert main(["impact", str(DATA / "mini.conllu"), "--model", str(tiny_bert_dir), "--limit", "2", "-o", str(store),
                 "-q"]) == 0
    assert main(["parse", str(DATA / "mini.conllu"), "--model", str(tiny_bert_dir), "-o", str(pred), "-q"]) == 0
    capsys.readouterr()
    assert main(["report", str(pred), "--gold", str(DATA / "mini.conllu"), "--store", str(store),
                 "-o", str(tmp_path / "r.html")]) == 0
    err = capsys.readouterr().err
    assert "no impacts for 3 of the report's 5 sentences" in err and "3, s4, s5" in err
