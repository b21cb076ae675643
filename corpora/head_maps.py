"""Dependency head maps (CoNLL-U convention), shared by the corpus readers and the decoders.

``heads[k-1]`` is the head of word k (1-based), 0 = ROOT. Pure Python (no numpy, no torch), so
:mod:`pmask.corpora` and :mod:`pmask.trees` can both import it without importing each other.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Cycle:
    """A cycle of a head map: ``words`` in the order the walk met them; ``start`` is the
    lowest-numbered word that does not reach ROOT (its chain of heads runs into the cycle)."""

    start: int
    words: tuple[int, ...]


def find_cycle(heads: Sequence[int]) -> Cycle | None:
    """The first cycle met when following each word's chain of heads, words taken in order 1..n.

    Every head must already be in ``0..n``. In a tree every chain reaches ROOT; a self-loop is a
    cycle of one word. The walk is linear: each word is visited once over all chains.

    Args:
        heads: length n, ``heads[k-1]`` = head of word k, 0 = ROOT (ints or numpy integers).

    Returns:
        None when every word reaches ROOT, else the :class:`Cycle` reached from the
        lowest-numbered word that does not.

    Example:
        >>> find_cycle([0, 3, 2])
        Cycle(start=2, words=(2, 3))
        >>> find_cycle([2, 0]) is None
        True
    """
    heads = [int(h) for h in heads]
    n = len(heads)
    state = [0] * (n + 1)  # 0 = unvisited, 1 = on the current chain, 2 = known to reach ROOT
    state[0] = 2
    for start in range(1, n + 1):
        chain = []
        k = start
        while state[k] == 0:
            state[k] = 1
            chain.append(k)
            k = heads[k - 1]
        if state[k] == 1:  # walked back into the current chain
            return Cycle(start, tuple(chain[chain.index(k):]))
        for j in chain:
            state[j] = 2
    return None
