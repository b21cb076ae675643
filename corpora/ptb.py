"""Penn Treebank bracketed files (``.mrg``) → Sentences with gold constituency trees.

Files are read as text here and each top-level bracket group is parsed with
``nltk.Tree.fromstring`` (nltk ≥ 3.10 corpus readers refuse paths outside nltk.data.path).

WSJ10-style filtering (``filter_punct=True``, the default; the convention of the PRPN / ON-LSTM
constituency evaluation used by Wu et al. 2020): keep only leaves whose POS tag is in
:data:`WORD_TAGS` — punctuation, ``-NONE-`` traces and the currency symbols ``$``/``#`` go —,
prune constituents left empty and drop sentences left with no word.  With ``filter_punct=False``
only ``-NONE-`` traces (never words) are removed.  ``max_words`` counts words *after* filtering.

nltk is imported where trees are built or read, not with this module (see :mod:`pmask.corpora.brackets`).
"""
from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from pmask.common.errors import CorpusError
from pmask.common.files import write_output
from pmask.corpora._util import (
    corpus_files,
    display_name,
    file_lines,
    first_content_line,
    is_stdin,
    looks_like_conllu,
    looks_like_dep3,
    read_utf8,
    select,
)
from pmask.corpora.brackets import from_brackets, to_brackets
from pmask.corpora.sentence import Sentence

if TYPE_CHECKING:
    import nltk

logger = logging.getLogger(__name__)

# The tag set of "real words" in the WSJ10 evaluation (PRPN / ON-LSTM ``word_tags``).
WORD_TAGS = frozenset(
    ["CC", "CD", "DT", "EX", "FW", "IN", "JJ", "JJR", "JJS", "LS", "MD", "NN", "NNS", "NNP", "NNPS", "PDT", "POS",
     "PRP", "PRP$", "RB", "RBR", "RBS", "RP", "SYM", "TO", "UH", "VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "WDT", "WP",
     "WP$", "WRB"]
)
TRACE_TAG = "-NONE-"
_WRAPPER_LABELS = {"", "ROOT", "TOP"}


def split_trees(text: str) -> list[tuple[int, str]]:
    """Top-level bracket groups of ``text`` as (1-based first line, group text), by depth counting.

    Raises ValueError(line, message) on unbalanced brackets or text outside brackets.
    """
    groups: list[tuple[int, str]] = []
    depth = 0
    start = 0
    start_line = line = 1
    for i, ch in enumerate(text):
        if ch == "\n":
            line += 1
        elif ch == "(":
            if depth == 0:
                start, start_line = i, line
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise ValueError(line, "unbalanced ')'")
            if depth == 0:
                groups.append((start_line, text[start : i + 1]))
        elif depth == 0 and not ch.isspace():
            raise ValueError(line, f"text outside brackets: {ch!r}")
    if depth > 0:
        raise ValueError(start_line, "unbalanced '(' (tree not closed)")
    return groups


def strip_function_tags(label: str) -> str:
    """'NP-SBJ-1' → 'NP', 'PP-LOC=2' → 'PP', 'PRT|ADVP' → 'PRT'; tags like '-LRB-' / '-NONE-' stay."""
    if label.startswith("-") or not label:
        return label
    return re.split(r"[-=|]", label, maxsplit=1)[0] or label


def _unwrap(tree: nltk.Tree) -> nltk.Tree:
    """Remove the PTB outer ``( (S ...) )`` / ``(ROOT ...)`` wrapper."""
    import nltk

    while isinstance(tree, nltk.Tree) and tree.label() in _WRAPPER_LABELS and len(tree) == 1 \
            and isinstance(tree[0], nltk.Tree) and not _is_preterminal(tree[0]):
        tree = tree[0]
    return tree


def _is_preterminal(t) -> bool:
    import nltk

    return isinstance(t, nltk.Tree) and len(t) == 1 and isinstance(t[0], str)


def filter_tree(tree: nltk.Tree, keep_tag, strip_labels: bool = True) -> nltk.Tree | None:
    """A copy of ``tree`` with only preterminals whose tag satisfies ``keep_tag``; None if nothing is left.

    Raises ValueError for a word that is not under a preterminal (not PTB).
    """
    import nltk

    if _is_preterminal(tree):
        return nltk.Tree(tree.label(), [tree[0]]) if keep_tag(tree.label()) else None
    for child in tree:
        if not isinstance(child, nltk.Tree):
            raise ValueError(f"word {child!r} is not under a POS tag (in a {tree.label() or 'wrapper'} node)")
    kids = [k for k in (filter_tree(c, keep_tag, strip_labels) for c in tree) if k is not None]
    if not kids:
        return None
    label = strip_function_tags(tree.label()) if strip_labels else tree.label()
    return nltk.Tree(label, kids)


def _not_brackets(name: str, text: str) -> CorpusError | None:
    """The error for a file of dependency trees given where bracketed trees are expected, else None."""
    line = first_content_line(text)
    if line is None:
        return None
    kind = "CoNLL-U" if looks_like_conllu(line) else "a 3-column dependency file" if looks_like_dep3(line) else None
    if kind is None:
        return None
    return CorpusError(f"{name}: looks like {kind} (dependency trees), not bracketed constituency trees")


