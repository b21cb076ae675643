"""UUAS as Hoover et al. 2021 score CPMI trees, on hand-made trees."""
from __future__ import annotations

from pmask.eval.hoover_uuas import HooverUuas, corpus_uuas, gold_edges, predicted_edges, sentence_uuas, tree_distances


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
