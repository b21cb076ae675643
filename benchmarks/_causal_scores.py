"""Readings (word-pair matrices) from the raw figures of :mod:`_causal_engine`, decoded and scored for
benchmarks/causal_readings.py.

Each reading is made symmetric before decoding (W = F + Fᵀ, Hoover et al.'s ``sum``; a one-sided reading has
only its lower triangle filled, so that is the triangle mirrored), CPMI also after ``|F|`` (``cpmi-abs``),
distances negated (close = high). Decoders: ``mst`` (Kruskal) and ``mst-projective`` (Eisner), pmask's
(:mod:`pmask.trees.undirected`). Scores, pooled over sentences:

- ``hoover``: Hoover et al.'s UUAS (:mod:`pmask.eval.scores.hoover_uuas`): the tree over non-``PUNCT`` words,
  against the gold edges between them (a punctuation word joining two becomes one edge);
- ``uuas``: pmask eval's UUAS: the tree over every word, directed away from the gold root, undirected-correct
  words / words (= (common edges + 1) / n);
- ``hoover_mean``: the sentences' mean Hoover UUAS.
"""
from __future__ import annotations

from typing import Any, Iterator, Sequence

import numpy as np

from pmask.eval.scores.hoover_uuas import gold_edges
from pmask.trees.baselines import connect_adjacent
from pmask.trees.undirected import max_spanning_tree, projective_tree

READINGS = ("cpmi", "moved-avg", "moved-last", "distance-avg", "distance-last", "attention", "attention-rownorm")


def rownorm(A: np.ndarray) -> np.ndarray:
    """Attention rows [..., i, j] renormalised over the other words (i's own column and the tokens that are no
    word, begin token and separators, left out), so that every word's row sums to 1 however many keys it saw."""
    B = np.array(A, dtype=np.float64)
    n = B.shape[-1]
    B[..., np.arange(n), np.arange(n)] = 0.0
    total = B.sum(-1, keepdims=True)
    return B / np.where(total > 0, total, 1.0)
DECODERS = {"mst": max_spanning_tree, "mst-projective": projective_tree}


def matrices(data: dict[str, np.ndarray], readings: Sequence[str], heads: bool = False, perturbed: bool = True,
             ensembles: dict[str, list[tuple[int, int]]] | None = None) -> Iterator[tuple[str, int, np.ndarray]]:
    """(reading name, layer, symmetric W) for one sentence's raw figures (``perturbed``: it has CPMI and moved
    states; not for kind ``none``). ``heads``: every head of the attention readings too (``head<h>``, or
    ``rownorm-head<h>``); ``ensembles``: name -> (layer, head) pairs (layers 1-based) whose attention is summed
    (row-normalised first if the name starts with ``rownorm``), reported as layer 0."""
    if "cpmi" in readings and perturbed:
        F = (data["logp"][None, :] - data["logp_without"]).T          # F[i, j]: j's bearing on i
        np.fill_diagonal(F, 0.0)
        yield "cpmi", 0, F + F.T
        yield "cpmi-abs", 0, np.abs(F) + np.abs(F).T
    for pool in ("avg", "last"):
        if f"moved-{pool}" in readings and perturbed:
            M = data[f"moved_{pool}"].astype(np.float64)                # [L+1, j, i]
            for layer in range(M.shape[0]):
                yield f"moved-{pool}", layer, M[layer] + M[layer].T
        if f"distance-{pool}" in readings:
            D = data[f"distance_{pool}"].astype(np.float64)
            for layer in range(D.shape[0]):
                yield f"distance-{pool}", layer, -D[layer]
    for name, prefix in (("attention", ""), ("attention-rownorm", "rownorm-")):
        if name not in readings and not any(e.startswith(prefix or "head") for e in ensembles or {}):
            continue
        A = data["attention"].astype(np.float64)                        # [L, H, i, j]
        if prefix:
            A = rownorm(A)
        for layer in range(A.shape[0]) if name in readings else ():
            mean = A[layer].mean(0)
            yield name, layer + 1, mean + mean.T
            for h in range(A.shape[1]) if heads else ():
                yield f"{prefix}head{h}", layer + 1, A[layer, h] + A[layer, h].T
        for ensemble, chosen in (ensembles or {}).items():
            if ensemble.startswith("rownorm") == bool(prefix):
                summed = sum(A[layer - 1, h] for layer, h in chosen)
                yield ensemble, 0, summed + summed.T


class Scorer:
    """Counts per (reading, decoder, layer) over the sentences added."""

    def __init__(self, sentences: Sequence[Any]):
        self.sentences = sentences
        self.keep = [[u != "PUNCT" for u in s.upos] for s in sentences]
        self.gold_hoover = [gold_edges(s.heads, s.upos) for s in sentences]
        self.gold_all = [{(min(d, h - 1), max(d, h - 1)) for d, h in enumerate(s.heads) if h} for s in sentences]
        self.counts: dict[tuple[str, str, int], np.ndarray] = {}
        self.means: dict[tuple[str, str, int], list[float]] = {}

    def _edges(self, k: int, edges_kept: list[tuple[int, int]], edges_all: list[tuple[int, int]]
               ) -> tuple[int, int, int, int]:
        kept = {(min(a, b), max(a, b)) for a, b in edges_kept}
        every = {(min(a, b), max(a, b)) for a, b in edges_all}
        n = len(self.sentences[k].words)
        return len(kept & self.gold_hoover[k]), len(self.gold_hoover[k]), len(every & self.gold_all[k]) + 1, n

    def add(self, k: int, name: str, layer: int, W: np.ndarray, decoders: Sequence[str]) -> None:
        for decoder in decoders:
            fn = DECODERS[decoder]
            c = self._edges(k, fn(W, self.keep[k]), fn(W))
            key = (name, decoder, layer)
            self.counts[key] = self.counts.get(key, np.zeros(4, dtype=np.int64)) + c
            if c[1]:
                self.means.setdefault(key, []).append(c[0] / c[1])

    def figures(self) -> dict[str, Any]:
        out: dict[str, Any] = {"readings": {}}
        for (name, decoder, layer), c in self.counts.items():
            out["readings"].setdefault(name, {}).setdefault(decoder, {})[str(layer)] = {
                "hoover": 100 * c[0] / c[1], "uuas": 100 * c[2] / c[3],
                "hoover_mean": 100 * float(np.mean(self.means.get((name, decoder, layer), [0.0])))}
        return out

    def baselines(self) -> dict[str, dict[str, float]]:
        """connect-adjacent (non-punctuation words chained for Hoover UUAS, every word for UUAS) and a random
        tree (``mst`` on a uniform random matrix, seed 0)."""
        rng = np.random.default_rng(0)
        for k, s in enumerate(self.sentences):
            n = len(s.words)
            c = self._edges(k, connect_adjacent(n, self.keep[k]), connect_adjacent(n))
            self.counts[("connect-adjacent", "", 0)] = self.counts.get(("connect-adjacent", "", 0), 0) + np.array(c)
            W = rng.random((n, n))
            c = self._edges(k, max_spanning_tree(W, self.keep[k]), max_spanning_tree(W))
            self.counts[("random mst", "", 0)] = self.counts.get(("random mst", "", 0), 0) + np.array(c)
        return {name: {"hoover": 100 * c[0] / c[1], "uuas": 100 * c[2] / c[3]}
                for (name, _, _), c in self.counts.items() if name in ("connect-adjacent", "random mst")}
