"""UAS/UUAS and bracket F1: golden values on hand-made fixtures, brute force, PYEVALB."""
from __future__ import annotations

import random
import sys
from pathlib import Path

import nltk
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pmask.corpora import read_conllu, read_dep3, read_ptb
from pmask.common.errors import DecodeError
from pmask.eval import BracketScore, DependencyScore, evalb_spans, punct_mask, sentence_spans
from pmask.eval.scores.dependency_score import length_bucket

DATA = Path(__file__).resolve().parents[1] / "data"
PTB_DIR = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "ptb-sample" / "combined"


def right_chain(n: int, root: int | None = None) -> list[int]:
    """Local reference: head of word i = i + 1, last word → 0, word ``root`` → 0 too."""
    heads = [i + 1 for i in range(1, n + 1)]
    heads[-1] = 0
    if root is not None:
        heads[root - 1] = 0
    return heads


def branching(words, right=True):
    if len(words) == 1:
        return words[0]
    if right:
        return nltk.Tree("X", [words[0], branching(words[1:], right)])
    return nltk.Tree("X", [branching(words[:-1], right), words[-1]])


def as_tree(words, right=True):
    t = branching(list(words), right)
    return t if isinstance(t, nltk.Tree) else nltk.Tree("X", [t])


# --------------------------------------------------------------------------- dependencies

@pytest.fixture(scope="module")
def mini():
    return read_conllu(DATA / "mini.conllu")


def score_mini(sents, exclude_punct=False):
    score = DependencyScore()
    for s in sents:
        score.add(right_chain(len(s), s.root), s.heads, deprels=s.deprels,
                  punct_mask=punct_mask(s) if exclude_punct else None, sent_id=s.id)
    return score


def test_uas_golden(mini):
    score = score_mini(mini)
    assert (score.correct, score.correct_undirected, score.total) == (9, 10, 18)
    assert score.uas == pytest.approx(50.0) and score.uuas == pytest.approx(100 * 10 / 18)
    assert [(p.id, p.n, p.correct, p.correct_undirected) for p in score.per_sentence] == [
        ("s1", 6, 3, 3), ("s2", 7, 3, 4), ("3", 2, 1, 1), ("s4", 1, 1, 1), ("s5", 2, 1, 1)]
    assert score.per_sentence[0].uas == pytest.approx(50.0)
    assert score.to_dict() == {"uas": pytest.approx(50.0), "uuas": pytest.approx(100 * 10 / 18), "correct": 9,
                               "correct_undirected": 10, "total": 18, "sentences": 5}
    assert score.by_length() == {
        "root": {"correct": 5, "total": 5, "accuracy": 100.0},
        "1": {"correct": 4, "total": 8, "accuracy": 50.0},
        "2": {"correct": 0, "total": 3, "accuracy": 0.0},
        "3": {"correct": 0, "total": 1, "accuracy": 0.0},
        "5": {"correct": 0, "total": 1, "accuracy": 0.0},
    }
    rel = score.by_relation()
    assert list(rel)[:2] == ["root", "punct"]
    assert rel["root"] == {"correct": 5, "total": 5, "accuracy": 100.0}
    assert rel["punct"] == {"correct": 1, "total": 4, "accuracy": 25.0}
    assert rel["nsubj"]["correct"] == 1 and rel["nsubj"]["total"] == 2
    assert sum(r["total"] for r in rel.values()) == 18


def test_uas_punct_excluded(mini):
    assert [punct_mask(s) for s in mini[:3]] == [
        [False, False, False, True, False, True], [False] * 6 + [True], [True, True]]
    score = score_mini(mini, exclude_punct=True)
    assert (score.correct, score.correct_undirected, score.total) == (7, 8, 13)
    assert score.per_sentence[2].n == 0 and score.per_sentence[2].uas == 0.0  # punctuation-only sentence
    assert "punct" not in score.by_relation()


def test_punct_mask_ptb_tags():
    sent = read_dep3(DATA / "mini.dp")[0]
    assert punct_mask(sent) == [False, False, False, True]
    from pmask.corpora import Sentence
    s = Sentence("x", list("abcdefgh"), xpos=["``", "-LRB-", "$", "#", "NN", "-NONE-", "!?", "PRP$"])
    assert punct_mask(s) == [True, True, True, True, False, False, True, False]
    assert punct_mask(Sentence("y", ["a", "b"])) == [False, False]


