"""Plain documents of elementary discourse units (``.edus``): one EDU per line, a blank line between documents.

The format a user writes by hand for their own text. UTF-8; each line is one unit (outer whitespace
removed, inner spaces kept); one or more blank lines end a document. A document's first line may
be ``# doc_id = NAME``; no other comment syntax exists, so an EDU may start with ``#``. Without a
name a document's id is its 1-based number. There are no gold heads (parse with ``--root free``).

A sentence-per-line file is the same format with coarser units: read it with ``--format edus``
and each line (a sentence, a paragraph, any span) is one unit, each blank-line block one document.

Example:
    >>> docs = list(parse_edus("# doc_id = a\\nWe study X\\nbecause it matters .\\n\\nOne\\nTwo\\n", "x.edus"))
    >>> [(d.id, d.words, d.unit) for d in docs]
    [('a', ['We study X', 'because it matters .'], 'edu'), ('2', ['One', 'Two'], 'edu')]
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from pmask.common.errors import CorpusError
from pmask.corpora._util import display_name, file_lines, looks_like_conllu, looks_like_dep3, read_utf8, select
from pmask.corpora.sentence import Sentence

SUFFIX = ".edus"
_DOC_ID = re.compile(r"#\s*doc_id\s*=\s*(.*)")


def _document(block: list[tuple[int, str]], name: str, number: int) -> Sentence:
    doc = str(number)
    match = _DOC_ID.fullmatch(block[0][1].strip())
    if match:
        doc = match.group(1).strip() or doc
        block = block[1:]
    if not block:
        raise CorpusError(f"{name}: document {doc} has a name and no EDU")
    if len(block) == 1:
        raise CorpusError(f"{name}:{block[0][0]}: document {doc} has one EDU; a discourse tree needs at least two "
                          f"(leave it out)")
    return Sentence(id=doc, words=[" ".join(text.split()) for _, text in block], text=None, path=name,
                    line=block[0][0], unit="edu", meta={"word_lines": [k for k, _ in block]})


def _refuse_word_rows(lines: list[str], name: str) -> None:
    """Refuse a file whose first line that is not a ``#`` comment is a word row of CoNLL-U or of a 3-column
    dependency file: read as EDUs, each row (and each comment) would be one, and the trees nonsense."""
    number, line = next(((k, line) for k, line in enumerate(lines, start=1)
                         if line.strip() and not line.lstrip().startswith("#")), (0, ""))
    kind = ("CoNLL-U (10 tab-separated columns)", "conllu") if looks_like_conllu(line) else \
        ("a 3-column dependency file", "dep3") if looks_like_dep3(line) else None
    if kind is not None:
        raise CorpusError(f"{name}:{number}: read as EDUs (one per line), but it looks like {kind[0]}: each word row "
                          f"would be an EDU; read it with format {kind[1]}")


def parse_edus(text: str, name: str) -> Iterator[Sentence]:
    """The documents of ``.edus`` text (``name`` in messages and ``Sentence.path``).

    Raises:
        CorpusError: a document of one EDU, no document at all, or a file of one word per row (CoNLL-U or
            3-column dependencies), whose every row would be read as an EDU.
    """
    lines = file_lines(text)
    _refuse_word_rows(lines, name)
    block: list[tuple[int, str]] = []
    count = 0
    for number, line in enumerate(lines + [""], start=1):   # a final blank line ends the last one
        if line.strip():
            block.append((number, line))
        elif block:
            count += 1
            yield _document(block, name, count)
            block = []
    if not count:
        raise CorpusError(f"{name}:1: no documents in file (every line is blank)")


def read_edus(path: str | os.PathLike, *, max_words: int | None = None, limit: int | None = None) -> list[Sentence]:
    """Read a ``.edus`` file (or standard input for ``-``): one EDU per line, blank line between documents.

    Args:
        path: the file, or ``-``.
        max_words: skip documents of more than this many EDUs (None keeps all).
        limit: return at most this many documents, counted after the ``max_words`` filter.

    Returns:
        One Sentence per document (``unit == "edu"``, no heads).

    Example:
        >>> [len(d) for d in read_edus("tests/data/docs.edus")]
        [3, 2]
    """
    def documents() -> Iterator[Sentence]:
        yield from parse_edus(read_utf8(Path(path)), display_name(path))

    return select(documents(), max_words=max_words, limit=limit, name=display_name(path))
