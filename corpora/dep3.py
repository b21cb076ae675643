"""Three-column dependency files (``.dp``): ``form<TAB>POS<TAB>head`` per line, blank line between
sentences, head 0 = ROOT (the ``nltk.parse.DependencyGraph`` 3-column format of the NLTK WSJ sample)."""
from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from pmask.common.errors import CorpusError
from pmask.corpora._util import check_heads, corpus_files, display_name, file_lines, is_stdin, read_utf8, select
from pmask.corpora.sentence import Sentence


def parse_dep3(text: str, name: str, stem: str) -> Iterator[Sentence]:
    """The sentences of one ``.dp`` text; ids are ``"<stem>#<k>"``, ``name`` is used in messages."""
    rows: list[tuple[int, list[str]]] = []
    count = 0

    def sentence() -> Sentence:
        sid = f"{stem}#{count}"
        for number, cols in rows:
            if len(cols) != 3:
                raise CorpusError(
                    f"{name}:{number}: expected 3 tab-separated columns, found {len(cols)} (sentence {sid})")
            if not cols[2].isdigit():
                raise CorpusError(f"{name}:{number}: HEAD {cols[2]!r} is not an integer (sentence {sid})")
        heads = [int(c[2]) for _, c in rows]
        lines = [number for number, _ in rows]
        check_heads(heads, name, lines, sid)
        return Sentence(id=sid, words=[c[0] for _, c in rows], xpos=[c[1] for _, c in rows],
                        heads=heads, path=name, line=lines[0])

    for number, line in enumerate(file_lines(text) + [""], start=1):  # a final blank line ends the last one
        if line.strip():
            rows.append((number, line.split("\t")))
        elif rows:
            count += 1
            yield sentence()
            rows.clear()


def read_dep3(path: str | os.PathLike, *, max_words: int | None = None,
              limit: int | None = None) -> list[Sentence]:
    """Read one ``.dp`` file, a directory of them (sorted by name), or standard input for ``-``.

    Args:
        path: the file, folder or ``-``.
        max_words: skip sentences of more than this many words (None keeps all).
        limit: return at most this many sentences, counted after the ``max_words`` filter.

    Returns:
        Sentences with id = ``"<file stem>#<k>"`` (``stdin#<k>`` for ``-``) and words/xpos/heads
        from the three columns.

    Raises:
        CorpusError: missing, malformed or empty input, naming ``file:line``.
        PmaskError: ``max_words`` or ``limit`` below 1.

    Example:
        >>> [s.id for s in read_dep3("tests/data/mini.dp", limit=1)]
        ['mini#1']
    """
    path = Path(path)

    def sentences() -> Iterator[Sentence]:
        found = False
        for file in corpus_files(path, ".dp"):
            for sent in parse_dep3(read_utf8(file), display_name(file), "stdin" if is_stdin(file) else file.stem):
                found = True
                yield sent
        if not found:
            raise CorpusError(f"{display_name(path)}:1: no sentences in file")

    return select(sentences(), max_words=max_words, limit=limit, name=display_name(path))
