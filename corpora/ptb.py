"""Penn Treebank bracketed files (``.mrg``) → Sentences with gold constituency trees.

Files are read as text here and each top-level bracket group is parsed with
``nltk.Tree.fromstring`` (nltk ≥ 3.10 corpus readers refuse paths outside nltk.data.path).

WSJ10-style filtering (``filter_punct=True``, the default; the convention of the PRPN / ON-LSTM
constituency evaluation used by Wu et al. 2020): keep only leaves whose POS tag is in
:data:`WORD_TAGS` — punctuation, ``-NONE-`` traces and the currency symbols ``$``/``#`` go —,
prune constituents left empty and drop sentences left with no word.  With ``filter_punct=False``
only ``-NONE-`` traces (never words) are removed.  ``max_words`` counts words *after* filtering.
"""
from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable
from pathlib import Path

import nltk

from pmask.corpora._util import atomic_write_text, corpus_files, read_utf8
from pmask.corpora.sentence import Sentence
from pmask.errors import CorpusError

logger = logging.getLogger(__name__)

# The tag set of "real words" in the WSJ10 evaluation (PRPN / ON-LSTM ``word_tags``).
WORD_TAGS = frozenset(
    "CC CD DT EX FW IN JJ JJR JJS LS MD NN NNS NNP NNPS PDT POS PRP PRP$ RB RBR RBS RP SYM TO UH "
    "VB VBD VBG VBN VBP VBZ WDT WP WP$ WRB".split()
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
    while isinstance(tree, nltk.Tree) and tree.label() in _WRAPPER_LABELS and len(tree) == 1 \
            and isinstance(tree[0], nltk.Tree) and not _is_preterminal(tree[0]):
        tree = tree[0]
    return tree


def _is_preterminal(t) -> bool:
    return isinstance(t, nltk.Tree) and len(t) == 1 and isinstance(t[0], str)


def filter_tree(tree: nltk.Tree, keep_tag, strip_labels: bool = True) -> nltk.Tree | None:
    """A copy of ``tree`` with only preterminals whose tag satisfies ``keep_tag``; None if nothing is left.

    Raises ValueError for a word that is not under a preterminal (not PTB).
    """
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


def read_ptb(
    path: str | os.PathLike,
    *,
    max_words: int | None = None,
    limit: int | None = None,
    filter_punct: bool = True,
    strip_labels: bool = True,
) -> list[Sentence]:
    """Read one ``.mrg`` file or a directory of them (sorted by name).

    Sentence.id = ``"<file stem>#<k>"`` (k = 1-based tree index in its file), words/xpos = the kept
    leaves and their tags, tree = the filtered gold tree (wrapper removed, function tags stripped
    when ``strip_labels``), meta["raw_tree"] = the unfiltered tree as read.  ``limit`` caps the
    number of sentences returned (counted after the ``max_words`` filter).
    """
    keep = (lambda tag: tag in WORD_TAGS) if filter_punct else (lambda tag: tag != TRACE_TAG)
    out: list[Sentence] = []
    n_read = 0
    for file in corpus_files(Path(path), ".mrg"):
        text = read_utf8(file)
        try:
            groups = split_trees(text)
        except ValueError as err:
            line, msg = err.args
            raise CorpusError(f"{file}:{line}: {msg}") from None
        for k, (line, group) in enumerate(groups, start=1):
            sid = f"{file.stem}#{k}"
            try:
                raw = nltk.Tree.fromstring(group)
            except ValueError as err:
                msg = " ".join(str(err).split())
                raise CorpusError(f"{file}:{line}: bad bracketed tree (sentence {sid}): {msg}") from None
            n_read += 1
            try:
                tree = filter_tree(_unwrap(raw), keep, strip_labels)
            except ValueError as err:
                raise CorpusError(f"{file}:{line}: {err} (sentence {sid})") from None
            if tree is None:
                continue
            words_tags = tree.pos()
            if max_words is not None and len(words_tags) > max_words:
                continue
            out.append(Sentence(
                id=sid,
                words=[w for w, _ in words_tags],
                xpos=[t for _, t in words_tags],
                tree=tree,
                path=str(file),
                line=line,
                meta={"raw_tree": raw},
            ))
            if limit is not None and len(out) >= limit:
                return out
    if n_read == 0:
        raise CorpusError(f"{path}:1: no trees found")
    logger.info("read %d of %d PTB trees from %s", len(out), n_read, path)
    return out


def write_brackets(trees: Iterable, path: str | os.PathLike) -> None:
    """Write one tree per line with ``pmask.trees.to_brackets`` (words escaped PTB-style, e.g.
    ``(`` → ``-LRB-``); a None tree (skipped sentence) gives an empty line so line k still belongs
    to sentence k.  Atomic (temp file + os.replace)."""
    from pmask.trees.brackets import to_brackets  # imported on use: pmask.trees pulls in networkx

    lines = ["" if t is None else to_brackets(t) for t in trees]
    atomic_write_text(path, "".join(line + "\n" for line in lines))
    logger.info("wrote %d trees to %s", len(lines), path)


def read_brackets(path: str | os.PathLike) -> list[nltk.Tree | None]:
    """Read a file of one-line bracketed trees as written by :func:`write_brackets`.

    Line k → tree k (``pmask.trees.from_brackets``: ``-LRB-``/``-RRB-`` leaves become ``(``/``)``);
    an empty line → None (a skipped sentence).  A line that is not exactly one tree raises
    CorpusError naming ``file:line``.
    """
    from pmask.trees.brackets import from_brackets

    path = Path(path)
    lines = read_utf8(path).splitlines()
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
            raise CorpusError(f"{path}:{number}: bad bracketed tree: {' '.join(str(msg).split())}") from None
        out.append(tree)
    if not any(t is not None for t in out):
        raise CorpusError(f"{path}:1: no trees in file")
    return out
