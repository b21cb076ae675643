"""Punctuation: which words the scores leave out (``punct_mask``)."""
from __future__ import annotations

from pathlib import Path

from pmask.corpora import read_dep3
from pmask.eval import punct_mask

DATA = Path(__file__).resolve().parents[2] / "data"


def test_punct_mask_ptb_tags():
    sent = read_dep3(DATA / "mini.dp")[0]
    assert punct_mask(sent) == [False, False, False, True]
    from pmask.corpora import Sentence
    s = Sentence("x", list("abcdefgh"), xpos=["``", "-LRB-", "$", "#", "NN", "-NONE-", "!?", "PRP$"])
    assert punct_mask(s) == [True, True, True, True, False, False, True, False]
    assert punct_mask(Sentence("y", ["a", "b"])) == [False, False]
