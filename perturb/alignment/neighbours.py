"""``--context N``: give each sentence words of its neighbours in the same file (Hoover et al. 2021's ``--pad``).

Neighbours are taken as their ``get_padding`` (``pmi_accuracy/main.py`` of
github.com/mcqll/cpmi-dependencies) takes them: alternately the previous and the next sentence
of the *file* (whatever ``--limit``/``--max-words`` selected), until the sentence and its
neighbours hold at least N words; each neighbour gives at most its first N words. The context is
given to the model, never masked, read or scored (see :mod:`pmask.perturb.alignment.context`). A
file too short to give N words is an error (their loop never ends there).

Example:
    >>> padding_indices([3, 4, 10, 2], 1, 15)
    ([0], [2])
"""
from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

from pmask.common.errors import CorpusError


def padding_indices(lengths: Sequence[int], index: int, threshold: int) -> tuple[list[int], list[int]]:
    """Which sentences (positions in the file) pad sentence ``index`` to ``threshold`` words: (before, after).

    Raises:
        CorpusError: the whole file holds fewer than ``threshold`` words.
    """
    j = k = index
    total = lengths[index]
    before: list[int] = []
    after: list[int] = []
    while total < threshold:
        if j - 1 >= 0:
            j -= 1
            before.append(j)
            total += lengths[j]
        if total >= threshold:
            break
        if k + 1 < len(lengths):
            k += 1
            after.append(k)
            total += lengths[k]
        elif j == 0:
            raise CorpusError(f"the file holds {total} words, fewer than the {threshold} words of context asked for")
    return sorted(before), after


def add_context(sentences: Sequence[Any], words: int) -> list[Any]:
    """The sentences, each with ``meta["context"] = (words before, words after)`` from its own file.

    Args:
        sentences: ``pmask.corpora.Sentence`` objects read from files (``.path`` and ``.line``).
        words: the N of ``--context N`` (0: the sentences unchanged).

    Raises:
        CorpusError: a sentence not read from a file (standard input, a list of words), or a file too short.
    """
    if not words:
        return list(sentences)
    from pmask.corpora import read_corpus

    files: dict[str, tuple[list[Any], dict[int, int]]] = {}
    out = []
    for sentence in sentences:
        path, line = getattr(sentence, "path", None), getattr(sentence, "line", None)
        if not path or path == "-" or line is None or not Path(path).is_file():
            raise CorpusError("--context takes neighbouring sentences from the corpus file; "
                              f"{getattr(sentence, 'id', 'a sentence')!r} was not read from a file")
        if path not in files:
            quiet = logging.getLogger("pmask.corpora")
            level = quiet.level
            quiet.setLevel(logging.WARNING)   # the file was announced when it was read for its sentences
            try:
                whole = read_corpus(path)
            finally:
                quiet.setLevel(level)
            files[path] = (whole, {int(s.line): k for k, s in enumerate(whole) if s.line is not None})
        whole, at_line = files[path]
        index = at_line.get(int(line))
        if index is None:
            raise CorpusError(f"{path}:{line}: sentence not found again in its file for --context")
        try:
            before, after = padding_indices([len(s.words) for s in whole], index, words)
        except CorpusError as err:
            raise CorpusError(f"{path}: {err}") from None
        context = ([w for b in before for w in whole[b].words[:words]],
                   [w for a in after for w in whole[a].words[:words]])
        out.append(replace(sentence, meta={**sentence.meta, "context": context}))
    return out
