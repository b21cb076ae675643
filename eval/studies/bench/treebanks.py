"""The treebanks of a ``pmask bench`` study: :func:`find_treebanks` reads every file or folder
given (CoNLL-U files, PTB ``.mrg`` files or folders) into :class:`Treebank` objects, each named
and given its language (:func:`language_of`).
"""
from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from pmask.common.errors import PmaskError
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
        return "constituency" if self.fmt == "ptb" else "dependency"

    @functools.cached_property
    def fingerprint(self) -> dict[str, str | None]:
        """``{"sha256": of the file (None for a folder), "sentences_sha256": of the sentences read
        (ids and words, in order)}``, as stores record them."""
        info = CorpusInfo.of(self.sentences, self.path)
        return {"sha256": info.sha256, "sentences_sha256": info.sentences_sha256}


#: The language of a PTB treebank (``.mrg``): the Penn Treebank's Wall Street Journal is English.
PTB_LANGUAGE = "English (PTB)"


def language_of(path: Path, sentences: Sequence[Any], fmt: str | None = None) -> str:
    """Language of a treebank: ``English (PTB)`` for PTB brackets (``fmt="ptb"``, or a ``.mrg`` file),
    else from a ``UD_<Language>-<name>`` folder, else ``# language``-style metadata, else the file
    stem's prefix (``de_pud-ud-test`` -> ``de``)."""
    if fmt == "ptb" or path.suffix == ".mrg":   # a folder's name ("combined") names no language
        return PTB_LANGUAGE
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
    if not path.exists():
        raise PmaskError(f"{path}: no such file or directory")
    if path.is_dir():
        conllu = sorted([*path.rglob("*.conllu"), *path.rglob("*.conll")])
        if conllu:
            return [(p, "conllu") for p in conllu]
        if any(path.rglob("*.mrg")):
            return [(path, "ptb")]
        raise PmaskError(f"{path}: folder holds no .conllu or .mrg file")
    if path.suffix in (".conllu", ".conll"):
        return [(path, "conllu")]
    if path.suffix == ".mrg":
        return [(path, "ptb")]
    raise PmaskError(f"{path}: not a treebank (expected .conllu/.conll, .mrg, or a folder of them)")


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
