"""The treebanks of a ``pmask bench`` study: :func:`find_treebanks` reads every file or folder
given (files of every corpus format that holds gold trees, :data:`pmask.corpora.FORMATS`: CoNLL-U,
PTB ``.mrg``, ``.dp``; a folder of such files, or a folder that is one corpus, such as PTB's) into
:class:`Treebank` objects, each named and given its language (:func:`language_of`).
"""
from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from pmask.common.errors import PmaskError
from pmask.common.labels import either
from pmask.corpora import FORMATS
from pmask.corpora.corpus_spec import CorpusSpec
from pmask.perturb.store import CorpusInfo

__all__ = ["Treebank", "find_treebanks", "language_of"]

_UD_FOLDER = re.compile(r"^UD_(?P<lang>[A-Za-z_]+)-")


@dataclass
class Treebank:
    """One input treebank: ``name`` = file stem (folder name for PTB folders), its sentences."""

    name: str
    language: str
    path: Path
    fmt: str
    sentences: list[Any]

    @property
    def task(self) -> str:
        """The task of its gold trees (its format's)."""
        return str(FORMATS[self.fmt].task)

    @functools.cached_property
    def fingerprint(self) -> dict[str, str | None]:
        """``{"sha256": of the file (None for a folder), "sentences_sha256": of the sentences read
        (ids and words, in order)}``, as stores record them."""
        info = CorpusInfo.of(self.sentences, self.path)
        return {"sha256": info.sha256, "sentences_sha256": info.sentences_sha256}


def language_of(path: Path, sentences: Sequence[Any], fmt: str | None = None) -> str:
    """Language of a treebank: its format's, if the format has one (PTB brackets, ``fmt="ptb"`` or a
    ``.mrg`` file: ``English (PTB)``), else from a ``UD_<Language>-<name>`` folder, else ``# language``-style
    metadata, else the file stem's prefix (``de_pud-ud-test`` -> ``de``)."""
    named = [FORMATS[fmt]] if fmt is not None and fmt in FORMATS else []
    for entry in named + [f for f in FORMATS.values() if f.holds(path)]:
        if entry.language:   # a folder's name ("combined") names no language
            return entry.language
    for part in (path.parent.name, path.name):
        m = _UD_FOLDER.match(part)
        if m:
            return m.group("lang").replace("_", " ")
    for sent in sentences[:1]:
        meta = getattr(getattr(sent, "source", None), "metadata", None) or {}
        for key in ("language", "lang"):
            if meta.get(key):
                return str(meta[key])
    return path.stem.split("_")[0]


def _treebank_files(path: Path) -> list[tuple[Path, str]]:
    """The treebanks ``path`` names, each with its format: a file of a format that holds trees; in a folder,
    every file (at any depth) of such a format read file by file (CoNLL-U), else the folder itself as one
    corpus of a format read by folder (PTB's ``.mrg`` files, then ``.dp``)."""
    formats = [f for f in FORMATS.values() if f.task]
    suffixes = [suffix for f in formats for suffix in f.suffixes]
    if not path.exists():
        raise PmaskError(f"{path}: no such file or directory")
    if path.is_dir():
        by_file = [f for f in formats if not f.folder_suffix]
        found = sorted((p, f.name) for p in path.rglob("*") if p.is_file() for f in by_file if f.holds(p))
        if found:
            return found
        for fmt in formats:
            if fmt.folder_suffix and any(path.rglob(f"*{fmt.folder_suffix}")):
                return [(path, fmt.name)]
        raise PmaskError(f"{path}: folder holds no {either(suffixes)} file")
    own = next((f for f in formats if f.holds(path)), None)
    if own is None:
        listed = ", ".join("/".join(f.suffixes) for f in formats)
        raise PmaskError(f"{path}: not a treebank (expected {listed}, or a folder of them)")
    return [(path, own.name)]


def find_treebanks(inputs: Sequence[str | os.PathLike], limit: int | None = None,
                   max_words: int | None = None) -> list[Treebank]:
    """Read every treebank named by ``inputs`` (files or folders): of each, the first ``limit``
    sentences of at most ``max_words`` words (PTB: the WSJ10 count, without punctuation and traces).

    Names are file stems (a repeated stem gets its parent folder's name prepended).
    """
    files = [item for path in inputs for item in _treebank_files(Path(path))]
    seen: dict[str, int] = {}
    out = []
    for path, fmt in dict.fromkeys(files):
        name = path.stem if path.is_file() else path.name
        if name in seen:
            name = f"{path.parent.name}-{name}"
        seen[name] = seen.get(name, 0) + 1
        sentences = CorpusSpec(path, fmt, limit=limit, max_words=max_words).read()
        if not sentences:
            raise PmaskError(f"{path}: no sentences")
        out.append(Treebank(name, language_of(path, sentences, fmt), path, fmt, sentences))
    if not out:
        raise PmaskError("no treebank given")
    return out
