"""What to read: :class:`CorpusSpec`, a corpus path with its format and filters (torch-free).

Example:
    >>> CorpusSpec("pud.conllu", limit=5).limit
    5
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pmask.common.errors import PmaskError, SettingError
from pmask.corpora.read import read_corpus
from pmask.corpora.sentence import Sentence


@dataclass(frozen=True)
class CorpusSpec:
    """A corpus to read: ``path``, ``format`` (see ``pmask.common.options.CORPUS_FORMATS``) and filters."""

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
