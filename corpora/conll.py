"""CoNLL-U reading (through the ``conllu`` library) and write-back of predicted heads.

Words are the *syntactic words* (integer IDs); multiword-token ranges (``5-6``) and empty nodes
(``8.1``) are kept in the source but are not words.  Each sentence keeps its raw lines in
``meta["lines"]`` so :func:`write_conllu` can reproduce everything it does not change byte for byte.

Write-back conventions (``write_conllu``):

* HEAD of every syntactic word ← the predicted head; DEPREL ← ``deprel`` (``"_"``, or ``"dep"`` with
  ``"root"`` for words attached to 0).
* The enhanced graph is dropped as a whole: DEPS ← ``_`` on every word, and the empty nodes
  (``8.1``), which exist only in that graph, are left out. The gold's enhanced graph would
  contradict the predicted tree, and an empty node is not valid CoNLL-U without its DEPS.
* Comments, multiword-token lines and every other column are written as read.
* A sentence whose predicted heads are ``None`` (skipped) is written with HEAD, DEPREL and DEPS
  all ``_`` so the output has the same sentences as the input.
* Lines are written with ``\\n`` endings (``\\r\\n`` input is normalised), one blank line after each
  sentence; a regular file is written atomically (:func:`pmask.common.files.write_output`).
"""
from __future__ import annotations

import logging
import operator
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import conllu
from conllu.exceptions import ParseException

from pmask.common.errors import CorpusError
from pmask.common.files import write_output
from pmask.common.units import WORD, unit_entry, unit_marked
from pmask.corpora._util import check_heads, display_name, read_utf8, select
from pmask.corpora.sentence import NO_HEAD, Sentence

if TYPE_CHECKING:
    import numpy as np

logger = logging.getLogger(__name__)

_ID_WORD = re.compile(r"[1-9][0-9]*")
_ID_RANGE = re.compile(r"[1-9][0-9]*-[1-9][0-9]*")
_ID_EMPTY = re.compile(r"[0-9]+\.[1-9][0-9]*")
_HEAD, _DEPREL, _DEPS = 6, 7, 8  # 0-based column indices


def _blocks(text: str) -> Iterable[tuple[int, list[str]]]:
    """(first line number, lines) for each blank-line-separated block."""
    block: list[str] = []
    start = 0
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        if line.strip():
            if not block:
                start = number
            block.append(line)
        elif block:
            yield start, block
            block = []
    if block:
        yield start, block


def _comment(lines: list[str], name: str) -> str | None:
    for line in lines:
        if line.startswith("#"):
            key, sep, value = line[1:].partition("=")
            if sep and key.strip() == name:
                return value.strip()
    return None


def _sent_id(lines: list[str], index: int) -> str:
    return _comment(lines, "sent_id") or str(index)


#: The comment that marks a sentence whose rows are elementary discourse units (pmask's own: one EDU per row).
UNITS_COMMENT = "# units = "   # + the unit's noun, for the units other than words (UnitEntry.marked)


