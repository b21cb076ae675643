"""``read_corpus``: pick the reader from the file name, the content of standard input, or a format name."""
from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

from pmask.common.errors import CorpusError
from pmask.corpora._util import display_name, is_stdin, read_utf8, select
from pmask.corpora.formats import FORMATS, detect_format, sniff_format, unsniffable
from pmask.corpora.sentence import Sentence

logger = logging.getLogger(__name__)

__all__ = ["FORMATS", "detect_format", "read_corpus", "warn_if_misread_as_text"]


def warn_if_misread_as_text(path: Path, why: str) -> None:
    """Log one warning when a file about to be read as plain text looks like a format of one row per word
    (:attr:`~pmask.corpora.formats.CorpusFormat.looks_as_text`: CoNLL-U, whose first line that is not a
    comment has 10 tab-separated columns): every row would become a "sentence"."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 16).decode("utf-8", errors="replace")
    except OSError:
        return   # the reader reports it
    looks = FORMATS[sniff_format(head)]
    if looks.looks_as_text:
        logger.warning("%s: read as plain text (%s), but it looks like %s: each row would be read as a sentence; "
                       "read it with format %s", path, why, looks.looks_as_text, looks.name)


def _read_stdin_auto(max_words: int | None, limit: int | None, filter_punct: bool) -> list[Sentence]:
    """Standard input in the format its content looks like (:func:`pmask.corpora._util.sniff_format`)."""
    name = display_name("-")

    def sentences() -> Iterator[Sentence]:  # reads only once select() has checked max_words and limit
        text = read_utf8(Path("-"))
        looks = FORMATS[sniff_format(text)]
        if looks.fallback and (unseen := unsniffable()):   # said, not silent: their content looks like text
            logger.info("%s: read as %s; standard input in format %s cannot be told from its content: give "
                        "--format %s", name, looks.name, " or ".join(f.name for f in unseen),
                        " or ".join(f.name for f in unseen))
        yield from looks.parse(text, name, filter_punct)

    return select(sentences(), max_words=max_words, limit=limit, name=name)


def read_corpus(path: str | os.PathLike, fmt: str = "auto", *, max_words: int | None = None,
                limit: int | None = None, filter_punct: bool = True) -> list[Sentence]:
    """Read a corpus file, folder or standard input in any supported format.

    Args:
        path: a file, a folder of ``.mrg``/``.dp`` files, or ``-`` for standard input.
        fmt: "auto" or a format of :data:`pmask.corpora.formats.FORMATS` ("conllu", "ptb", "dep3", "scidtb",
            "edus", "text").
            "auto" goes by the suffix (:func:`detect_format`); for ``-`` by the content: CoNLL-U
            when the first line that is not a ``#`` comment has 10 tab-separated columns, dep3
            for 3 columns ending in a number, PTB when it starts with ``(``, else text.
        max_words: skip sentences of more than this many words, in every format (PTB counts
            words after its punctuation filter); None keeps all.
        limit: return at most this many sentences, counted after the ``max_words`` filter.
        filter_punct: PTB only: WSJ10-style removal of punctuation, traces and $/# (see
            :mod:`pmask.corpora.ptb`).

    Returns:
        The sentences, in corpus order.

    Raises:
        CorpusError: a missing or malformed file, or an unknown format.
        PmaskError: ``max_words`` or ``limit`` below 1.

    Example:
        >>> len(read_corpus("en_pud-ud-test.conllu", limit=10))   # at most 10
        3
        >>> sents = read_corpus("-", "text")   # one sentence per line of standard input  # doctest: +SKIP
    """
    if fmt not in ("auto", *FORMATS):
        raise CorpusError(f"{display_name(path)}: unknown corpus format {fmt!r} (expected auto, {', '.join(FORMATS)})")
    if is_stdin(path):
        if fmt == "auto":
            return _read_stdin_auto(max_words, limit, filter_punct)
    elif not Path(path).exists():
        raise CorpusError(f"{path}: no such file or directory")
    elif fmt == "auto":
        fmt = detect_format(path)
        if FORMATS[fmt].fallback and Path(path).is_file():
            warn_if_misread_as_text(Path(path), f"from its suffix {Path(path).suffix or '(none)'!r}")
    elif FORMATS[fmt].fallback and Path(path).is_file():
        warn_if_misread_as_text(Path(path), "format text was asked for")
    return FORMATS[fmt].read(path, max_words, limit, filter_punct)
