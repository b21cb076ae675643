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
  two or fewer non-punctuation words (only their word-pair tables leave them out; the ``_long``
  figures of :class:`HooverUuasScore` leave them out too).

:class:`HooverUuasScore` is the score the tables show when asked (``optional``, by its name ``hoover_uuas``:
``pmask eval --score hoover_uuas`` or ``--hoover-uuas``, ``evaluate_files(..., scores=["hoover_uuas"])``), for
the prediction and
every baseline. pmask's own ``eval`` scores every word's head (UAS/UUAS over all words by default,
``--punct exclude`` for UPOS PUNCT and SYM) and needs no spanning-tree reconstruction of the gold edges.

Example:
    >>> s = sentence_uuas([2, 0, 2], [2, 0, 2], ["DET", "NOUN", "PUNCT"])
    >>> s.common, s.gold
    (1, 1)
    >>> score = HooverUuasScore(); _ = score.add([2, 0, 2], [2, 0, 2], ["DET", "NOUN", "PUNCT"])
    >>> _ = score.add([0, 1, 1], [2, 0, 2], ["DET", "NOUN", "VERB"])
    >>> figures = score.to_dict()
    >>> round(figures["hoover_uuas"], 2), figures["hoover_uuas_mean"], figures["hoover_uuas_long"]
    (66.67, 75.0, 50.0)
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np

from pmask.common.errors import CorpusError, DecodeError
from pmask.corpora.sentence import Sentence
from pmask.eval.scores.percent import percent
from pmask.eval.scores.score import SCORES, Column, Score
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


@dataclass(repr=False)   # Score's repr: the figures
class HooverUuasScore(Score):
    """Their UUAS added over sentences and corpora (:class:`Score`), computed when asked (``hoover_uuas``).

    Columns: the pooled UUAS (common edges / gold edges over the corpus; the headline) and the mean
    of the sentences' UUAS; ``to_dict()`` adds the same two without sentences of two or fewer
    non-punctuation words (``hoover_uuas_long``, ``hoover_uuas_mean_long``) and the counts.
    Percentages, 0.0 when nothing was counted.
    """

    name = "hoover_uuas"
    task = "dependency"
    optional = True
    columns = (Column("hoover_uuas", "Hoover UUAS"), Column("hoover_uuas_mean", "Hoover mean UUAS"))

    common: int = 0            # common edges, every sentence
    gold: int = 0              # gold edges
    sentences: int = 0
    uuas_sum: float = 0.0      # Σ sentence UUAS (fractions) over the sentences with a gold edge
    with_edges: int = 0        # sentences with a gold edge
    common_long: int = 0       # the same over sentences of more than two non-punctuation words
    gold_long: int = 0
    uuas_sum_long: float = 0.0
    long: int = 0

    def add(self, pred_heads: Sequence[int], gold_heads: Sequence[int], upos: Sequence[str],
            sent_id: str | None = None) -> HooverUuas:
        """Score one sentence (CoNLL-U heads, 0 = ROOT; the gold UPOS tags) and add it."""
        n = len(gold_heads)
        if len(pred_heads) != n or len(upos) != n:
            raise DecodeError(f"sentence {sent_id}: {len(pred_heads)} predicted heads and {len(upos)} UPOS tags "
                              f"for {n} words")
        counts = sentence_uuas([int(h) for h in pred_heads], [int(h) for h in gold_heads], upos)
        self.common += counts.common
        self.gold += counts.gold
        self.sentences += 1
        if counts.uuas is not None:
            self.uuas_sum += counts.uuas
            self.with_edges += 1
        if sum(u != "PUNCT" for u in upos) > 2:
            self.common_long += counts.common
            self.gold_long += counts.gold
            self.uuas_sum_long += counts.uuas or 0.0
            self.long += 1
        return counts

    def add_sentence(self, pred: Sequence[int], gold: Sentence, *, punct_mask: Any = None) -> HooverUuas:
        """:meth:`add` against ``gold``'s heads and UPOS tags (their own rule for punctuation: ``punct_mask``
        is ignored); a one-line CorpusError for a gold sentence without UPOS tags."""
        if gold.heads is None or not gold.upos or all(u in (None, "_") for u in gold.upos):
            raise CorpusError(f"{gold.where()}: Hoover et al.'s UUAS needs the gold heads and UPOS tags "
                              "(it leaves PUNCT words out), and this sentence has none")
        return self.add(pred, gold.heads, gold.upos, sent_id=gold.id)

    def to_dict(self) -> dict[str, Any]:
        return {"hoover_uuas": percent(self.common, self.gold),
                "hoover_uuas_mean": percent(self.uuas_sum, self.with_edges),
                "hoover_uuas_long": percent(self.common_long, self.gold_long),
                "hoover_uuas_mean_long": percent(self.uuas_sum_long, self.long),
                "hoover_common": self.common, "hoover_gold_edges": self.gold, "hoover_sentences": self.sentences}


SCORES.register(HooverUuasScore)
