"""Documents of EDUs at the command line and in the API: parse (SciDTB and CoNLL-U out, --faithful), a store,
eval against SciDTB gold, the .edus format; the trees follow from the matrices (decoded here again)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import pmask
from pmask.cli import main
from pmask.corpora import read_corpus
from pmask.corpora.scidtb import authors_documents
from pmask.perturb.engine.runner import impact_matrices
from pmask.perturb.models.load import load_model
from pmask.perturb.testing import make_tiny_bert
from pmask.trees.registry import DecodeInput, decode

DATA = Path(__file__).resolve().parents[1] / "data"
WORDS = ["we", "present", "a", "parser", "that", "reads", "discourse", "it", "is", "fast", "and", "small", "masked",
         "models", "know", "syntax", "show", "trees", "follow", "first", "second", "claim", "with", "reason", "note",
         "last", "word", ".", ",", "<", ">", "s"]


def faithful_discourse(name, F_cls, root):
    """Decoder ``name``'s discourse mode (Wu et al.'s pipeline: its entry's ``discourse``) on one document."""
    n = F_cls.shape[0] - 1
    return decode(name, DecodeInput(words=[""] * n, F_cls=F_cls, root=root, faithful=True, discourse=True))


@pytest.fixture(scope="module")
def doc_model(tmp_path_factory):
    return make_tiny_bert(tmp_path_factory.mktemp("docs"), WORDS, max_positions=64, seed=1)


def run(args: list, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_parse_faithful_equals_their_pipeline_on_the_matrices(doc_model, tmp_path, capsys):
    docs = read_corpus(DATA / "scidtb")
    lm = load_model(str(doc_model), device="cpu")
    F = [m[0] for m in impact_matrices(lm, authors_documents(docs), layers=[-1], metric="dist", subword="avg",
                                       tokenize="words", include_cls=True)]
    for decoder in ("eisner", "cle", "left-chain"):
        out = tmp_path / f"{decoder}.conllu"
        code, _, err = run(["parse", DATA / "scidtb", "--model", doc_model, "--decoder", decoder, "--faithful",
                            "-o", out], capsys)
        assert code == 0, err
        got = [s.heads for s in read_corpus(out)]
        want = [faithful_discourse(decoder, f, d.root).tolist() for d, f in zip(docs, F)]
        assert got == want
        assert all(h[-1] == -1 for h in got)


def test_parse_to_scidtb_folder_and_eval(doc_model, tmp_path, capsys):
    code, _, err = run(["parse", DATA / "scidtb", "--model", doc_model, "-o", tmp_path / "pred"], capsys)
    assert code == 0, err
    files = sorted(p.name for p in (tmp_path / "pred").iterdir())
    assert files == ["A-1.edu.txt.dep", "A-2.edu.txt.dep", "A-3.edu.txt.dep"]
    meta = json.loads((tmp_path / "pred.meta.json").read_text())
    assert meta["impact"]["metric"] == "dist"
    code, out, err = run(["eval", tmp_path / "pred", "--gold", DATA / "scidtb", "--json", tmp_path / "s.json"], capsys)
    assert code == 0, err
    assert "eisner" in out


def test_store_then_parse_from_it(doc_model, tmp_path, capsys):
    store = tmp_path / "store"
    code, _, err = run(["impact", DATA / "scidtb", "--model", doc_model, "-o", store, "--layers", "all"], capsys)
    assert code == 0, err
    code, _, err = run(["parse", store, "--decoder", "cle", "-o", tmp_path / "p.conllu"], capsys)
    assert code == 0, err
    assert [len(s.heads) for s in read_corpus(tmp_path / "p.conllu")] == [4, 3, 5]


def test_edus_file_and_api(doc_model, tmp_path, capsys):
    code, _, err = run(["parse", DATA / "docs.edus", "--model", doc_model, "--root", "free", "-o",
                        tmp_path / "d.conllu"], capsys)
    assert code == 0, err
    cli = [s.heads for s in read_corpus(tmp_path / "d.conllu")]
    api = [list(p.heads) for p in pmask.parse(read_corpus(DATA / "docs.edus"), model=str(doc_model), root="free")]
    assert cli == api and [len(h) for h in cli] == [3, 2]


def test_faithful_refusals(doc_model, tmp_path, capsys):
    code, _, err = run(["parse", DATA / "scidtb", "--model", doc_model, "--decoder", "random-eisner", "--faithful",
                        "-o", tmp_path / "x.conllu"], capsys)
    assert code != 0 and "Wu et al.'s discourse pipeline" in err
    code, _, err = run(["parse", DATA / "scidtb", "--decoder", "left-chain", "-o", tmp_path / "x.txt"], capsys)
    assert code == 1 and "as CoNLL-U" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.txt").exists()


def test_zero_matrices_reproduce_the_issue_figures_on_scidtb():
    gold = DATA.parents[1] / ".." / "shared" / "data" / "scidtb" / "test" / "gold"
    if not gold.is_dir():
        pytest.skip("shared SciDTB data not present")
    from pmask.eval.scores.dependency_score import DependencyScore
    docs = read_corpus(gold)
    scores = {d: DependencyScore() for d in ("eisner", "cle")}
    for doc in docs:
        for name, score in scores.items():
            score.add(faithful_discourse(name, np.zeros((len(doc) + 1,) * 2), doc.root), doc.heads)
    assert (scores["eisner"].correct, scores["eisner"].correct_undirected, scores["eisner"].total) == (948, 1071, 2118)
    assert scores["cle"].correct == 153    # 44.76 / 50.57 and 7.22, the issue's figures
