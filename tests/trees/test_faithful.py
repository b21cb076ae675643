"""The paper's (authors') decoding: step-by-step loop references, head for head.

``F_cls`` is (n+1)x(n+1) with [CLS] at index 0 and column 0 = 0; heads[k-1] = head of word k.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pmask.cli import main
from pmask.common.errors import DecodeError
from pmask.perturb.models.load import load_model
from pmask.trees import decode_dependencies, faithful_cle, faithful_eisner
from pmask.trees.faithful import authors_softmax
from pmask.trees.validate import tree_errors

from authors_reference import authors_heads, ref_faithful_cle_best, ref_faithful_eisner, ref_softmax


def random_cls(rng, n, integer=False):
    F = rng.integers(0, 4, size=(n + 1, n + 1)).astype(float) if integer else rng.gamma(2.0, size=(n + 1, n + 1))
    F[:, 0] = 0.0
    np.fill_diagonal(F, 0.0)
    return F


# ------------------------------------------------------------------- tests

def pmask_softmax(F: list[list[float]]) -> list[list[float]]:
    return authors_softmax(np.array(F)).tolist()


@pytest.mark.parametrize("integer", [False, True], ids=["real", "integer-ties"])
def test_faithful_eisner_matches_reference(integer):
    """Head for head against their pipeline. With tied integer impacts the tie-breaking is what is
    compared, so both sides get the same softmax bits (np.exp and a numpy row sum may differ from
    math.exp and a Python sum in the last bit on some CPUs, which could turn a tie into a
    preference); the softmax itself is compared with a tolerance."""
    rng = np.random.default_rng(2020)
    for n in list(range(1, 9)) + [15, 23]:
        for _ in range(6 if n < 15 else 2):
            F = random_cls(rng, n, integer)
            root = int(rng.integers(1, n + 1))
            got = faithful_eisner(F, root)
            np.testing.assert_allclose(authors_softmax(F), ref_softmax(F.tolist()), rtol=1e-12, atol=0)
            softmax = pmask_softmax if integer else ref_softmax
            assert got.tolist() == ref_faithful_eisner(F.tolist(), root, softmax=softmax)
            assert not tree_errors(got, projective=True)


def test_faithful_eisner_all_zero_ties():
    for n in (1, 2, 5, 8):
        F = np.zeros((n + 1, n + 1))
        assert faithful_eisner(F, 1).tolist() == ref_faithful_eisner(F.tolist(), 1)
        assert faithful_eisner(F, n).tolist() == ref_faithful_eisner(F.tolist(), n)


def test_faithful_eisner_is_multiroot_like_theirs():
    # their decoder does not limit ROOT to one child: a strong [CLS] row makes several roots
    F = np.zeros((4, 4))
    F[1:, 0] = 0.0
    F[0, 1:] = 50.0  # impact of words on [CLS] -> after the transposed softmax, ROOT arcs win
    heads = faithful_eisner(F, 2)
    assert heads.tolist() == ref_faithful_eisner(F.tolist(), 2)


@pytest.mark.parametrize("integer", [False, True], ids=["real", "integer-ties"])
def test_faithful_cle_maximises_product(integer):
    rng = np.random.default_rng(41)
    for n in range(1, 7):
        for _ in range(8 if n < 6 else 3):
            F = random_cls(rng, n, integer)
            root = int(rng.integers(1, n + 1))
            got = faithful_cle(F, root)
            H, prod = ref_faithful_cle_best(F, root)   # every tree over n words and its product
            nx_prod = prod[(faithful_cle(F, root, backend="networkx") == H).all(axis=1)]
            best = prod.max()
            assert not tree_errors(got, single_root=True, root=root)
            got_prod = prod[(got == H).all(axis=1)][0]
            assert got_prod == pytest.approx(best, rel=1e-9)
            assert nx_prod[0] == pytest.approx(best, rel=1e-9)
            if (prod >= best * (1 - 1e-9)).sum() == 1 and best > 0:
                assert got.tolist() == H[prod.argmax()].tolist()


def log_product(F_cls, root, heads) -> float:
    """Sum of log F[dep, head] over the tree after the authors' masking (ROOT->root scores 1)."""
    F = np.array(F_cls, dtype=float)
    F[root, :] = 0
    F[root, 0] = 1
    return float(np.log(F[np.arange(1, len(F)), heads]).sum())


def test_faithful_cle_root_is_only_child_and_backends_agree():
    """Too long for brute force: the two exact Edmonds backends must reach the same product."""
    rng = np.random.default_rng(5)
    F = random_cls(rng, 12)
    for r in (1, 6, 12):
        heads = faithful_cle(F, r)
        assert heads[r - 1] == 0 and (heads == 0).sum() == 1
        other = faithful_cle(F, r, backend="networkx")
        assert log_product(F, r, heads) == pytest.approx(log_product(F, r, other), rel=1e-12)


def test_faithful_cle_zero_rows_fall_back():
    F = np.zeros((5, 5))            # every arc has score 0: no positive tree exists
    heads = faithful_cle(F, 2)
    assert not tree_errors(heads, single_root=True, root=2)


def test_faithful_errors():
    F = np.random.default_rng(0).random((4, 4))
    with pytest.raises(ValueError, match="gold root"):
        faithful_eisner(F, None)
    with pytest.raises(ValueError):
        faithful_cle(F, 4)
    with pytest.raises(DecodeError, match="non-negative"):
        faithful_cle(F - 2.0, 1)
    bad = F.copy()
    bad[1, 2] = np.nan
    with pytest.raises(DecodeError):
        faithful_eisner(bad, 1)
    with pytest.raises(DecodeError):
        faithful_cle(np.zeros((3, 4)), 1)
    with pytest.raises(DecodeError, match="gold root"):
        decode_dependencies("eisner", 3, F_cls=F, faithful=True)
    with pytest.raises(DecodeError, match="F_cls"):
        decode_dependencies("cle", 3, root=1, faithful=True)


def test_input_not_modified():
    F = random_cls(np.random.default_rng(1), 6)
    keep = F.copy()
    faithful_eisner(F, 2), faithful_cle(F, 3)
    assert (keep == F).all()


# ------------------------------------------- pmask parse --faithful against the authors' pipeline followed step by step

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
