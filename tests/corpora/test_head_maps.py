"""The one cycle finder (pmask.corpora.head_maps) against brute force, and the error-prefix helper."""
from __future__ import annotations

import itertools

import numpy as np

from pmask.common.errors import at
from pmask.corpora.head_maps import Cycle, find_cycle

from brute_force import all_trees


def test_find_cycle_agrees_with_tree_enumeration():
    for n in range(1, 5):
        trees = {tuple(row) for row in all_trees(n).tolist()}
        for heads in itertools.product(range(n + 1), repeat=n):
            cycle = find_cycle(heads)
            assert (cycle is None) == (heads in trees), heads
            if cycle is not None:   # a real cycle: each word's head is the next one round the loop
                words = cycle.words
                assert all(heads[w - 1] == words[(i + 1) % len(words)] for i, w in enumerate(words))
                reaching = [k for k in range(1, n + 1) if _reaches_root(heads, k)]
                assert cycle.start == min(set(range(1, n + 1)) - set(reaching))


def _reaches_root(heads, k) -> bool:
    for _ in range(len(heads) + 1):
        if k == 0:
            return True
        k = heads[k - 1]
    return k == 0


def test_find_cycle_hand_cases():
    assert find_cycle([]) is None
    assert find_cycle([1]) == Cycle(start=1, words=(1,))                 # self-loop
    assert find_cycle([0, 3, 4, 2]) == Cycle(start=2, words=(2, 3, 4))
    assert find_cycle(np.array([2, 0, 4, 3], dtype=np.int64)) == Cycle(start=3, words=(3, 4))


def test_at():
    assert at("f.conllu:3 (sentence s1)") == "f.conllu:3 (sentence s1): "
    assert at(None) == at("") == ""