def test_dependency_score_is_additive(mini):
    whole = score_mini(mini)
    parts = [score_mini([s]) for s in mini]
    for total in (sum(parts, DependencyScore()), sum(parts), parts[0] + parts[1] + parts[2] + parts[3] + parts[4]):
        assert total.to_dict() == whole.to_dict()
        assert total.by_length() == whole.by_length() and total.by_relation() == whole.by_relation()
        assert [p.id for p in total.per_sentence] == [p.id for p in whole.per_sentence]
    acc = DependencyScore()
    for p in parts:
        acc += p
    assert acc.to_dict() == whole.to_dict()
    assert parts[0].total == 6  # the operands are not modified


def test_length_buckets():
    assert [length_bucket(k, h) for k, h in [(1, 0), (1, 2), (9, 4), (1, 7), (2, 12), (20, 9), (1, 13)]] == \
        ["root", "1", "5", "6-10", "6-10", ">10", ">10"]


def test_dependency_score_errors():
    score = DependencyScore()
    with pytest.raises(DecodeError, match="^sentence q: the predicted tree has 2 words but the gold sentence "
                                          "has 3: they are not the same sentence$"):
        score.add([0, 1], [0, 1, 1], sent_id="q")
    with pytest.raises(DecodeError, match="out of range"):
        score.add([0, 1, 4], [0, 1, 1])
    with pytest.raises(DecodeError, match="not an integer"):
        score.add([0, 1, 1.5], [0, 1, 1])
    with pytest.raises(DecodeError, match="no gold heads"):
        score.add([0], None)
    assert score.total == 0 and score.uas == 0.0


@st.composite
def trees(draw, max_n=12, n=None):
    """(n, heads) of a random tree (each word after the first in a random order gets an earlier head)."""
    n = draw(st.integers(1, max_n)) if n is None else n
    order = draw(st.permutations(list(range(1, n + 1))))
    heads = [0] * n
    for i, k in enumerate(order[1:], start=1):
        heads[k - 1] = order[draw(st.integers(0, i - 1))]
    return n, heads


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_uuas_is_undirected_edge_overlap(data):
    n, gold = data.draw(trees())
    pred = data.draw(st.lists(st.integers(0, n), min_size=n, max_size=n))
    s = DependencyScore()
    s.add(pred, gold)
    assert s.correct == sum(p == g for p, g in zip(pred, gold))
    gold_edges = {frozenset((k, h)) for k, h in enumerate(gold, 1)}
    pred_edges = {frozenset((k, h)) for k, h in enumerate(pred, 1)}
    assert s.correct_undirected == len(gold_edges & pred_edges)
    assert s.correct <= s.correct_undirected <= n


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_uuas_trees_are_symmetric(data):
    n, gold = data.draw(trees())
    _, pred = data.draw(trees(n=n))
    a, b = DependencyScore(), DependencyScore()
    a.add(pred, gold)
    b.add(gold, pred)
    assert a.correct_undirected == b.correct_undirected


# --------------------------------------------------------------------------- brackets

def test_brackets_golden():
    golds = read_ptb(DATA / "mini.mrg")
    score = BracketScore()
    for s in golds:
        score.add(as_tree(s.words), s.tree, sent_id=s.id)
    assert [round(p.f1, 4) for p in score.per_sentence] == [0.75, 1.0, 1.0, 1.0]
    assert score.f1_sentence == pytest.approx(93.75)
    assert (score.matched, score.gold_brackets, score.pred_brackets) == (8, 12, 9)
    assert score.precision == pytest.approx(800 / 9) and score.recall == pytest.approx(800 / 12)
    assert score.f1_corpus == pytest.approx(100 * 32 / 42)
    d = score.to_dict()
    assert {"f1_sentence", "f1_corpus", "precision", "recall", "sentences"} <= set(d)
    assert d["f1_sentence"] == pytest.approx(93.75) and d["sentences"] == 4


