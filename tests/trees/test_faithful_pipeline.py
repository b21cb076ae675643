"""``pmask parse --faithful`` against the authors' pipeline followed step by step, head for head."""
from __future__ import annotations

from pathlib import Path

import pytest

from authors_reference import authors_heads
from pmask.cli import main
from pmask.perturb.models.load import load_model

# short sentences (brute-force CLE), with multi-piece words of the tiny vocabulary
GOLD = [
    (["She", "walked", "home", "."], [2, 0, 2, 2]),
    (["Those", "stories", "were", "reported", "."], [2, 4, 4, 0, 4]),
    (["He", "said", "the", "decision", "was", "unbelievable"], [2, 0, 4, 6, 6, 2]),
]


def conllu(sentences) -> str:
    out = []
    for k, (words, heads) in enumerate(sentences, start=1):
        out.append(f"# sent_id = s{k}")
        for i, (w, h) in enumerate(zip(words, heads), start=1):
            out.append(f"{i}\t{w}\t_\t_\t_\t_\t{h}\t{'root' if h == 0 else 'dep'}\t_\t_")
        out.append("")
    return "\n".join(out) + "\n"


def heads_of(path: Path) -> list[list[int]]:
    blocks = path.read_text(encoding="utf-8").strip().split("\n\n")
    return [[int(line.split("\t")[6]) for line in b.splitlines() if not line.startswith("#")] for b in blocks]


@pytest.mark.parametrize("decoder", ["eisner", "cle"])
def test_faithful_parse_matches_authors_pipeline(tmp_path, tiny_bert_dir, decoder, capsys):
    gold = tmp_path / "gold.conllu"
    gold.write_text(conllu(GOLD), encoding="utf-8")
    out = tmp_path / f"{decoder}.conllu"
    code = main(["parse", str(gold), "--model", str(tiny_bert_dir), "--decoder", decoder, "--root", "gold",
                 "--faithful", "-q", "-o", str(out)])
    assert code == 0, capsys.readouterr().err
    lm = load_model(tiny_bert_dir, device="cpu", dtype="float64")
    expected = [authors_heads(lm, words, heads.index(0) + 1, decoder) for words, heads in GOLD]
    assert heads_of(out) == expected
