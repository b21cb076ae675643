"""Inputs of one command from different runs: compared by model, weights, probe, metric, subword
policy, tokenisation and head; what an input does not record is not compared."""
from __future__ import annotations

import json

import pytest

from pmask.common.errors import SettingError
from pmask.eval.comparison.consistency import Origin, bench_origin, check_same_origin, store_origin
from pmask.perturb.engine.impact_settings import ImpactSettings


def origin(label, probe="pair", metric="dist", head=None):
    return Origin(label, model="/m", impact=ImpactSettings(metric, "avg", "words", probe), head=head)


def test_probe_and_head_must_agree():
    check_same_origin([origin("a"), origin("b")])
    with pytest.raises(SettingError, match="probe: a has pair, b has single"):
        check_same_origin([origin("a"), origin("b", probe="single")])
    with pytest.raises(SettingError, match="head: a has 1, b has mean"):
        check_same_origin([origin("a", "attention", "weight", 1), origin("b", "attention", "weight", "mean")])
    check_same_origin([origin("a", "attention", "weight", 1), Origin("b", model="/m")])   # b records nothing


def test_a_store_without_a_probe_is_a_pair_store():
    held = store_origin("s", {"model": {"name": "/m"}, "metric": "dist", "subword": "avg"})
    assert held.impact == ImpactSettings("dist", "avg", "words", "pair")


def test_a_bench_of_several_probes_compares_what_they_share(tmp_path):
    def bench(name, **settings):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(json.dumps({"model": {"name": "/m"}, "settings": settings}))
        return bench_origin(tmp_path / name)

    several = bench("several", probes=["pair", "attention"], metric=None, subword="avg", tokenize="words")
    check_same_origin([origin("pred"), several])
    alone = bench("alone", probes=["attention"], metric="weight", subword="avg", tokenize="words")
    with pytest.raises(SettingError, match="probe: pred has pair, the bench .* has attention"):
        check_same_origin([origin("pred"), alone])
    old = bench("old", metric="cos", subword="avg", tokenize="words")   # before probes: a pair bench
    with pytest.raises(SettingError, match="metric: pred has dist, the bench .* has cos"):
        check_same_origin([origin("pred"), old])