def test_span_conventions():
    t = nltk.Tree.fromstring("(S (NP (NP (DT a) (NN b))) (VP (V c) (NP (N d))))")
    assert sentence_spans(t) == {(0, 2), (2, 4)}
    assert evalb_spans(t) == {(0, 4), (0, 2), (2, 4), (3, 4)}  # NP over one preterminal counts, NP-NP once
    assert sentence_spans(nltk.Tree("X", ["w"])) == set() and evalb_spans(nltk.Tree("X", ["w"])) == {(0, 1)}
    unary_root = nltk.Tree("X", [nltk.Tree("X", ["a", "b", "c"])])
    assert sentence_spans(unary_root) == set()


def test_bracket_edge_cases():
    s = BracketScore()
    r = s.add(nltk.Tree("X", ["a", "b"]), nltk.Tree.fromstring("(S (NN a) (NN b))"))
    assert (r.precision, r.recall, r.f1) == (1.0, 1.0, 1.0)  # no spans on either side
    r = s.add(nltk.Tree.fromstring("(X (X a b) c)"), nltk.Tree.fromstring("(S (NN a) (NN b) (NN c))"))
    assert (r.precision, r.recall, r.f1) == (0.0, 1.0, 0.0)  # gold without spans: recall 1
    r = s.add(nltk.Tree.fromstring("(X a b c)"), nltk.Tree.fromstring("(S (NN a) (X (NN b) (NN c)))"))
    assert (r.precision, r.recall, r.f1) == (0.0, 0.0, 0.0)
    with pytest.raises(DecodeError, match="sentence z: predicted tree has 2 leaves, gold has 3"):
        s.add(nltk.Tree("X", ["a", "b"]), nltk.Tree("X", ["a", "b", "c"]), sent_id="z")


def test_deep_tree_no_recursion_limit():
    words = [f"w{i}" for i in range(3 * sys.getrecursionlimit())]
    left = as_tree(words[:200], right=False)  # the builder recurses; spans do not
    assert len(sentence_spans(left)) == 198
    deep = words[-1]
    for w in reversed(words[:-1]):
        deep = nltk.Tree("X", [w, deep])
    assert len(sentence_spans(deep)) == len(words) - 2


def on_lstm_f1(pred, gold) -> float:
    """Reference: the ON-LSTM / PRPN evaluation (get_brackets on nested lists), per sentence."""
    def to_list(t):
        if not isinstance(t, nltk.Tree):
            return t
        kids = [to_list(c) for c in t]
        return kids[0] if len(kids) == 1 else kids

    def get_brackets(tree, idx=0):
        brackets = set()
        if isinstance(tree, list):
            for node in tree:
                node_brac, next_idx = get_brackets(node, idx)
                if next_idx - idx > 1:
                    brackets.add((idx, next_idx))
                    brackets.update(node_brac)
                idx = next_idx
            return brackets, idx
        return brackets, idx + 1

    model_out, _ = get_brackets(to_list(pred))
    std_out, _ = get_brackets(to_list(gold))
    overlap = model_out & std_out
    prec = len(overlap) / (len(model_out) + 1e-8)
    reca = len(overlap) / (len(std_out) + 1e-8)
    if not std_out:
        reca = 1.0
        if not model_out:
            prec = 1.0
    return 2 * prec * reca / (prec + reca + 1e-8)


def random_tree(rng: random.Random, words: list[str]):
    if len(words) == 1:
        return nltk.Tree("T", [words[0]]) if rng.random() < 0.5 else words[0]
    k = rng.randint(1, len(words) - 1)
    parts = [random_tree(rng, words[:k]), random_tree(rng, words[k:])]
    if rng.random() < 0.3 and isinstance(parts[1], nltk.Tree) and len(words) - k > 1:
        parts = [parts[0], *parts[1]]  # flatten: n-ary nodes
    node = nltk.Tree("X", parts)
    return nltk.Tree("U", [node]) if rng.random() < 0.2 else node  # unary chains


def test_sentence_f1_matches_reference_implementation():
    rng = random.Random(0)
    for _ in range(300):
        words = [f"w{i}" for i in range(rng.randint(1, 12))]
        pred, gold = random_tree(rng, words), random_tree(rng, words)
        pred = pred if isinstance(pred, nltk.Tree) else nltk.Tree("X", [pred])
        gold = gold if isinstance(gold, nltk.Tree) else nltk.Tree("X", [gold])
        r = BracketScore().add(pred, gold)
        assert r.f1 == pytest.approx(on_lstm_f1(pred, gold), abs=1e-6)


