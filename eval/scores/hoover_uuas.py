"""UUAS as Hoover et al. 2021 score CPMI trees (``main.py`` and ``parser.py`` of github.com/mcqll/cpmi-dependencies).

- Only words whose UPOS is not ``PUNCT`` count (``SYM`` does).
- Gold edges: the minimum spanning tree of the gold tree's path lengths over those words (their
  ``ParseDistanceTask`` + ``prims``): the gold arcs between non-punctuation words, plus, where a
  punctuation word joins two of them, one edge of length 2 per such join, ties to the pair first
  in row-major order.
- Predicted edges: the undirected edges between non-punctuation words (the faithful ``mst`` and
  ``mst-projective`` decoders return exactly those, plus arcs that hang punctuation on a word).
- A sentence's UUAS = common edges / gold edges (none when it has no gold edge); the corpus
  figures are the pooled ratio (their "total corpus uuas") and the mean of the sentences' UUAS
  that exist (their "mean sentence uuas"). Every sentence counts: their scores keep sentences of
  two or fewer non-punctuation words (only their word-pair tables leave them out).

pmask's own ``eval`` scores every word's head (UAS/UUAS over all words by default, ``--punct
exclude`` for UPOS PUNCT and SYM) and needs no spanning-tree reconstruction of the gold edges.

Example:
    >>> s = sentence_uuas([2, 0, 2], [2, 0, 2], ["DET", "NOUN", "PUNCT"])
    >>> s.common, s.gold
    (1, 1)
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from pmask.common.errors import CorpusError
from pmask.trees.undirected import max_spanning_tree


@dataclass(frozen=True)
class HooverUuas:
    """Common and gold edge counts of one sentence or, summed, of a corpus."""

    common: int
    gold: int

    @property
    def uuas(self) -> float | None:
        return self.common / self.gold if self.gold else None


def tree_distances(heads: Sequence[int]) -> np.ndarray:
    """Path lengths between the words of a dependency tree (CoNLL-U heads, 0 = ROOT), through ROOT if need be."""
    n = len(heads)
    adjacent: list[list[int]] = [[] for _ in range(n + 1)]
    for d, h in enumerate(heads, start=1):
        adjacent[d].append(int(h))
        adjacent[int(h)].append(d)
    out = np.zeros((n, n))
    for start in range(1, n + 1):
        seen = {start: 0}
        queue = deque([start])
        while queue:
            a = queue.popleft()
            for b in adjacent[a]:
                if b not in seen:
                    seen[b] = seen[a] + 1
                    queue.append(b)
        for b in range(1, n + 1):
            out[start - 1, b - 1] = seen.get(b, np.inf)
    return out


def gold_edges(heads: Sequence[int], upos: Sequence[str]) -> set[tuple[int, int]]:
    """Their gold edges (0-based, sorted pairs) between the non-punctuation words."""
    keep = [u != "PUNCT" for u in upos]
    return {(min(a, b), max(a, b)) for a, b in max_spanning_tree(tree_distances(heads), keep, minimum=True)}


def predicted_edges(heads: Sequence[int], upos: Sequence[str]) -> set[tuple[int, int]]:
    """The undirected edges of a predicted tree between non-punctuation words (0-based, sorted pairs)."""
    return {(min(d, int(h) - 1), max(d, int(h) - 1)) for d, h in enumerate(heads)
            if h and upos[d] != "PUNCT" and upos[int(h) - 1] != "PUNCT"}


def sentence_uuas(pred_heads: Sequence[int], gold_heads: Sequence[int], upos: Sequence[str]) -> HooverUuas:
    """One sentence's counts under their convention."""
    gold = gold_edges(gold_heads, upos)
    return HooverUuas(len(gold & predicted_edges(pred_heads, upos)), len(gold))


@dataclass(frozen=True)
class HooverSummary:
    """A prediction file's UUAS under their convention (fractions)."""

    pooled: float
    mean: float
    sentences: int
    gold_edges: int
    pooled_long: float = float("nan")   # the same without sentences of <= 2 non-punctuation words
    mean_long: float = float("nan")

    def describe(self) -> str:
        """Two lines for ``pmask eval --hoover-uuas``: every sentence (their scores), and without
        sentences of two or fewer non-punctuation words (their word-pair tables' selection)."""
        return (f"Hoover et al. UUAS (non-PUNCT words, gold spanning tree): pooled {100 * self.pooled:.2f}, "
                f"sentence mean {100 * self.mean:.2f} ({self.sentences} sentences, {self.gold_edges} gold edges)\n"
                f"the same without sentences of <= 2 non-PUNCT words: pooled {100 * self.pooled_long:.2f}, "
                f"sentence mean {100 * self.mean_long:.2f}")


def hoover_uuas_files(pred: str | Path, gold: str | Path, *, max_words: int | None = None) -> HooverSummary:
    """Their UUAS of a predicted CoNLL-U file against gold (sentences matched by id and words).

    Raises:
        CorpusError: a predicted sentence the gold file lacks, or gold without UPOS tags.
    """
    from pmask.corpora import read_corpus

    golds = {(s.id, tuple(s.words)): s for s in read_corpus(gold, max_words=max_words)}
    scores, long = [], []
    for p in read_corpus(pred, max_words=max_words):
        g = golds.get((p.id, tuple(p.words)))
        if g is None or g.heads is None or g.upos is None or p.heads is None:
            raise CorpusError(f"{p.where()}: no gold sentence with heads and UPOS tags for it in {gold}")
        scores.append(sentence_uuas(p.heads, g.heads, g.upos))
        if sum(u != "PUNCT" for u in g.upos) > 2:
            long.append(scores[-1])
    pooled, mean = corpus_uuas(scores)
    return HooverSummary(pooled, mean, len(scores), sum(s.gold for s in scores), *corpus_uuas(long))


def corpus_uuas(scores: Iterable[HooverUuas]) -> tuple[float, float]:
    """(pooled UUAS, mean of the sentences' UUAS), as fractions.

    Example:
        >>> corpus_uuas([HooverUuas(1, 2), HooverUuas(3, 3), HooverUuas(0, 0)])
        (0.8, 0.75)
    """
    scores = list(scores)
    gold = sum(s.gold for s in scores)
    values = [s.uuas for s in scores if s.uuas is not None]
    return (sum(s.common for s in scores) / gold if gold else float("nan"),
            float(np.mean(values)) if values else float("nan"))
