"""pandas data frames of the scores and studies (``to_pandas()``); pandas is the extra ``pmask[pandas]``.

One row per record, in long ("tidy") form so frames concatenate and group well:

- a comparison: one row per prediction or baseline (``name``, ``kind``, scores, ``settings.<key>``);
- a layer sweep: one row per layer (index ``layer``);
- a bench study: its ``rows``, ``baselines``, ``treebanks`` or ``breakdowns`` (one row per
  treebank × layer × decoder or baseline × breakdown × bucket);
- a score: per sentence, a breakdown (dependencies: by gold relation, arc length, sentence length;
  brackets: by span length, gold label), or every breakdown in long form (``breakdowns``: one row
  per breakdown × bucket, as a bench study's).

Each frame is built by :func:`pmask.common.frames.data_frame` (the pandas extra, row flattening),
the same concept one layer down.

Example:
    >>> from pmask.eval import DependencyScore
    >>> s = DependencyScore(); _ = s.add([2, 0], [2, 0], sent_id="a")
    >>> float(score_frame(s).loc[0, "uas"])
    100.0
"""
from __future__ import annotations

from typing import Any, Mapping

from pmask.common.frames import data_frame
from pmask.common.options import check_choice
from pmask.eval.outputs.writers import ordered_keys, plain_value

BENCH_TABLES = ("rows", "baselines", "breakdowns", "treebanks")
_CELL_COLUMNS = ["correct", "total", "accuracy"]


def score_tables(score: Any) -> list[str]:
    """The tables of a score: ``"sentences"``, each of its breakdowns (``score.breakdowns()``: a
    ``DependencyScore``'s by gold relation, arc length, sentence length; a ``BracketScore``'s by span
    length and gold label) and ``"breakdowns"``, all of them in long form."""
    breakdowns = score.breakdowns() if hasattr(score, "breakdowns") else {}
    return ["sentences", *breakdowns, "breakdowns"] if breakdowns else ["sentences"]


def comparison_frame(comparison: Any) -> Any:
    """One row per comparison row: name, kind, the task's scores first, other metrics, ``settings.<key>``."""
    keys = ordered_keys(comparison.score_keys(), [r.metrics for r in comparison.rows])
    rows = [{"name": r.name, "kind": r.kind, **{k: r.metrics.get(k) for k in keys},
             "settings": plain_value(r.settings)} for r in comparison.rows]
    return data_frame(rows, columns=None if rows else ["name", "kind", *comparison.score_keys()])


def sweep_frame(sweep: Any) -> Any:
    """One row per layer (the index), the sweep's metric keys first."""
    keys = ordered_keys(sweep.metric_keys, [m for _, m in sweep.rows])
    return data_frame(({"layer": layer, **{k: m.get(k) for k in keys}} for layer, m in sweep.rows),
                      columns=["layer", *keys], index="layer")


def score_frame(score: Any, table: str = "sentences", *, subtypes: bool = False) -> Any:
    """Per-sentence scores (``DependencyScore`` or ``BracketScore``), or a breakdown.

    Args:
        score: the score object.
        table: ``"sentences"``; for a ``DependencyScore`` ``"relation"`` (gold relation),
            ``"arc_length"`` (gold arc length), ``"sentence_length"``; for a ``BracketScore``
            ``"span_length"`` (P/R/F1 by span length), ``"label"`` (recall by gold label); or
            ``"breakdowns"`` (all of them in long form: ``breakdown`` and ``bucket`` columns).
        subtypes: count relation subtypes on their own (``nmod:poss``) rather than under their
            universal relation (:func:`pmask.eval.scores.dependency_score.relation_key`).
    """
    check_choice("score table", table, score_tables(score))
    if table == "sentences":
        return data_frame(s.to_dict() for s in score.per_sentence)
    breakdowns = score.breakdowns(subtypes=subtypes)
    if table == "breakdowns":
        rows = _breakdown_rows([breakdowns])
        return data_frame(rows, columns=None if rows else ["breakdown", "bucket", *_CELL_COLUMNS])
    cells = breakdowns[table]
    return data_frame(({table: key, **row} for key, row in cells.items()),
                      columns=None if cells else [table, *_CELL_COLUMNS])


def _breakdown_rows(breakdowns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Long form of breakdown records: their plain values (treebank, layer, ...) repeated on one row per
    breakdown (each value that is a table: bucket -> cell) and bucket."""
    out: list[dict[str, Any]] = []
    for item in breakdowns:
        key = {k: v for k, v in item.items() if not isinstance(v, Mapping)}
        for kind, table in item.items():
            if isinstance(table, Mapping):
                out.extend({**key, "breakdown": kind, "bucket": bucket, **cell} for bucket, cell in table.items())
    return out


def bench_frame(result: Any, table: str = "rows") -> Any:
    """A table of a ``BenchResult``: ``"rows"`` (treebank × layer × decoder), ``"baselines"``,
    ``"breakdowns"`` (long form: ``breakdown`` and ``bucket`` columns) or ``"treebanks"``."""
    check_choice("bench table", table, BENCH_TABLES)
    if table == "breakdowns":
        return data_frame(_breakdown_rows(result.breakdowns))
    return data_frame(getattr(result, table))


def evaluation_frame(evaluation: Any, table: str = "comparison") -> Any:
    """An ``Evaluation``'s ``"comparison"`` (prediction and baselines) or a table of its score
    (relation subtypes merged or kept as the evaluation was made: ``evaluation.subtypes``)."""
    check_choice("evaluation table", table, ["comparison", *score_tables(evaluation.score)])
    if table == "comparison":
        return comparison_frame(evaluation.table)
    return score_frame(evaluation.score, table, subtypes=evaluation.subtypes)
