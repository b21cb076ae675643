"""Percentages as every score in :mod:`pmask.eval` reports them."""
from __future__ import annotations


def percent(num: float, den: float) -> float:
    """``100 * num / den``, or 0.0 when nothing was counted (``den == 0``).

    Example:
        >>> percent(3, 4), percent(0, 0)
        (75.0, 0.0)
    """
    return 100.0 * num / den if den else 0.0
