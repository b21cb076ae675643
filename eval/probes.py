"""The fixed half split that keeps "best head" honest (labels of probes: ``pmask.common.labels.probe_label``).

Choosing one head out of L × H on the sentences it is then scored on flatters the attention-based
probes; :func:`split_halves` fixes which sentences choose and which report (see
``pmask.eval.bench.heads``).
"""
from __future__ import annotations

from typing import Any, Sequence


def split_halves(n: int) -> tuple[list[int], list[int]]:
    """The fixed split of ``n`` sentence positions: even positions (0, 2, 4, …) choose, odd ones
    (1, 3, 5, …) report. Deterministic, needs no seed, and interleaves long and short stretches
    of a treebank.

    Example:
        >>> split_halves(5)
        ([0, 2, 4], [1, 3])
    """
    return list(range(0, n, 2)), list(range(1, n, 2))


def pick(items: Sequence[Any], positions: Sequence[int]) -> list[Any]:
    """``items`` at ``positions``, in that order."""
    return [items[k] for k in positions]
