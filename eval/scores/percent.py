"""Percentages and F1 as every score in :mod:`pmask.eval` reports them."""
from __future__ import annotations


def percent(num: float, den: float) -> float:
    """``100 * num / den``, or 0.0 when nothing was counted (``den == 0``).

    Example:
        >>> percent(3, 4), percent(0, 0)
        (75.0, 0.0)
    """
    return 100.0 * num / den if den else 0.0


def f1(precision: float, recall: float) -> float:
    """Harmonic mean of ``precision`` and ``recall`` (any common scale), 0.0 when both are 0.

    Example:
        >>> f1(50.0, 100.0)
        66.66666666666667
    """
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
