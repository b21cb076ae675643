"""A store's corpus read back: the sentences it holds, selected the way the store was made.

A store records the selection its sentences were read with (``manifest["corpus"]["selection"]``:
format, ``limit``, ``max_words``); its sentence positions count the sentences of that selection.
:func:`store_sentences` applies it, then any narrower selection the reader asks for, keeping each
sentence's store position. Stores written before the selection was recorded are read as before:
with the reader's own selection.

Example:
    >>> picked = store_sentences(CorpusSpec("store/"), read_manifest("store/"), held=range(12))  # doctest: +SKIP
    >>> picked.positions[:3], picked.selection.max_words                                    # doctest: +SKIP
    ([0, 1, 2], 15)
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Collection

from pmask.common.errors import SettingError
from pmask.corpora import Sentence
from pmask.corpora.corpus_spec import CorpusSpec


@dataclass
class StoreSentences:
    """The sentences read, their positions in the store, and the selection that gives them."""

    sentences: list[Sentence]
    positions: list[int]
    selection: CorpusSpec


def _same_path(a: Path, b: str | None) -> bool:
    if b is None:
        return False
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def _format(asked: str, recorded: str | None, path: Path, store: Path, is_recorded_file: bool) -> str:
    """The store's own format for its own corpus file; the reader's otherwise (another file)."""
    if not is_recorded_file or not recorded or recorded == "auto":
        return asked
    if asked not in ("auto", recorded):
        raise SettingError(f"{{format}} {asked} conflicts with the store {store}, which read {path} as {recorded}; "
                           f"leave {{format}} out to read the store")
    return recorded


def store_sentences(source: CorpusSpec, manifest: dict[str, Any], *, held: Collection[int],
                    corpus: str | os.PathLike | None = None) -> StoreSentences:
    """The sentences of the store ``source.path`` (manifest ``manifest``), selected as it was made.

    Args:
        source: the store's path with the reader's format and filters: ``max_words`` may narrow the
            store's own (never widen it), ``limit`` keeps the first N of what is left.
        manifest: the store's manifest.
        held: the corpus positions the store holds or skipped (the sentences read; in an unfinished
            store not always the first ones: a distributed run's ranks each finish their own).
        corpus: the corpus file to read (default: the one the manifest names).

    Returns:
        A :class:`StoreSentences`; ``positions[k]`` is the store position of ``sentences[k]``.

    Raises:
        SettingError: no corpus recorded and none given, a format or ``max_words`` that contradicts
            the store's selection, or a filter that leaves no sentence.
    """
    recorded_corpus = manifest.get("corpus", {})
    path = corpus or recorded_corpus.get("path")
    if not path:
        raise SettingError(f"{source.path}: the store does not record its corpus; name it with {{corpus}}")
    path = Path(path)
    recorded = recorded_corpus.get("selection")
    held = set(held)
    upto = max(held) + 1 if held else 0   # sentences to read: up to the last position held
    if recorded is None:   # a store from before selections were recorded: the reader's selection, as before
        limit = min(source.limit or upto, upto) if upto else 0
        read = CorpusSpec(path, source.format, max_words=source.max_words).read(limit=limit)
        kept = [k for k in range(len(read)) if k in held]
        return StoreSentences([read[k] for k in kept], kept,
                              CorpusSpec(path, source.format, limit=source.limit, max_words=source.max_words))
    fmt = _format(source.format, recorded.get("format"), path, source.path,
                  corpus is None or _same_path(path, recorded_corpus.get("path")))
    made_with = recorded.get("max_words")
    if source.max_words is not None and made_with is not None and source.max_words > made_with:
        raise SettingError(f"{{max_words}} {source.max_words}: the store {source.path} holds only sentences of at "
                           f"most {made_with} words (it was made with {{max_words}} {made_with}); compute another "
                           f"store for longer sentences")
    sentences = CorpusSpec(path, fmt, max_words=made_with).read(limit=upto) if upto else []
    picked = [(k, s) for k, s in enumerate(sentences)
              if k in held and (source.max_words is None or len(s) <= source.max_words)][:source.limit]
    if sentences and not picked:
        raise SettingError(f"{source.path}: no stored sentence has at most {source.max_words} words ({{max_words}})")
    max_words = source.max_words if source.max_words is not None else made_with
    return StoreSentences([s for _, s in picked], [k for k, _ in picked],
                          CorpusSpec(path, fmt, limit=source.limit or recorded.get("limit"), max_words=max_words))
