"""``read_corpus``: pick the reader from the file name (or an explicit format name)."""
from __future__ import annotations

import os
from pathlib import Path

from pmask.corpora.conll import read_conllu
from pmask.corpora.dep3 import read_dep3
from pmask.corpora.ptb import read_ptb
from pmask.corpora.sentence import Sentence
from pmask.corpora.text import read_text
from pmask.errors import CorpusError

FORMATS = ("conllu", "ptb", "dep3", "text")
_SUFFIXES = {".conllu": "conllu", ".conll": "conllu", ".mrg": "ptb", ".dp": "dep3"}


def detect_format(path: str | os.PathLike) -> str:
    """'conllu' (.conllu/.conll), 'ptb' (.mrg or a directory of .mrg), 'dep3' (.dp or a directory of
    .dp), else 'text'."""
    path = Path(path)
    if path.is_dir():
        suffixes = {p.suffix for p in path.iterdir() if p.is_file()}
        if ".mrg" in suffixes:
            return "ptb"
        if ".dp" in suffixes:
            return "dep3"
        raise CorpusError(f"{path}: directory holds no .mrg or .dp files")
    return _SUFFIXES.get(path.suffix.lower(), "text")


def read_corpus(path: str | os.PathLike, fmt: str = "auto", *, max_words: int | None = None,
                limit: int | None = None, filter_punct: bool = True) -> list[Sentence]:
    """Read ``path`` as ``fmt`` ("auto", "conllu", "ptb", "dep3" or "text").

    ``max_words`` skips longer sentences, ``limit`` caps how many are returned (after that filter).
    ``filter_punct`` applies to PTB only (WSJ10-style removal of punctuation, traces and $/#, see
    :mod:`pmask.corpora.ptb`).  Raises CorpusError for a missing or malformed file.
    """
    if not Path(path).exists():
        raise CorpusError(f"{path}: no such file or directory")
    if fmt == "auto":
        fmt = detect_format(path)
    if fmt == "conllu":
        return read_conllu(path, max_words=max_words, limit=limit)
    if fmt == "ptb":
        return read_ptb(path, max_words=max_words, limit=limit, filter_punct=filter_punct)
    if fmt == "dep3":
        return read_dep3(path, max_words=max_words, limit=limit)
    if fmt == "text":
        return read_text(path, max_words=max_words, limit=limit)
    raise CorpusError(f"{path}: unknown corpus format {fmt!r} (expected auto, {', '.join(FORMATS)})")
