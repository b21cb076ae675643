"""The README's Python examples run as written (with a tiny local model in place of bert-base-uncased)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PUD = ROOT / ".." / "shared" / "data" / "ud" / "UD_English-PUD" / "en_pud-ud-test.conllu"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), flags=re.S)


def test_readme_has_the_api_example():
    blocks = python_blocks()
    assert blocks and "from pmask.perturb.models.load import load_model" in blocks[0]


def test_readme_python_runs(tiny_bert_dir, tmp_path, monkeypatch):
    if not PUD.is_file():
        pytest.skip("shared PUD data not present")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "en_pud-ud-test.conllu").symlink_to(PUD.resolve())
    code = "\n".join(python_blocks()).replace('"bert-base-uncased"', repr(str(tiny_bert_dir)))
    code = code.replace("    ...  #", "    pass  #")
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)
    from pmask.corpora import read_corpus

    pred = read_corpus(tmp_path / "pred.conllu")
    gold = namespace["sents"]
    assert [p.words for p in pred] == [g.words for g in gold]
    pairs = [(int(ph), int(gh)) for p, g in zip(pred, gold) for ph, gh in zip(p.heads, g.heads)]
    score = namespace["score"]
    assert score.total == len(pairs) == sum(len(g.words) for g in gold)
    assert score.correct == sum(ph == gh for ph, gh in pairs)
    assert score.uas == pytest.approx(100 * score.correct / score.total)
    assert [p.root for p in pred] == [g.root for g in gold]  # the gold root is given, as the README says
    assert namespace["tree"].leaves() == namespace["sents"][-1].words


def test_readme_main_job_runs_offline_with_the_bundled_model(tmp_path, monkeypatch, capsys):
    """The main job's first commands, as written, right after set-up: no model named, nothing downloaded."""
    import shlex

    from pmask.cli import main
    from pmask.perturb.models import bundled

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## The main job", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.S)[1]
    commands = [shlex.split(line) for line in block.splitlines() if line.startswith("pmask ")]
    assert [c[1] for c in commands] == ["parse", "eval"] and not any("--model" in c for c in commands)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(bundled, "_announced", set())
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "data").symlink_to(ROOT / "tests" / "data")
    for command in commands:
        assert main(command[1:]) == 0, capsys.readouterr().err
    out, err = capsys.readouterr()
    assert "no model given: using the bundled pmask-tiny-en" in err
    assert "pmask-tiny-en" in out and "right-chain" in out   # the eval table: the model's row and the baselines
