"""Acceptance numbers: the paper's uninformed baselines on the shared gold data (Wu et al. 2020).

* right-chain with the gold root, punctuation included: 35.04 UAS on the PUD copy the paper used
  (35.30 on the current UD release);
* right-branching on the WSJ10 subset of the NLTK PTB sample (555 sentences, punctuation,
  traces and $/# removed, ≤ 10 words): 58.60 sentence-level F1.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from pmask.corpora import read_corpus
from pmask.eval import BracketScore, DependencyScore
from pmask.trees.baselines import right_branching, right_chain

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"


def need(rel: str) -> Path:
    path = SHARED / rel
    if not path.exists():
        pytest.skip(f"shared data absent: {path}")
    return path


@pytest.mark.parametrize("rel,expected", [
    ("ud/PUD-wu2020/PUD.conllu", 35.04),
    ("ud/UD_English-PUD/en_pud-ud-test.conllu", 35.30),
])
def test_right_chain_gold_root_uas(rel, expected):
    score = DependencyScore()
    for s in read_corpus(need(rel)):
        score.add(right_chain(len(s), root=s.root), s.heads, sent_id=s.id)
    assert score.sentences == 1000
    assert round(score.uas, 2) == expected


def test_right_branching_wsj10_f1():
    golds = read_corpus(need("ptb-sample/combined"), max_words=10)
    assert len(golds) == 555
    score = BracketScore()
    for s in golds:
        score.add(right_branching(s.words), s.tree, sent_id=s.id)
    assert round(score.f1_sentence, 2) == 58.60
