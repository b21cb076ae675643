"""Three-column dependency files (``.dp``): ``form<TAB>POS<TAB>head`` per line, blank line between
sentences, head 0 = ROOT (the ``nltk.parse.DependencyGraph`` 3-column format of the NLTK WSJ sample)."""
from __future__ import annotations

import logging
import os
from pathlib import Path

from pmask.corpora._util import check_heads, corpus_files, read_utf8
from pmask.corpora.sentence import Sentence
from pmask.errors import CorpusError

logger = logging.getLogger(__name__)


def _read_file(path: Path) -> list[Sentence]:
    out: list[Sentence] = []
    rows: list[tuple[int, list[str]]] = []

    def flush() -> None:
        if not rows:
            return
        sid = f"{path.stem}#{len(out) + 1}"
        for number, cols in rows:
            if len(cols) != 3:
                raise CorpusError(
                    f"{path}:{number}: expected 3 tab-separated columns, found {len(cols)} (sentence {sid})")
            if not cols[2].isdigit():
                raise CorpusError(f"{path}:{number}: HEAD {cols[2]!r} is not an integer (sentence {sid})")
        heads = [int(c[2]) for _, c in rows]
        lines = [number for number, _ in rows]
        check_heads(heads, path, lines, sid)
        out.append(Sentence(id=sid, words=[c[0] for _, c in rows], xpos=[c[1] for _, c in rows],
                            heads=heads, path=str(path), line=lines[0]))
        rows.clear()

    for number, line in enumerate(read_utf8(path).splitlines(), start=1):
        if line.strip():
            rows.append((number, line.rstrip("\r").split("\t")))
        else:
            flush()
    flush()
    return out


def read_dep3(path: str | os.PathLike, *, max_words: int | None = None,
              limit: int | None = None) -> list[Sentence]:
    """Read one ``.dp`` file or a directory of them (sorted); id = ``"<file stem>#<k>"``.

    Sentence.words/xpos/heads come from the three columns; longer than ``max_words`` → skipped;
    ``limit`` caps the number returned.
    """
    path = Path(path)
    if not path.exists():
        raise CorpusError(f"{path}: no such file or directory")
    out: list[Sentence] = []
    total = 0
    for file in corpus_files(path, ".dp"):
        sents = _read_file(file)
        total += len(sents)
        for s in sents:
            if max_words is not None and len(s) > max_words:
                continue
            out.append(s)
            if limit is not None and len(out) >= limit:
                return out
    if total == 0:
        raise CorpusError(f"{path}:1: no sentences in file")
    logger.info("read %d of %d sentences from %s", len(out), total, path)
    return out
