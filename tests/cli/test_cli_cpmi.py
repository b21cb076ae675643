"""CPMI from the command line: stores (resumable, context recorded), parse from a store with any symmetrisation,
--faithful's defaults, and one-line refusals before any model work."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pmask.cli import main
from pmask.perturb.testing import make_tiny_bert

DATA = Path(__file__).resolve().parents[1] / "data" / "mini.conllu"


def run(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def no_head_dir(tmp_path_factory) -> Path:
    return make_tiny_bert(tmp_path_factory.mktemp("no_head") / "tiny-encoder", mlm_head=False)


def test_store_records_context_and_parses_with_every_symmetrization(tiny_bert_dir, tmp_path, capsys):
    store = tmp_path / "st"
    code, _, err = run(capsys, "impact", DATA, "--model", tiny_bert_dir, "--metric", "cpmi", "--context", "6",
                       "--layers", "-1", "-o", store, "-q")
    assert code == 0, err
    manifest = json.loads((store / "manifest.json").read_text())
    assert (manifest["metric"], manifest["subword"], manifest["context"]) == ("cpmi", "sum", 6)
    code, _, err = run(capsys, "impact", DATA, "--model", tiny_bert_dir, "--metric", "cpmi", "--context", "6",
                       "--layers", "-1", "-o", store, "--resume", "-q")
    assert code == 0, err   # a complete store resumes with nothing to do
    code, _, err = run(capsys, "impact", DATA, "--model", tiny_bert_dir, "--metric", "cpmi", "--context", "0",
                       "--layers", "-1", "-o", store, "--resume", "-q")
    assert code == 1 and "context" in err and err.count("\n") == 1
    for decoder in ("mst", "mst-projective", "eisner"):
        for extra in ([], ["--symmetrize", "sum", "--absolute"], ["--symmetrize", "tril"]):
            out = tmp_path / f"{decoder}{len(extra)}.conllu"
            code, _, err = run(capsys, "parse", store, "--decoder", decoder, "-o", out, "-q", *extra)
            assert code == 0, err
            meta = json.loads(Path(f"{out}.meta.json").read_text())
            assert meta["impact"]["context"] == 6 and meta["settings"]["absolute"] == ("--absolute" in extra)


def test_faithful_cpmi_defaults(tiny_bert_dir, tmp_path, capsys):
    out = tmp_path / "f.conllu"
    code, _, err = run(capsys, "parse", DATA, "--model", tiny_bert_dir, "--metric", "cpmi", "--faithful",
                       "--context", "4", "-o", out, "-q")
    assert code == 0, err
    meta = json.loads(Path(f"{out}.meta.json").read_text())
    assert meta["settings"]["decoder"] == "mst-projective" and meta["settings"]["symmetrize"] == "sum"
    assert meta["impact"]["tokenize"] == "words-ptb" and meta["impact"]["context"] == 4
    code, out, err = run(capsys, "eval", out, "--gold", DATA, "--hoover-uuas", "-q")
    assert code == 0, err
    assert "Hoover et al. UUAS (non-PUNCT words, gold spanning tree): pooled" in out


@pytest.mark.parametrize("args, message", [
    (["--metric", "cpmi", "--faithful", "--decoder", "eisner"], "mst-projective or mst"),
    (["--metric", "cpmi", "--subword", "avg"], "--subword sum only"),
    (["--metric", "cpmi", "--tokenize", "text", "--context", "3"], "--context"),
])
def test_one_line_refusals(tiny_bert_dir, tmp_path, capsys, args, message):
    code, out, err = run(capsys, "parse", DATA, "--model", tiny_bert_dir, *args, "-o", tmp_path / "x.conllu", "-q")
    assert code == 1 and out == "" and message in err and err.count("\n") == 1
    assert not (tmp_path / "x.conllu").exists()


def test_no_mlm_head_and_stdin_context_are_refused(no_head_dir, tmp_path, capsys, monkeypatch):
    code, _, err = run(capsys, "parse", DATA, "--model", no_head_dir, "--metric", "cpmi", "-o", tmp_path / "x.conllu",
                       "-q")
    assert code == 1 and err.count("\n") == 1 and "masked-LM head" in err and "cpmi" in err
    import io
    monkeypatch.setattr("sys.stdin", io.StringIO("a b c\n"))
    code, _, err = run(capsys, "parse", "-", "--metric", "cpmi", "--context", "5", "--root", "free",
                       "-o", tmp_path / "y.conllu", "-q")
    assert code == 1 and err.count("\n") == 1 and "standard input" in err


def test_unknown_symmetrization_is_a_usage_error(tmp_path, capsys):
    code, out, err = run(capsys, "parse", DATA, "--symmetrize", "mean", "-o", tmp_path / "x.conllu")
    assert code == 2 and out == "" and "invalid choice: 'mean'" in err


def test_python_api_faithful_cpmi(tiny_bert_dir):
    import pmask
    from pmask.corpora import read_corpus

    sents = read_corpus(DATA)
    parsed = pmask.parse(sents, model=str(tiny_bert_dir), metric="cpmi", faithful=True, context=4)
    assert len(parsed) == len(sents) and all(p.heads is not None for p in parsed)
    again = pmask.parse(sents, model=str(tiny_bert_dir), metric="cpmi", faithful=True, context=4,
                        decoder="mst-projective", symmetrize="sum")
    assert [p.heads.tolist() for p in parsed] == [p.heads.tolist() for p in again]
