"""Plain text: one sentence per line, whitespace-tokenised."""
from __future__ import annotations

import logging
import os
from pathlib import Path

from pmask.corpora._util import read_utf8
from pmask.corpora.sentence import Sentence
from pmask.errors import CorpusError

logger = logging.getLogger(__name__)


def read_text(path: str | os.PathLike, *, max_words: int | None = None,
              limit: int | None = None) -> list[Sentence]:
    """One Sentence per non-blank line; id = its 1-based line number (as str), text = the stripped line.

    Lines longer than ``max_words`` words are skipped; ``limit`` caps the number returned.
    """
    path = Path(path)
    text = read_utf8(path)
    out: list[Sentence] = []
    n = 0
    for number, line in enumerate(text.splitlines(), start=1):
        words = line.split()
        if not words:
            continue
        n += 1
        if max_words is not None and len(words) > max_words:
            continue
        out.append(Sentence(id=str(number), words=words, text=line.strip(), path=str(path), line=number))
        if limit is not None and len(out) >= limit:
            break
    if n == 0:
        raise CorpusError(f"{path}:1: no sentences in file (every line is blank)")
    logger.info("read %d sentences from %s", len(out), path)
    return out
