"""Helpers shared by the readers: standard input, UTF-8 decoding with line numbers, the
``max_words``/``limit`` selection, what a line of each format looks like (format sniffing) and
head validation."""
from __future__ import annotations

import hashlib
import logging
import re
import sys
from collections.abc import Iterable
from pathlib import Path

from pmask.common.errors import CorpusError, PmaskError
from pmask.common.labels import plural
from pmask.common.units import unit_of
from pmask.corpora.head_maps import find_cycle
from pmask.corpora.sentence import Sentence

logger = logging.getLogger(__name__)

#: The corpus name that means standard input.
STDIN = "-"
STDIN_NAME = "<stdin>"   # how standard input is named in messages and Sentence.path


def is_stdin(path: object) -> bool:
    """True when ``path`` is ``-`` (read the corpus from standard input)."""
    return str(path) == STDIN


def display_name(path: object) -> str:
    """``path`` as messages name it (``<stdin>`` for ``-``)."""
    return STDIN_NAME if is_stdin(path) else str(path)


def corpus_files(path: Path, suffix: str) -> list[Path]:
    """``path`` itself (or ``-``), or the sorted ``*suffix`` files of a directory (none there is an error)."""
    if is_stdin(path):
        return [path]
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix == suffix and p.is_file())
        if not files:
            raise CorpusError(f"{path}: directory holds no {suffix} files")
        return files
    if not path.exists():
        raise CorpusError(f"{path}: no such file or directory")
    return [path]


def file_lines(text: str) -> list[str]:
    """``text``'s lines as a file has them: only ``\n`` (or ``\r\n``) ends one, so the other characters
    ``str.splitlines`` breaks at (U+2028, U+2029, U+0085, ``\x0b``, ``\x0c``, ``\x1c``-``\x1e``) stay in
    their line and line numbers match an editor's; a final newline starts no extra line."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


_stdin_digest: list[str] = []   # sha256 of what was read from standard input (meta.json records it)


def stdin_sha256() -> str | None:
    """The sha256 of the bytes read from standard input by the last reader (None before any read)."""
    return _stdin_digest[-1] if _stdin_digest else None


_stdin_kept: list[tuple[object, bytes]] = []   # (the stream, its bytes): a command reads its input more than once


def _read_bytes(path: Path) -> bytes:
    if is_stdin(path):
        if _stdin_kept and _stdin_kept[0][0] is sys.stdin:   # read already (the cost line, then the run)
            return _stdin_kept[0][1]
        stream = getattr(sys.stdin, "buffer", None)
        data = stream.read() if stream is not None else sys.stdin.read().encode("utf-8")
        _stdin_digest[:] = [hashlib.sha256(data).hexdigest()]
        _stdin_kept[:] = [(sys.stdin, data)]
        return data
    try:
        return path.read_bytes()
    except OSError as err:
        raise CorpusError(f"{path}: cannot read: {err.strerror or err}") from None


def read_utf8(path: Path) -> str:
    """The whole file (or standard input for ``-``) as text; a missing file or non-UTF-8 bytes
    give a CorpusError naming the line."""
    data = _read_bytes(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise CorpusError(
            f"{display_name(path)}:{line}: not UTF-8 (byte 0x{data[err.start]:02x} at offset {err.start})"
        ) from None
    return text[1:] if text.startswith("\ufeff") else text  # a byte-order mark is not content


def check_selection(max_words: int | None, limit: int | None) -> None:
    """Raise PmaskError unless ``max_words`` and ``limit`` are None or at least 1."""
    for name, value, what in (("max_words", max_words, "words per sentence"),
                              ("limit", limit, "sentences")):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise PmaskError(f"{name} must be a whole number of {what} >= 1, not {value!r}")


def select(sentences: Iterable[Sentence], *, max_words: int | None, limit: int | None,
           name: str) -> list[Sentence]:
    """The sentences of at most ``max_words`` words, the first ``limit`` of them (after that filter).

    Lazy: reading stops at the ``limit``-th kept sentence, so later sentences are neither parsed
    nor checked. Logs how many were kept.

    Args:
        sentences: a reader's sentences, in file order.
        max_words: skip longer sentences (None: keep all).
        limit: stop after this many kept sentences (None: read to the end).
        name: the source, for the log line.

    Returns:
        The kept sentences, in order.

    Example:
        >>> sents = [Sentence(id=f"s{k}", words=["w"] * n) for k, n in enumerate([3, 12, 5, 4], start=1)]
        >>> [s.id for s in select(sents, max_words=10, limit=2, name="x")]
        ['s1', 's3']
    """
    check_selection(max_words, limit)
    out: list[Sentence] = []
    seen = 0
    for sent in sentences:
        seen += 1
        if max_words is not None and len(sent) > max_words:
            continue
        out.append(sent)
        if limit is not None and len(out) >= limit:
            break
    stopped = limit is not None and len(out) >= limit
    record = unit_of(out).record   # "sentence", or "document" for documents of EDUs
    if len(out) == seen:
        logger.info("read %s from %s", plural(len(out), record), name)
    elif stopped:   # reading stops at the limit: `seen` is how far it got, not the corpus's size
        logger.info("read %d of the first %s from %s (stopped at the limit of %d)", len(out),
                    plural(seen, record), name, limit)
    else:
        logger.info("read %d of %s from %s", len(out), plural(seen, record), name)
    return out


def first_content_line(text: str) -> str | None:
    """The first line of ``text`` that is neither blank nor a ``#`` comment (what format sniffing reads)."""
    return next((line for line in file_lines(text) if line.strip() and not line.startswith("#")), None)


_CONLLU_LINE = re.compile(r"[0-9]+(?:[-.][0-9]+)?\t[^\t]*(?:\t[^\t]*){8}")


def looks_like_conllu(line: str) -> bool:
    """Whether a content line is a CoNLL-U word line: 10 tab-separated columns, a numeric ID."""
    return bool(_CONLLU_LINE.fullmatch(line))


def looks_like_dep3(line: str) -> bool:
    """Whether a content line is a 3-column dependency line: 3 tab-separated columns, numeric last."""
    cols = line.split("\t")
    return len(cols) == 3 and cols[2].isdigit()


def looks_like_ptb(line: str) -> bool:
    """Whether a content line opens a bracketed tree (starts with ``(``)."""
    return line.lstrip().startswith("(")


def check_heads(heads: list[int], path: object, word_lines: list[int], sent_id: str) -> None:
    """Raise CorpusError unless ``heads`` (1-based, 0 = ROOT) is a tree: in range, a root, no cycle.

    ``word_lines[k-1]`` is the file line of word k; messages read
    ``path:line: what is wrong (sentence ID)``.
    """
    n = len(heads)
    for k, h in enumerate(heads, start=1):
        if not 0 <= h <= n:
            raise CorpusError(
                f"{path}:{word_lines[k - 1]}: HEAD {h} of word {k} is out of range 0..{n} (sentence {sent_id})")
    if 0 not in heads:
        raise CorpusError(f"{path}:{word_lines[0]}: no word is attached to ROOT (HEAD 0) (sentence {sent_id})")
    cycle = find_cycle(heads)
    if cycle is not None:
        raise CorpusError(
            f"{path}:{word_lines[min(cycle.words) - 1]}: heads form a cycle through words "
            f"{' '.join(map(str, sorted(cycle.words)))} (sentence {sent_id})")
