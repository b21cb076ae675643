"""Wu et al.'s discourse decoding (--faithful on documents) against brute force and hand-derived trees."""
from __future__ import annotations

import numpy as np
import pytest

from pmask.common.errors import DecodeError
from pmask.corpora.sentence import NO_HEAD
from pmask.eval.scores.dependency_score import DependencyScore
from pmask.trees.registry import DECODERS, DecodeInput, decode, discourse_decoders

from brute_force import all_trees


def faithful_discourse(name, F_cls, root, n=None):
    """Decoder ``name``'s discourse mode (its entry's ``discourse``) on a document of n EDUs."""
    n = F_cls.shape[0] - 1 if F_cls is not None else n
    return decode(name, DecodeInput(words=[""] * n, F_cls=F_cls, root=root, faithful=True, discourse=True))


def test_the_discourse_decoders_are_the_entries_with_a_discourse_mode():
    """Wu et al.'s discourse pipeline is a field of the decoders' entries (no list of names elsewhere)."""
    assert discourse_decoders() == ("eisner", "cle", "right-chain", "left-chain")
    assert all((name in discourse_decoders()) == (d.discourse is not None) for name, d in DECODERS.items())
    with pytest.raises(DecodeError, match="discourse pipeline: eisner, cle, right-chain, left-chain, not mst"):
        faithful_discourse("mst", np.zeros((4, 4)), 1)


def _cut_nudged(F_cls, root):
    """Their steps written out: drop the last row/column, row of the gold root = 0 except ROOT = 1."""
    F = np.array(F_cls, dtype=np.float64)[:-1, :-1]
    F[root, :] = 0
    F[root, 0] = 1
    return F


@pytest.mark.parametrize("seed", range(6))
def test_eisner_is_the_best_projective_tree_of_the_cut_nudged_matrix(seed):
    rng = np.random.default_rng(seed)
    n = 6                                                  # EDUs; the last is dropped: 5 decoded
    F_cls = rng.random((n + 1, n + 1))
    root = int(rng.integers(1, n))
    F = _cut_nudged(F_cls, root)
    trees = all_trees(n - 1, projective=True)
    score = F[np.arange(1, n), trees].sum(axis=1)          # sum of F[dep, head], no softmax
    best = trees[np.argmax(score)]
    got = faithful_discourse("eisner", F_cls, root)
    assert got.tolist() == best.tolist() + [NO_HEAD]


@pytest.mark.parametrize("seed", range(6))
def test_cle_is_the_best_product_arborescence(seed):
    rng = np.random.default_rng(100 + seed)
    n = 6
    F_cls = rng.random((n + 1, n + 1))
    root = int(rng.integers(1, n))
    F = _cut_nudged(F_cls, root)
    F[0] = 0
    trees = all_trees(n - 1)
    trees = trees[trees[:, root - 1] == 0]                 # any other tree has product 0 at the root row
    product = np.prod(F[np.arange(1, n), trees], axis=1)
    got = faithful_discourse("cle", F_cls, root)
    assert got.tolist() == trees[np.argmax(product)].tolist() + [NO_HEAD]


def test_zero_matrices_give_the_issue_trees():
    """A zero matrix (their segment ids in attention_mask under transformers 5) is pure tie-breaking: Eisner
    puts every EDU before the root under it and chains the rest leftwards; Dozat's CLE puts every EDU under
    ROOT (the greedy first maximum is column 0)."""
    Z = np.zeros((7, 7))                                   # 6 EDUs
    assert faithful_discourse("eisner", Z, 3).tolist() == [3, 3, 0, 3, 4, NO_HEAD]
    assert faithful_discourse("cle", Z, 3).tolist() == [0, 0, 0, 0, 0, NO_HEAD]
    assert faithful_discourse("right-chain", None, 3, n=6).tolist() == [2, 3, 0, 5, 6, NO_HEAD]
    assert faithful_discourse("left-chain", None, 3, n=6).tolist() == [0, 1, 0, 3, 4, NO_HEAD]


def test_zero_matrix_scores_as_their_code_on_small_documents():
    """Three documents, gold trees chosen by hand; their scoring counts the dropped EDU as wrong."""
    golds = [([0, 1, 2, 2], 1), ([2, 0, 2, 3, 2], 2), ([2, 3, 0, 3, 6, 3], 3)]
    score = {d: DependencyScore() for d in ("eisner", "cle")}
    for gold, root in golds:
        Z = np.zeros((len(gold) + 1,) * 2)
        for d in score:
            score[d].add(faithful_discourse(d, Z, root), gold)
    # eisner: doc1 [0,1,2,_] 3/4; doc2 [2,0,2,3,_] 4/5; doc3 [3,3,0,3,4,_] 3/6 -> 10/15
    assert (score["eisner"].correct, score["eisner"].total) == (10, 15)
    assert score["cle"].correct == 3                       # the gold roots only


def test_last_edu_root_refused_and_registry_route():
    with pytest.raises(DecodeError, match=r"drops the last EDU .* gold root"):
        faithful_discourse("eisner", np.ones((4, 4)), 3)
    x = DecodeInput(words=["a", "b", "c"], F_cls=np.ones((4, 4)), F=np.ones((3, 3)), root=1, faithful=True,
                    discourse=True)
    assert decode("left-chain", x).tolist() == [0, 1, NO_HEAD]
    assert decode("cle", x).tolist()[-1] == NO_HEAD
    word = DecodeInput(words=["a", "b", "c"], root=1, faithful=True)
    assert decode("left-chain", word).tolist() == [0, 1, 2]


def test_no_head_is_scored_wrong():
    s = DependencyScore()
    s.add([0, 1, NO_HEAD], [0, 1, 2])
    s.add([0, 1], [0, NO_HEAD])                            # a gold EDU with no head (SciDTB parent -1)
    assert (s.correct, s.correct_undirected, s.total) == (3, 3, 5)