def test_bracket_score_is_additive():
    golds = read_ptb(DATA / "mini.mrg")
    parts = []
    for s in golds:
        b = BracketScore()
        b.add(as_tree(s.words, right=False), s.tree, sent_id=s.id)
        parts.append(b)
    whole = BracketScore()
    for s in golds:
        whole.add(as_tree(s.words, right=False), s.tree, sent_id=s.id)
    for total in (sum(parts, BracketScore()), sum(parts)):
        assert total.to_dict() == pytest.approx(whole.to_dict())
        assert len(total.per_sentence) == 4
    acc = BracketScore()
    acc += parts[0]
    acc += parts[1]
    assert acc.sentences == 2 and parts[0].sentences == 1


# --------------------------------------------------------------------------- PYEVALB

def pyevalb_line(tree, root=True) -> str:
    """Unlabelled PYEVALB input: every label X, words under a (T w) preterminal, unary chains collapsed."""
    if not isinstance(tree, nltk.Tree):
        return f"(X (T {tree}))" if root else f"(T {tree})"
    if len(tree) == 1 and not isinstance(tree[0], nltk.Tree):
        return f"(X (T {tree[0]}))" if root else f"(T {tree[0]})"
    if len(tree) == 1:  # unary: same span as its child, keep one bracket
        child = tree[0]
        if len(child) == 1 and not isinstance(child[0], nltk.Tree):
            return f"(X (T {child[0]}))"
        return pyevalb_line(child, root)
    return "(X " + " ".join(pyevalb_line(c, root=False) for c in tree) + ")"


def perturb(tree, rng: random.Random):
    """Gold with some constituents removed (children spliced into the parent) and some grouped."""
    if not isinstance(tree, nltk.Tree) or (len(tree) == 1 and not isinstance(tree[0], nltk.Tree)):
        return tree
    kids = []
    for child in (perturb(c, rng) for c in tree):
        if isinstance(child, nltk.Tree) and len(child) > 1 and rng.random() < 0.3:
            kids.extend(child)
        else:
            kids.append(child)
    if len(kids) >= 3 and rng.random() < 0.3:
        kids = [nltk.Tree("G", kids[:2])] + kids[2:]
    return nltk.Tree(tree.label(), kids)


def test_corpus_figures_match_pyevalb():
    scorer = pytest.importorskip("PYEVALB.scorer")
    summary = pytest.importorskip("PYEVALB.summary")
    if not PTB_DIR.exists():
        pytest.skip(f"shared data absent: {PTB_DIR}")
    golds = read_ptb(PTB_DIR, max_words=10)
    rng = random.Random(1)
    predictors = {
        "right": lambda s: as_tree(s.words),
        "left": lambda s: as_tree(s.words, right=False),
        "perturbed": lambda s: perturb(s.tree, rng),
    }
    for name, predict in predictors.items():
        preds = [predict(s) for s in golds]
        ours = BracketScore()
        for p, s in zip(preds, golds):
            ours.add(p, s.tree)
        results = scorer.Scorer().score_corpus([pyevalb_line(s.tree) for s in golds],
                                               [pyevalb_line(p) for p in preds])
        assert all(r.state == 0 for r in results), name
        ref = summary.summary(results)
        assert ours.recall == pytest.approx(ref.bracket_recall, abs=1e-9), name
        assert ours.precision == pytest.approx(ref.bracket_prec, abs=1e-9), name
        assert ours.f1_corpus == pytest.approx(ref.bracker_fmeasure, abs=1e-9), name


def test_same_id_other_words_names_the_real_problem():
    from pmask.corpora import Sentence
    from pmask.common.errors import PmaskError
    from pmask.eval.scores.dependency_score import check_same_words

    gold = Sentence(id="s1", words="a b c".split(), heads=[0, 1, 1], path="g.conllu", line=4)
    check_same_words(["a", "b", "c"], gold, "store sentence s1")
    with pytest.raises(PmaskError) as err:
        check_same_words("x y".split(), gold, "store sentence s1")
    assert str(err.value) == ("store sentence s1 does not match gold g.conllu:4 (sentence s1): the words differ "
                              "(2 words 'x y' vs 3 words 'a b c')")