def _ptb_items(text: str, name: str, stem: str, filter_punct: bool,
               strip_labels: bool) -> Iterator[Sentence | None]:
    """One item per tree of ``text``: its Sentence, or None when filtering left no word."""
    import nltk

    keep = (lambda tag: tag in WORD_TAGS) if filter_punct else (lambda tag: tag != TRACE_TAG)
    try:
        groups = split_trees(text)
    except ValueError as err:
        line, msg = err.args
        raise _not_brackets(name, text) or CorpusError(f"{name}:{line}: {msg}") from None
    for k, (line, group) in enumerate(groups, start=1):
        sid = f"{stem}#{k}"
        try:
            raw = nltk.Tree.fromstring(group)
        except ValueError as err:
            msg = " ".join(str(err).split())
            raise CorpusError(f"{name}:{line}: bad bracketed tree (sentence {sid}): {msg}") from None
        try:
            tree = filter_tree(_unwrap(raw), keep, strip_labels)
        except ValueError as err:
            raise CorpusError(f"{name}:{line}: {err} (sentence {sid})") from None
        if tree is None:
            yield None
            continue
        words_tags = tree.pos()
        yield Sentence(id=sid, words=[w for w, _ in words_tags], xpos=[t for _, t in words_tags], tree=tree,
                       path=name, line=line, meta={"raw_tree": raw})


def parse_ptb(text: str, name: str, stem: str, *, filter_punct: bool = True,
              strip_labels: bool = True) -> Iterator[Sentence]:
    """The sentences of one ``.mrg`` text, filtered as in the module docstring.

    ids are ``"<stem>#<k>"`` (k = 1-based tree index); trees left with no word are skipped;
    ``name`` stands for the source in messages and ``Sentence.path``.
    """
    return (s for s in _ptb_items(text, name, stem, filter_punct, strip_labels) if s is not None)


def read_ptb(
    path: str | os.PathLike,
    *,
    max_words: int | None = None,
    limit: int | None = None,
    filter_punct: bool = True,
    strip_labels: bool = True,
) -> list[Sentence]:
    """Read one ``.mrg`` file, a directory of them (sorted by name), or standard input for ``-``.

    Args:
        path: the file, folder or ``-``.
        max_words: skip sentences of more than this many words, counted after the punctuation
            filter (WSJ10 = ``max_words=10``).
        limit: return at most this many sentences, counted after the ``max_words`` filter.
        filter_punct: WSJ10-style removal of punctuation, traces and ``$``/``#`` (module docstring).
        strip_labels: strip function tags from the labels (``NP-SBJ`` -> ``NP``).

    Returns:
        Sentences with id = ``"<file stem>#<k>"`` (k = 1-based tree index in its file),
        words/xpos = the kept leaves and their tags, tree = the filtered gold tree (wrapper
        removed), meta["raw_tree"] = the unfiltered tree as read.

    Raises:
        CorpusError: missing or malformed input (a CoNLL-U file is named as such), or no tree.
        PmaskError: ``max_words`` or ``limit`` below 1.

    Example:
        >>> [s.id for s in read_ptb("tests/data/mini.mrg", max_words=2)]
        ['mini#4', 'mini#5']
    """
    def sentences() -> Iterator[Sentence]:
        trees = 0
        for file in corpus_files(Path(path), ".mrg"):
            stem = "stdin" if is_stdin(file) else file.stem
            for sent in _ptb_items(read_utf8(file), display_name(file), stem, filter_punct, strip_labels):
                trees += 1
                if sent is not None:
                    yield sent
        if trees == 0:
            raise CorpusError(f"{display_name(path)}:1: no trees found")

    return select(sentences(), max_words=max_words, limit=limit, name=display_name(path))


def write_brackets(trees: Iterable, path: str | os.PathLike) -> None:
    """Write one tree per line with ``pmask.trees.to_brackets`` (words escaped PTB-style, e.g.
    ``(`` → ``-LRB-``); a None tree (skipped sentence) gives an empty line so line k still belongs
    to sentence k.  ``path`` as for :func:`pmask.common.files.write_output` (``-`` = standard output)."""
    lines = ["" if t is None else to_brackets(t) for t in trees]
    write_output(path, "".join(line + "\n" for line in lines))
    logger.debug("wrote %d trees to %s", len(lines), path)   # the caller prints the summary


def read_brackets(path: str | os.PathLike) -> list[nltk.Tree | None]:
    """Read a file of one-line bracketed trees as written by :func:`write_brackets`.

    Line k → tree k (``pmask.trees.from_brackets``: ``-LRB-``/``-RRB-`` leaves become ``(``/``)``);
    an empty line → None (a skipped sentence).  ``-`` reads standard input.  A line that is not
    exactly one tree raises CorpusError naming ``file:line``; a CoNLL-U file is named as such.
    """
    return parse_brackets(read_utf8(Path(path)), display_name(path))


def parse_brackets(text: str, name: str) -> list[nltk.Tree | None]:
    """The one-line bracketed trees of ``text`` (:func:`read_brackets` of text already read; ``name``
    stands for the source in messages)."""
    lines = file_lines(text)
    out: list[nltk.Tree | None] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            out.append(None)
            continue
        try:
            groups = split_trees(line)
            if len(groups) != 1:
                raise ValueError(number, f"expected one tree on the line, found {len(groups)}")
            tree = from_brackets(line)
        except ValueError as err:
            msg = err.args[1] if len(err.args) == 2 and isinstance(err.args[0], int) else str(err)
            raise _not_brackets(name, "\n".join(lines)) or CorpusError(
                f"{name}:{number}: bad bracketed tree: {' '.join(str(msg).split())}") from None
        out.append(tree)
    if not any(t is not None for t in out):
        raise CorpusError(f"{name}:1: no trees in file")
    return out
