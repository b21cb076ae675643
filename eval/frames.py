"""pandas data frames of the scores and studies (``to_pandas()``); pandas is the extra ``pmask[pandas]``.

One row per record, in long ("tidy") form so frames concatenate and group well:

- a comparison: one row per prediction or baseline (``name``, ``kind``, scores, ``settings.<key>``);
- a layer sweep: one row per layer (index ``layer``);
- a bench study: its ``rows``, ``baselines``, ``treebanks`` or ``breakdowns`` (one row per
  treebank × layer × decoder or baseline × breakdown × bucket);
- a score: per sentence, or a breakdown (by gold relation, arc length, sentence length).

Example:
    >>> from pmask.eval import DependencyScore
    >>> s = DependencyScore(); _ = s.add([2, 0], [2, 0], sent_id="a")
    >>> float(score_frame(s).loc[0, "uas"])
    100.0
"""
from __future__ import annotations

from typing import Any

from pmask.common.frames import data_frame
from pmask.common.options import check_choice
from pmask.eval.output import PERCENT_KEYS, ordered_keys, plain_value

#: The tables of a dependency score: per sentence, and each breakdown (``DependencyScore`` methods).
SCORE_TABLES = {"sentences": "per_sentence", "relation": "by_relation", "arc_length": "by_length",
                "sentence_length": "by_sentence_length"}
BENCH_TABLES = ("rows", "baselines", "breakdowns", "treebanks")
BREAKDOWNS = ("relation", "arc_length", "sentence_length")


def comparison_frame(comparison: Any) -> Any:
    """One row per comparison row: name, kind, the task's scores first, other metrics, ``settings.<key>``."""
    keys = ordered_keys(PERCENT_KEYS[comparison.task], [r.metrics for r in comparison.rows])
    rows = [{"name": r.name, "kind": r.kind, **{k: r.metrics.get(k) for k in keys},
             "settings": plain_value(r.settings)} for r in comparison.rows]
    return data_frame(rows, columns=None if rows else ["name", "kind", *PERCENT_KEYS[comparison.task]])


def sweep_frame(sweep: Any) -> Any:
    """One row per layer (the index), the sweep's metric keys first."""
    keys = ordered_keys(sweep.metric_keys, [m for _, m in sweep.rows])
    return data_frame(({"layer": layer, **{k: m.get(k) for k in keys}} for layer, m in sweep.rows),
                      columns=["layer", *keys], index="layer")


def score_frame(score: Any, table: str = "sentences") -> Any:
    """Per-sentence scores (``DependencyScore`` or ``BracketScore``), or a dependency breakdown.

    Args:
        score: the score object.
        table: ``"sentences"``, or for a ``DependencyScore`` ``"relation"`` (gold relation),
            ``"arc_length"`` (gold arc length) or ``"sentence_length"``.
    """
    names = SCORE_TABLES if hasattr(score, "by_relation") else ("sentences",)
    check_choice("score table", table, names)
    if table == "sentences":
        return data_frame(s.to_dict() for s in score.per_sentence)
    cells = getattr(score, SCORE_TABLES[table])()
    return data_frame(({table: key, **row} for key, row in cells.items()),
                      columns=None if cells else [table, "correct", "total", "accuracy"])


def _breakdown_rows(breakdowns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for item in breakdowns:
        key = {k: v for k, v in item.items() if k not in BREAKDOWNS}
        for kind in BREAKDOWNS:
            for bucket, cell in (item.get(kind) or {}).items():
                out.append({**key, "breakdown": kind, "bucket": bucket, **cell})
    return out


def bench_frame(result: Any, table: str = "rows") -> Any:
    """A table of a ``BenchResult``: ``"rows"`` (treebank × layer × decoder), ``"baselines"``,
    ``"breakdowns"`` (long form: ``breakdown`` and ``bucket`` columns) or ``"treebanks"``."""
    check_choice("bench table", table, BENCH_TABLES)
    if table == "breakdowns":
        return data_frame(_breakdown_rows(result.breakdowns))
    return data_frame(getattr(result, table))


def evaluation_frame(evaluation: Any, table: str = "comparison") -> Any:
    """An ``Evaluation``'s ``"comparison"`` (prediction and baselines) or a table of its score."""
    names = SCORE_TABLES if hasattr(evaluation.score, "by_relation") else ("sentences",)
    check_choice("evaluation table", table, ["comparison", *names])
    if table == "comparison":
        return comparison_frame(evaluation.table)
    return score_frame(evaluation.score, table)
