"""UUAS as Hoover et al. 2021 score CPMI trees, on hand-made trees."""
from __future__ import annotations

from pmask.eval.scores.hoover_uuas import (
    HooverUuas,
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


def test_files_report_every_sentence_and_without_short_ones(tmp_path):
    from pmask.eval.scores.hoover_uuas import hoover_uuas_files

    def conllu(rows_by_sentence):
        out = []
        for k, rows in enumerate(rows_by_sentence, start=1):
            out.append(f"# sent_id = s{k}")
            out += [f"{i}\t{w}\t_\t{u}\t_\t_\t{h}\t_\t_\t_" for i, (w, u, h) in enumerate(rows, start=1)]
            out.append("")
        return "\n".join(out) + "\n"

    gold = [[("a", "NOUN", 2), ("b", "VERB", 0)],
            [("a", "DET", 2), ("b", "NOUN", 3), ("c", "VERB", 0), (".", "PUNCT", 3)]]
    pred = [[("a", "NOUN", 2), ("b", "VERB", 0)],
            [("a", "DET", 3), ("b", "NOUN", 3), ("c", "VERB", 0), (".", "PUNCT", 3)]]
    (tmp_path / "g.conllu").write_text(conllu(gold))
    (tmp_path / "p.conllu").write_text(conllu(pred))
    s = hoover_uuas_files(tmp_path / "p.conllu", tmp_path / "g.conllu")
    assert (s.pooled, s.mean, s.sentences, s.gold_edges) == (2 / 3, 0.75, 2, 3)
    assert (s.pooled_long, s.mean_long) == (0.5, 0.5)
