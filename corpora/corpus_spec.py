"""What to read: :class:`CorpusSpec`, a corpus path with its format and filters (torch-free).

Example:
    >>> CorpusSpec("pud.conllu", limit=5).limit
    5
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pmask.common.errors import PmaskError, SettingError
from pmask.corpora.read import detect_format, read_corpus
from pmask.corpora.sentence import Sentence


@dataclass(frozen=True)
class CorpusSpec:
    """A corpus to read: ``path``, ``format`` (see :data:`pmask.corpora.formats.CORPUS_FORMATS`) and filters."""

    path: Path
    format: str = "auto"
    limit: int | None = None
    max_words: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", Path(self.path))

    def read(self, limit: int | None = None) -> list[Sentence]:
        """The sentences (``limit`` overrides the spec's own); path ``-`` reads standard input."""
        if str(self.path) != "-" and not self.path.exists():
            raise PmaskError(f"{self.path}: no such file or directory")
        sentences = read_corpus(self.path, self.format, max_words=self.max_words,
                                limit=self.limit if limit is None else limit)
        if not sentences and self.max_words is not None:
            raise SettingError(f"{self.path}: no sentence has at most {self.max_words} words ({{max_words}})")
        return sentences

    def resolved_format(self) -> str:
        """The format the corpus is read in: ``format``, or for "auto" the one its name implies
        (standard input and missing paths stay "auto")."""
        if self.format != "auto" or str(self.path) == "-" or not self.path.exists():
            return self.format
        return detect_format(self.path)

    def record(self) -> dict[str, Any]:
        """How the sentences are selected, as stores record it: ``{"format", "limit", "max_words"}``.

        Example:
            >>> CorpusSpec("x.conllu", limit=5).record()
            {'format': 'auto', 'limit': 5, 'max_words': None}
        """
        return {"format": self.resolved_format(), "limit": self.limit, "max_words": self.max_words}
