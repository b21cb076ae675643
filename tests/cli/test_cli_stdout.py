"""Issue 27, item 2: standard output carries only a command's data; outputs that cannot go there are
refused before any work.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from pmask.cli import main

DATA = Path(__file__).resolve().parents[1] / "data"
CONLLU = DATA / "mini.conllu"   # 5 sentences
MRG = DATA / "mini.mrg"         # 4 trees


@pytest.fixture(scope="module")
def work(tmp_path_factory, tiny_bert_dir) -> Path:
    """A folder with ``store`` (impacts of mini.conllu, layers 1-3) and ``pred.conllu`` (right-chain)."""
    folder = tmp_path_factory.mktemp("stdout")
    assert main(["impact", str(CONLLU), "--model", str(tiny_bert_dir), "--layers", "all", "-q",
                 "-o", str(folder / "store")]) == 0
    assert main(["parse", str(CONLLU), "--decoder", "right-chain", "-q", "-o", str(folder / "pred.conllu")]) == 0
    return folder


def run(capsys, work: Path, model: Path, argv: list[str]) -> tuple[int, str, str]:
    """``main`` on ``argv`` with ``{work}``/``{model}`` filled in; (exit code, stdout, stderr)."""
    code = main([a.format(work=work, model=model, conllu=CONLLU, mrg=MRG) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv, flags", [
    (["eval", "{work}/pred.conllu", "--gold", "{conllu}", "--json", "-", "--csv", "-"], "--json and --csv"),
    (["sweep", "{work}/store", "--json", "-", "--csv", "-"], "--json and --csv"),
])
def test_two_outputs_on_stdout_are_refused(argv, flags, work, capsys):
    code, out, err = run(capsys, work, Path(), argv)
    assert code == 1 and out == "" and err.startswith("pmask: error: ") and err.count("\n") == 1, err
    assert flags in err and "standard output" in err


def test_a_plot_on_stdout_is_refused_before_any_model_work(tmp_path, capsys, monkeypatch):
    from pmask.perturb import model_spec

    monkeypatch.setattr(model_spec.ModelSpec, "load", lambda self: pytest.fail("the model was loaded"))
    code = main(["sweep", str(CONLLU), "--model", str(tmp_path), "--plot", "-"])
    out, err = capsys.readouterr()
    assert code == 1 and out == "" and err.startswith("pmask: error: -: ") and err.count("\n") == 1, err
    assert ".png" in err
