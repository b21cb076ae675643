"""Helpers shared by the readers: UTF-8 decoding with line numbers, head validation, atomic writes."""
from __future__ import annotations

import os
from pathlib import Path

from pmask.errors import CorpusError
from pmask.files import atomic_write


def corpus_files(path: Path, suffix: str) -> list[Path]:
    """``path`` itself, or the sorted ``*suffix`` files of a directory (none there is an error)."""
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix == suffix and p.is_file())
        if not files:
            raise CorpusError(f"{path}: directory holds no {suffix} files")
        return files
    if not path.exists():
        raise CorpusError(f"{path}: no such file or directory")
    return [path]


def read_utf8(path: Path) -> str:
    """The whole file as text; a missing file or non-UTF-8 bytes give a CorpusError naming the line."""
    try:
        data = path.read_bytes()
    except OSError as err:
        raise CorpusError(f"{path}: cannot read: {err.strerror or err}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise CorpusError(
            f"{path}:{line}: not UTF-8 (byte 0x{data[err.start]:02x} at offset {err.start})"
        ) from None
    return text[1:] if text.startswith("\ufeff") else text  # a byte-order mark is not content


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
    # Follow each word's head chain; in a tree every chain reaches ROOT.
    state = [0] * (n + 1)  # 0 = unvisited, 1 = on the current chain, 2 = known to reach ROOT
    state[0] = 2
    for start in range(1, n + 1):
        chain = []
        k = start
        while state[k] == 0:
            state[k] = 1
            chain.append(k)
            k = heads[k - 1]
        if state[k] == 1:
            cycle = chain[chain.index(k):]
            raise CorpusError(
                f"{path}:{word_lines[min(cycle) - 1]}: heads form a cycle through words "
                f"{' '.join(map(str, sorted(cycle)))} (sentence {sent_id})")
        for j in chain:
            state[j] = 2


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8, as given) atomically; an OS failure becomes a one-line CorpusError."""
    try:
        atomic_write(path, text)
    except OSError as err:
        raise CorpusError(f"{path}: cannot write: {err.strerror or err}") from None
