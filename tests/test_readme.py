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
    assert blocks and "from pmask.perturb import load_model, impact_matrices" in blocks[0]


def test_readme_python_runs(tiny_bert_dir, tmp_path, monkeypatch):
    if not PUD.is_file():
        pytest.skip("shared PUD data not present")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "en_pud-ud-test.conllu").symlink_to(PUD.resolve())
    code = "\n".join(python_blocks()).replace('"bert-base-uncased"', repr(str(tiny_bert_dir)))
    code = code.replace("    ...  #", "    pass  #")
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)
    assert (tmp_path / "pred.conllu").is_file()
    assert 0.0 <= namespace["score"].uas <= 100.0
    assert namespace["tree"].leaves() == namespace["sents"][-1].words
