"""Constituency trees as ``nltk.Tree``: one-line bracket strings and word spans.

Conventions: internal nodes are labelled ``LABEL = "X"`` (unlabelled bracketing); leaves
are the word strings themselves (no pre-terminal nodes).  A one-word sentence is ``(X w)``.

Bracket strings (:func:`to_brackets`) are one line, e.g. ``(X (X The cat) (X sat))``, and
``nltk.Tree.fromstring`` reads them back.  Words are escaped PTB-style so that the string
stays parseable: ``(`` -> ``-LRB-``, ``)`` -> ``-RRB-``, any run of whitespace -> ``_``, an
empty word -> ``-NONE-``.  :func:`from_brackets` undoes the parenthesis escapes (spaces stay
``_``; a word that literally was ``-LRB-`` comes back as ``(``, as in the PTB).

nltk is imported by the functions that build or read trees, not with this module: importing it
costs about a second (it loads scipy), which a dependency job never needs.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nltk import Tree

LABEL = "X"
_WS = re.compile(r"\s+")


def escape_word(word) -> str:
    """A bracket-safe token for ``word`` (see module docstring)."""
    w = str(word)
    if w == "":
        return "-NONE-"
    w = w.replace("(", "-LRB-").replace(")", "-RRB-")
    return _WS.sub("_", w)


def unescape_word(token: str) -> str:
    """Inverse of :func:`escape_word` for parentheses."""
    return token.replace("-LRB-", "(").replace("-RRB-", ")")


def to_brackets(tree) -> str:
    """One-line bracket string of an ``nltk.Tree`` (or a bare word), leaves escaped."""
    from nltk import Tree

    if not isinstance(tree, Tree):
        return escape_word(tree)
    label = escape_word(tree.label()) if str(tree.label()) else LABEL
    # recursion depth = tree height (a right-branching 300-word sentence is fine)
    return "(" + " ".join([label] + [to_brackets(child) for child in tree]) + ")"


def from_brackets(text: str) -> Tree:
    """Read a bracket string written by :func:`to_brackets` back into an ``nltk.Tree``."""
    from nltk import Tree

    tree = Tree.fromstring(text)
    for pos in tree.treepositions("leaves"):
        tree[pos] = unescape_word(tree[pos])
    return tree


def node_spans(tree) -> tuple[list[tuple[int, int, Tree]], int]:
    """Every internal node of ``tree`` with its word span, and the number of words.

    Iterative, so deep (e.g. right-branching) trees of any length are fine.

    Args:
        tree: an ``nltk.Tree`` (or a bare word, which has no nodes and one word).

    Returns:
        ``([(start, end, node), ...], n)``: spans 0-based with ``end`` exclusive, children listed
        before their parent; ``n`` = number of leaves.

    Example:
        >>> nodes, n = node_spans(from_brackets("(X (X a b) c)"))
        >>> [(i, j) for i, j, _ in nodes], n
        ([(0, 2), (0, 3)], 3)
    """
    from nltk import Tree

    out: list[tuple[int, int, Tree]] = []
    if not isinstance(tree, Tree):
        return out, 1
    starts: list[int] = []
    stack: list[tuple[object, bool]] = [(tree, False)]
    pos = 0
    while stack:
        node, done = stack.pop()
        if not isinstance(node, Tree):
            pos += 1
        elif done:
            out.append((starts.pop(), pos, node))
        else:
            starts.append(pos)
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(node))
    return out, pos


def spans(tree, *, trivial: bool = False) -> set[tuple[int, int]]:
    """Word spans ``(start, end)`` (0-based, end exclusive) of the internal nodes of ``tree``.

    The whole-sentence span is included.  Single-word spans (pre-terminals, unary nodes over
    one word) are left out unless ``trivial=True``.  Unary chains give one span (it is a set).
    """
    from nltk import Tree

    if not isinstance(tree, Tree):
        return {(0, 1)} if trivial else set()
    nodes, _ = node_spans(tree)
    return {(i, j) for i, j, _ in nodes if j - i >= 2 or (trivial and j > i)}
