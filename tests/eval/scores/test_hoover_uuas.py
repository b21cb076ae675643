"""UUAS as Hoover et al. 2021 score CPMI trees, on hand-made trees."""
from __future__ import annotations

import pytest

from pmask.common.errors import CorpusError
from pmask.corpora import Sentence
from pmask.eval.scores.hoover_uuas import (
    HooverUuas,
    HooverUuasScore,
    corpus_uuas,
    gold_edges,
    predicted_edges,
    sentence_uuas,
    tree_distances,
)


def test_gold_edges_skip_punctuation_and_bridge_it():
    # 1 <- 2 (root); 3 = PUNCT headed by 2, heading 4: the gold tree joins 2 and 4 through punctuation
    heads, upos = [2, 0, 2, 3], ["DET", "NOUN", "PUNCT", "NOUN"]
    assert tree_distances(heads)[1, 3] == 2
    assert gold_edges(heads, upos) == {(0, 1), (1, 3)}     # the length-2 edge stands in for the path
    assert predicted_edges([2, 0, 2, 3], upos) == {(0, 1)}  # edges with punctuation do not count
    assert sentence_uuas([2, 0, 2, 3], heads, upos) == HooverUuas(1, 2)


def test_pooled_and_mean_keep_every_sentence():
    short = sentence_uuas([0, 1], [0, 1], ["NOUN", "VERB"])   # two words: one gold edge, kept
    assert short == HooverUuas(1, 1)
    alone = sentence_uuas([0, 1], [0, 1], ["NOUN", "PUNCT"])  # no gold edge: no sentence score
    assert alone.uuas is None
    pooled, mean = corpus_uuas([short, alone, HooverUuas(1, 3)])
    assert (pooled, mean) == (0.5, (1 + 1 / 3) / 2)


def test_the_score_adds_up_and_keeps_the_short_sentences_apart():
    # counted by hand: s1 1 of 2 gold edges (2 and 4 joined through the comma), s2 2 of 3, s3 (two words) 1 of 1
    s1 = ([4, 0, 2, 2], [2, 0, 2, 3], ["DET", "NOUN", "PUNCT", "NOUN"])
    s2 = ([2, 0, 2, 3], [2, 0, 4, 2], ["PRON", "VERB", "DET", "NOUN"])
    s3 = ([2, 0], [0, 1], ["INTJ", "ADV"])
    parts = []
    for pred, gold, upos in (s1, s2, s3):
        part = HooverUuasScore()
        part.add(pred, gold, upos)
        parts.append(part)
    total = sum(parts)
    figures = total.to_dict()
    assert figures["hoover_uuas"] == pytest.approx(100 * 4 / 6)                    # pooled: 4 of 6 gold edges
    assert figures["hoover_uuas_mean"] == pytest.approx(100 * (1 / 2 + 2 / 3 + 1) / 3)
    assert figures["hoover_uuas_long"] == pytest.approx(100 * 3 / 5)               # s3 has only two words
    assert figures["hoover_uuas_mean_long"] == pytest.approx(100 * (1 / 2 + 2 / 3) / 2)
    assert (figures["hoover_common"], figures["hoover_gold_edges"], figures["hoover_sentences"]) == (4, 6, 3)
    assert total.headline == figures["hoover_uuas"]
    assert HooverUuasScore.optional and HooverUuasScore.name == "hoover_uuas"


def test_the_score_needs_upos_tags():
    gold = Sentence(id="s1", words=["a", "b"], heads=[2, 0], path="g.dp", line=3)
    with pytest.raises(CorpusError, match=r"g.dp:3 .*UPOS"):
        HooverUuasScore().add_sentence([2, 0], gold)
