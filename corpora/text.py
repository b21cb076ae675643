"""Plain text: one sentence per line, words separated by whitespace (no annotation)."""
from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from pmask.common.errors import CorpusError
from pmask.corpora._util import display_name, file_lines, read_utf8, select
from pmask.corpora.sentence import Sentence


def parse_text(text: str, name: str) -> Iterator[Sentence]:
    """One Sentence per non-blank line of ``text`` (lines end at ``\n`` only: :func:`file_lines`): id = its
    1-based line number (as str), words = the line split on whitespace, text = the stripped line. ``name``
    stands for the source in messages and ``Sentence.path``. Raises CorpusError when every line is blank."""
    found = False
    for number, line in enumerate(file_lines(text), start=1):
        words = line.split()
        if words:
            found = True
            yield Sentence(id=str(number), words=words, text=line.strip(), path=name, line=number)
    if not found:
        raise CorpusError(f"{name}:1: no sentences in file (every line is blank)")


def read_text(path: str | os.PathLike, *, max_words: int | None = None,
              limit: int | None = None) -> list[Sentence]:
    """Read a plain-text corpus (UTF-8), or standard input for ``-``: one sentence per line.

    Args:
        path: the file, or ``-``.
        max_words: skip lines of more than this many words (None keeps all).
        limit: return at most this many sentences, counted after the ``max_words`` filter.

    Returns:
        Sentences with id = the 1-based line number, no heads; blank lines are skipped.

    Raises:
        CorpusError: unreadable, not UTF-8, or no sentence at all.
        PmaskError: ``max_words`` or ``limit`` below 1.

    Example:
        >>> [s.words for s in read_text("tests/data/mini.txt", limit=1)]
        [['The', 'cat', 'sat', '.']]
    """
    def sentences() -> Iterator[Sentence]:
        yield from parse_text(read_utf8(Path(path)), display_name(path))

    return select(sentences(), max_words=max_words, limit=limit, name=display_name(path))
