"""Shared fixtures: tiny locally built masked LMs (random weights, built once per session)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# test helpers (authors_reference.py, brute_force.py, ...) and a few test modules that share
# fixtures with their neighbours are imported by bare name from every folder of the suite
for _folder in [Path(__file__).resolve().parent, *sorted(Path(__file__).resolve().parent.glob("*/**/"))]:
    if _folder.name not in ("data", "__pycache__"):
        sys.path.insert(0, str(_folder))

os.environ["HF_HUB_OFFLINE"] = "1"


@pytest.fixture(scope="session")
def tiny_bert_dir(tmp_path_factory):
    """Directory of a tiny random BertForMaskedLM + fast WordPiece tokenizer (max 64 tokens)."""
    from pmask.perturb.testing import make_tiny_bert

    os.environ["HF_HUB_OFFLINE"] = "1"
    return make_tiny_bert(tmp_path_factory.mktemp("tiny_bert"))


@pytest.fixture(scope="session")
def tiny_roberta_dir(tmp_path_factory):
    """Directory of a tiny random RobertaForMaskedLM + byte-level BPE tokenizer (max 64 tokens)."""
    from pmask.perturb.testing import make_tiny_roberta

    os.environ["HF_HUB_OFFLINE"] = "1"
    return make_tiny_roberta(tmp_path_factory.mktemp("tiny_roberta"))
