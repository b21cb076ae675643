"""``pmask.perturb.testing``: data files are arguments, found in the shared folder only beside a source checkout."""
from __future__ import annotations

from pathlib import Path

import pytest

from pmask.common.errors import PmaskError
from pmask.perturb import testing
from pmask.perturb.testing import zoo

ROOT = Path(__file__).resolve().parents[2]
MINI = ROOT / "tests" / "data" / "mini.conllu"


@pytest.fixture
def installed(monkeypatch, tmp_path):
    """As if pmask were installed from a wheel: no pyproject.toml beside the package, no PMASK_SHARED."""
    monkeypatch.delenv("PMASK_SHARED", raising=False)
    monkeypatch.setattr(testing, "_PACKAGE_ROOT", tmp_path / "site-packages" / "pmask")


def test_a_source_checkout_finds_its_shared_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("PMASK_SHARED", raising=False)
    assert testing.shared_dir() == ROOT.parent / "shared"
    monkeypatch.setenv("PMASK_SHARED", str(tmp_path))
    assert testing.shared_dir() == tmp_path


def test_an_installed_package_asks_for_the_vocabulary(installed, tmp_path):
    assert testing.shared_dir() is None
    with pytest.raises(PmaskError, match=r"bert-base-uncased's vocabulary not found \(an installed pmask has no "
                                         r"\.\./shared\): pass vocab_file=PATH, or set PMASK_SHARED"):
        testing.make_random_bert_base(tmp_path / "m", save_weights=False)
    with pytest.raises(PmaskError, match="no such vocabulary file"):
        testing.make_random_bert_base(tmp_path / "m", tmp_path / "missing.txt", save_weights=False)


def test_a_shared_folder_without_the_file_names_where_it_looked(monkeypatch, tmp_path):
    monkeypatch.setenv("PMASK_SHARED", str(tmp_path))
    with pytest.raises(PmaskError, match=f"not found at {tmp_path}/models/bert-base-uncased-vocab/vocab.txt"):
        testing.make_random_bert_base(tmp_path / "m", save_weights=False)


def test_tokenizer_training_texts_come_from_an_argument_or_fall_back(installed):
    assert zoo.training_texts() == [list(s) for s in testing.TINY_SENTENCES]
    texts = zoo.training_texts(limit=2, corpus=MINI)
    assert texts[0] == ["I", "'m", "here", ",", "too", "."] and len(texts) == 2


def test_tiny_models_are_built_without_a_progress_bar(tmp_path, capfd):
    testing.make_tiny_bert(tmp_path / "tiny")
    out, err = capfd.readouterr()
    assert "Writing model shards" not in out + err and (tmp_path / "tiny" / "config.json").is_file()
