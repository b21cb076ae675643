"""How ``pmask bench``'s tables and plots (:mod:`pmask.eval.studies.bench.results`,
:mod:`pmask.eval.studies.bench.plots`) read a row: the score it is judged by and the probe it is labelled with.

Example:
    >>> primary_key({"decoder": "mst"}), primary_key({"baseline": "right-chain"})
    ('uuas', 'uas')
    >>> row_probe({"probe": "pair", "metric": "cpmi"}, frozenset({"pair"}))
    'pair cpmi'
    >>> row_probe({"probe": "pair", "metric": "dist", "faithful": True})
    'pair faithful'
"""
from __future__ import annotations

from typing import Any

from pmask.common.errors import PmaskError
from pmask.corpora.provenance import recorded_impact
from pmask.eval.scores.columns import decoder_headline, row_headline

__all__ = ["primary_key", "row_probe", "several_metrics"]


def primary_key(row: dict[str, Any]) -> str:
    """The score a row is judged by: its decoder's headline (:func:`pmask.eval.scores.columns.decoder_headline`:
    ``uas``, ``uuas`` for an undirected decoder or baseline, ``f1_sentence`` for constituency trees)."""
    name = row.get("decoder") or row.get("baseline")
    if name:
        try:
            return decoder_headline(name)
        except PmaskError:   # a decoder this version does not know: what the row holds decides
            pass
    return row_headline(row)


def row_probe(row: dict[str, Any], several: frozenset[str] = frozenset()) -> str:
    """The row's probe, and its metric (``pair cpmi``) when the probe is one of ``several``, the
    probes benched with several metrics (:func:`several_metrics`); ``faithful`` added to a row of an authors'
    pipeline (``bench --faithful``)."""
    probe = recorded_impact(row)["probe"]   # a row of an earlier release names no probe: pair
    label = f"{probe} {row['metric']}" if probe in several and row.get("metric") else probe
    return f"{label} faithful" if row.get("faithful") else label


def several_metrics(rows: Any) -> frozenset[str]:
    """The probes whose rows name more than one metric (``bench --metrics``): their labels name the metric."""
    seen: dict[str, set[Any]] = {}
    for row in rows:
        seen.setdefault(recorded_impact(row)["probe"], set()).add(row.get("metric"))
    return frozenset(p for p, m in seen.items() if len(m) > 1)


