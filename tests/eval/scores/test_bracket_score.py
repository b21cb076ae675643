"""Bracket F1 (``BracketScore``): golden values on hand-made trees, span conventions, a reference
implementation of sentence F1, additivity, and corpus figures against PYEVALB."""
from __future__ import annotations

import random
import sys
from pathlib import Path

import nltk
import pytest

from pmask.common.errors import DecodeError
from pmask.corpora import read_ptb
from pmask.eval import BracketScore, evalb_spans, sentence_spans

DATA = Path(__file__).resolve().parents[2] / "data"
PTB_DIR = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "ptb-sample" / "combined"


def as_tree(words, right=True):
    t = branching(list(words), right)
    return t if isinstance(t, nltk.Tree) else nltk.Tree("X", [t])


def branching(words, right=True):
    if len(words) == 1:
        return words[0]
    if right:
        return nltk.Tree("X", [words[0], branching(words[1:], right)])
    return nltk.Tree("X", [branching(words[:-1], right), words[-1]])


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