def _parse_block(path: str, start: int, lines: list[str], index: int) -> Sentence:
    sid = _sent_id(lines, index)
    words: list[str] = []
    heads_raw: list[str] = []
    word_lines: list[int] = []
    for offset, line in enumerate(lines):
        number = start + offset
        if line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) != 10:
            raise CorpusError(
                f"{path}:{number}: expected 10 tab-separated columns, found {len(cols)} (sentence {sid})")
        tid = cols[0]
        if _ID_WORD.fullmatch(tid):
            if int(tid) != len(words) + 1:
                raise CorpusError(
                    f"{path}:{number}: word ID {tid} out of sequence, expected {len(words) + 1} (sentence {sid})")
            head = cols[_HEAD]
            if head != "_" and not re.fullmatch(r"[0-9]+", head):
                raise CorpusError(f"{path}:{number}: HEAD {head!r} is not an integer (sentence {sid})")
            words.append(cols[1])
            heads_raw.append(head)
            word_lines.append(number)
        elif not (_ID_RANGE.fullmatch(tid) or _ID_EMPTY.fullmatch(tid)):
            raise CorpusError(f"{path}:{number}: bad ID {tid!r} (sentence {sid})")
    if not words:
        raise CorpusError(f"{path}:{start}: sentence has no words (sentence {sid})")

    try:
        parsed = conllu.parse("\n".join(lines) + "\n\n")
    except ParseException as err:
        msg = " ".join(str(err).split())
        raise CorpusError(f"{path}:{start}: {msg} (sentence {sid})") from None
    if len(parsed) != 1:
        raise CorpusError(f"{path}:{start}: could not parse sentence (sentence {sid})")
    tokens = parsed[0]
    syntactic = [t for t in tokens if isinstance(t["id"], int)]

    marked = _comment(lines, "units")   # a record of other units than words says so (documents of EDUs)
    unit = (unit_marked(marked) if marked else None) or WORD
    if all(h == "_" for h in heads_raw):
        heads = None
    else:
        missing = [k for k, h in enumerate(heads_raw) if h == "_"]
        if missing and not unit.discourse:   # EDUs: '_' is NO_HEAD (the last EDU, which --faithful leaves out)
            raise CorpusError(
                f"{path}:{word_lines[missing[0]]}: HEAD '_' but other words have heads (sentence {sid})")
        heads = [NO_HEAD if h == "_" else int(h) for h in heads_raw]
        check_heads([0 if h == NO_HEAD else h for h in heads], path, word_lines, sid)

    def column(name: str) -> list[str] | None:
        values = [t[name] if t[name] not in (None, "") else "_" for t in syntactic]
        return None if all(v == "_" for v in values) else values

    return Sentence(
        id=sid,
        words=words,
        heads=heads,
        deprels=column("deprel") if heads is not None else None,
        upos=column("upos"),
        xpos=column("xpos"),
        text=tokens.metadata.get("text"),
        source=tokens,
        path=str(path),
        line=start,
        meta={"lines": list(lines), "word_lines": word_lines},
        unit=unit.name,
    )


def parse_conllu(text: str, name: str) -> Iterator[Sentence]:
    """The sentences of CoNLL-U ``text``, one at a time (each is checked as it is reached).

    ``name`` stands for the source in messages and ``Sentence.path``; ``Sentence.line`` is the
    1-based line of the sentence's first line. Raises CorpusError (``name:line: what (sentence
    ID)``) for malformed input, or when the text has no sentence at all.
    """
    n = 0
    for n, (start, lines) in enumerate(_blocks(text), start=1):
        yield _parse_block(name, start, lines, n)
    if n == 0:
        raise CorpusError(f"{name}:1: no sentences in file")


def read_conllu(path: str | os.PathLike, *, max_words: int | None = None,
                limit: int | None = None) -> list[Sentence]:
    """Read a CoNLL-U file (UTF-8), or standard input for ``-``.

    Args:
        path: the file, or ``-``.
        max_words: skip sentences of more than this many syntactic words (a generic length
            filter, as for every format; None keeps all).
        limit: return at most this many sentences, counted after the ``max_words`` filter;
            reading stops there, so later sentences are not checked.

    Returns:
        Sentences with id = ``# sent_id`` or the 1-based sentence index, heads = gold HEADs or
        None when the file has none (all ``_``, e.g. raw input to parse).

    Raises:
        CorpusError: malformed input, naming ``file:line`` and the sentence.
        PmaskError: ``max_words`` or ``limit`` below 1.

    Example:
        >>> [s.id for s in read_conllu("tests/data/mini.conllu", limit=2)]
        ['s1', 's2']
    """
    def sentences() -> Iterator[Sentence]:  # reads only once select() asks for a sentence
        yield from parse_conllu(read_utf8(Path(path)), display_name(path))

    return select(sentences(), max_words=max_words, limit=limit, name=display_name(path))


