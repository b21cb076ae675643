"""Finding a bench's treebanks: a PTB folder is English, whatever its folder is called."""
from __future__ import annotations

import shutil
from pathlib import Path

from pmask.eval.studies.bench.treebanks import find_treebanks

DATA = Path(__file__).resolve().parents[3] / "data"


def test_a_ptb_folder_is_english_not_its_folder_name(tmp_path):
    folder = tmp_path / "combined"
    folder.mkdir()
    shutil.copy(DATA / "mini.mrg", folder / "wsj_0001.mrg")
    treebank, = find_treebanks([folder])
    assert treebank.name == "combined" and treebank.language == "English (PTB)"
    assert find_treebanks([DATA / "mini.conllu"])[0].language == "mini"   # CoNLL-U: as before
