"""The writers' value formatting: percentages keep two decimals, counts and settings stay as they are."""
from __future__ import annotations


def test_scores_keep_their_decimals():
    from pmask.eval.outputs.writers import fmt_value

    assert [fmt_value(12, True), fmt_value(12.0, True), fmt_value(41.666, True)] == ["12.00", "12.00", "41.67"]
    assert fmt_value(12, False) == "12"   # a count or a setting stays as it is