def _source_lines(sent: Sentence) -> list[str]:
    """The sentence's original CoNLL-U lines, or minimal ones built from its fields."""
    if sent.meta.get("lines"):
        return list(sent.meta["lines"])
    if sent.source is not None and hasattr(sent.source, "serialize"):
        return [ln for ln in sent.source.serialize().split("\n") if ln.strip()]
    lines = [f"# sent_id = {sent.id}", f"# text = {sent.text or ' '.join(sent.words)}"]
    ends = sent.meta.get("sentence_end") or [False] * len(sent.words)
    if unit_entry(sent.unit).marked:
        lines.append(f"{UNITS_COMMENT}{unit_entry(sent.unit).noun}")
    for k, word in enumerate(sent.words, start=1):
        upos = sent.upos[k - 1] if sent.upos else "_"
        xpos = sent.xpos[k - 1] if sent.xpos else "_"
        misc = "SentEnd=Yes" if ends[k - 1] else "_"
        lines.append("\t".join([str(k), word, "_", upos, xpos, "_", "_", "_", "_", misc]))
    return lines


def _checked_heads(sent: Sentence, heads: Sequence[int] | np.ndarray) -> list[int]:
    """Predicted heads as ints in 0..n or NO_HEAD (numpy integers accepted), else CorpusError."""
    n = len(sent.words)
    if len(heads) != n:
        raise CorpusError(f"{sent.where()}: {len(heads)} predicted heads for {n} words")
    out = []
    for k, h in enumerate(heads, start=1):
        try:
            value = operator.index(h) if not isinstance(h, bool) else None
        except TypeError:
            value = None
        if value is None or not (0 <= value <= n or value == NO_HEAD):
            raise CorpusError(f"{sent.where()}: predicted head {h!r} of word {k} is not an integer in 0..{n}")
        out.append(value)
    return out


def format_conllu(sent: Sentence, heads: Sequence[int] | np.ndarray | None, *, deprel: str = "_") -> str:
    """One sentence as CoNLL-U text (ending in a blank line) with HEAD/DEPREL replaced and the enhanced
    graph (DEPS, empty nodes) dropped."""
    if deprel not in ("_", "dep"):
        raise ValueError(f"deprel must be '_' or 'dep', not {deprel!r}")
    n = len(sent.words)
    if heads is not None:
        heads = _checked_heads(sent, heads)
    out = []
    k = 0
    for line in _source_lines(sent):
        cols = line.split("\t")
        if not line.startswith("#") and len(cols) == 10 and _ID_EMPTY.fullmatch(cols[0]):
            continue   # an empty node belongs to the enhanced graph, which the prediction replaces
        if not line.startswith("#") and len(cols) == 10 and _ID_WORD.fullmatch(cols[0]):
            if heads is None:
                cols[_HEAD] = cols[_DEPREL] = "_"
            else:
                h = heads[k]
                cols[_HEAD] = "_" if h == NO_HEAD else str(h)
                cols[_DEPREL] = "_" if deprel == "_" or h == NO_HEAD else ("root" if h == 0 else "dep")
            cols[_DEPS] = "_"
            k += 1
            line = "\t".join(cols)
        out.append(line)
    if k != n:
        raise CorpusError(f"{sent.where()}: source has {k} syntactic words, sentence has {n}")
    return "\n".join(out) + "\n\n"


def write_conllu(sentences: Sequence[Sentence], heads_list: Sequence[Sequence[int] | np.ndarray | None],
                 path: str | os.PathLike, *, deprel: str = "_") -> None:
    """Write ``sentences`` with predicted ``heads_list`` (one per sentence, None = skipped) to ``path``.

    See the module docstring for exactly what changes. ``path`` may be ``-`` (standard output), a
    device, FIFO or symlink (see :func:`pmask.common.files.write_output`); a regular file is replaced
    atomically. Raises OutputError when ``path`` cannot be written.
    """
    if len(sentences) != len(heads_list):
        raise ValueError(f"{len(sentences)} sentences but {len(heads_list)} head lists")
    text = "".join(format_conllu(s, h, deprel=deprel) for s, h in zip(sentences, heads_list))
    write_output(path, text)
    logger.debug("wrote %d sentences to %s", len(sentences), path)   # the caller prints the summary
