"""The probe and metric registry (``pmask.common.probes``): every entry is consistent, and a new
probe or metric is one entry — CLI choices and help, validation, defaults, store manifests,
decoder pairing and the runner all follow from it (issue 32)."""
from __future__ import annotations

import argparse
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from pmask.common import options
from pmask.common.errors import OptionError, SettingError
from pmask.common.probes import METRIC_ENTRIES, PROBE_ENTRIES, SPAN_CHART, WORD_PAIRS, Faithful, MetricEntry, ProbeEntry
from pmask.perturb.engine.jobs import SentenceJob
from pmask.perturb.probes import probe_matrices, resolve, sequences_per_sentence
from pmask.trees.registry import DECODERS

from library_files import library_files

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", list(PROBE_ENTRIES))
def test_every_probe_entry_is_consistent(name):
    entry = PROBE_ENTRIES[name]
    assert entry.name == name and entry.description.split(":", 1)[0].strip()
    assert entry.metrics and set(entry.metrics) <= set(METRIC_ENTRIES)
    assert set(entry.head_metrics) <= set(entry.metrics)
    assert set(entry.subwords or ()) <= set(options.SUBWORD_POLICIES)
    assert entry.yields in (WORD_PAIRS, SPAN_CHART)
    assert callable(resolve(entry.runner))                      # the runner imports
    cost = resolve(entry.sequences)(5)
    assert isinstance(cost, int) and cost >= 1
    if entry.faithful:
        for decoder in entry.faithful.decoders:                  # its pipeline's decoders exist and read what it yields
            assert decoder in DECODERS and DECODERS[decoder].needs_model and DECODERS[decoder].supports_faithful
            assert DECODERS[decoder].spans == entry.spans
        assert entry.faithful.metric in (None, *entry.metrics)
        assert set(entry.faithful.renames) <= set(entry.metrics) >= set(entry.faithful.renames.values())
        assert entry.faithful.tokenize in (None, *options.TOKENIZE_MODES)


@pytest.mark.parametrize("name", list(METRIC_ENTRIES))
def test_every_metric_entry_is_consistent(name):
    entry = METRIC_ENTRIES[name]
    assert entry.name == name and entry.description
    assert any(name in p.metrics for p in PROBE_ENTRIES.values()), f"no probe takes metric {name}"
    assert entry.mlm_head or not entry.log_prob
    assert entry.subword in (None, *options.SUBWORD_POLICIES) and bool(entry.subword) == bool(entry.subword_reason)
    if entry.job:
        assert issubclass(resolve(entry.job), SentenceJob)
    if entry.faithful:
        assert all(d in DECODERS and not DECODERS[d].spans for d in entry.faithful.decoders)
        assert entry.faithful.symmetrize in (None, *options.SYMMETRIZE_MODES)


def test_the_option_tables_are_views_of_the_entries():
    assert list(options.PROBES) == list(PROBE_ENTRIES) and list(options.METRICS) == list(METRIC_ENTRIES)
    assert options.PROBE_METRICS["single"] == ("dist", "cos", "prob")
    assert options.PROBE_SUBWORDS["pair"] == tuple(options.SUBWORD_POLICIES)
    assert dict(options.METRIC_SUBWORDS) == {"cpmi": "sum"}
    assert tuple(options.HEAD_METRICS) == (("attention", "weight"), ("distance", "jsd"), ("distance", "hellinger"))
    assert tuple(options.DISTANCE_PROBES) == ("distance",) and tuple(options.SPAN_PROBES) == ("distortion",)


def test_no_metric_name_branches_outside_the_entries():
    """Behaviour is asked of the entry (``metric_entry(m).mlm_head``), never of a metric's name."""
    offenders = []
    for path in library_files():
        rel = path.relative_to(ROOT)
        text = path.read_text(encoding="utf-8")
        for needle in ('== "prob"', '== "cpmi"', "MLM_METRICS", "LOG_PROB_METRICS", 'in ("prob", "cpmi")'):
            if needle in text:
                offenders.append(f"{rel}: {needle}")
    assert not offenders


# ---------------------------------------------------------------------------- adding one entry

def _fake_runner(model, sentences, *, layers, metric, subword, **kwargs):
    for s in sentences:
        n = len(s)
        yield np.full((1, n, n), 7.0 if metric == "ratio" else 0.0, dtype=np.float32)


@pytest.fixture
def registered(monkeypatch):
    """A new probe ``shadow`` with a new metric ``ratio``: one probe entry and one metric entry, nothing else."""
    module = types.ModuleType("pmask_fake_probe")
    module.run = _fake_runner
    module.sequences = lambda n: 2 * n
    monkeypatch.setitem(sys.modules, "pmask_fake_probe", module)
    monkeypatch.setitem(METRIC_ENTRIES, "ratio", MetricEntry("ratio", "the ratio of two shadows"))
    monkeypatch.setitem(PROBE_ENTRIES, "shadow", ProbeEntry(
        "shadow", "shadow probe: F[i][j] = the ratio of their shadows; 2n sequences", metrics=("ratio", "dist"),
        runner="pmask_fake_probe:run", sequences="pmask_fake_probe:sequences", subwords=("avg", "first"),
        yields=SPAN_CHART, faithful=Faithful("Nobody", ("cky",))))
    return PROBE_ENTRIES["shadow"]


def _choices(command: str, flag: str) -> tuple[list[str], str]:
    from pmask.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    action = next(a for a in sub.choices[command]._actions if flag in a.option_strings)
    return list(action.choices or []), str(action.help)


def test_a_new_probe_and_metric_reach_the_cli(registered):
    for command in ("impact", "parse", "heatmap"):
        probes, probe_help = _choices(command, "--probe")
        metrics, metric_help = _choices(command, "--metric")
        assert "shadow" in probes and "shadow = shadow probe" in probe_help
        assert "ratio" in metrics and "shadow: ratio, dist" in metric_help
    assert options.split_probes("pair,shadow") == ["pair", "shadow"]
    assert options.split_metrics("ratio") == ["ratio"]


def test_a_new_probe_and_metric_are_validated_and_defaulted(registered):
    options.check_probe("shadow", "ratio", "first")
    assert options.default_metric("shadow") == "ratio" and options.default_subword("ratio") == "avg"
    with pytest.raises(SettingError, match="probe shadow takes metric ratio or dist, not cos"):
        options.check_probe("shadow", "cos", "avg")
    with pytest.raises(SettingError, match="takes subword avg or first, not sum"):
        options.check_probe("shadow", "ratio", "sum")
    with pytest.raises(SettingError, match="pair takes"):
        options.check_probe("pair", "ratio", "avg")
    with pytest.raises(OptionError, match="choose from .*ratio"):
        options.check_probe("shadow", "ratiox", "avg")


def test_a_new_probe_and_metric_reach_manifests_and_decoders(registered):
    from pmask.perturb.engine.impact_settings import ImpactSettings
    from pmask.perturb.store.store_settings import StoreSettings
    from pmask.pipeline.induce import check_pairing

    definitions = StoreSettings("m", ImpactSettings("ratio", "avg", "words", "shadow")).manifest_fields()["definitions"]
    assert definitions["metric"] == "the ratio of two shadows" and definitions["probe"].startswith("shadow probe")
    assert definitions["matrix"].startswith("span chart")
    check_pairing("shadow", "cky")
    with pytest.raises(SettingError, match="shadow gives span charts"):
        check_pairing("shadow", "eisner")


def test_a_new_probe_runs_through_its_runner(registered):
    F = next(probe_matrices(None, [["a", "b", "c"]], "shadow"))
    assert F.shape == (1, 3, 3) and float(F[0, 0, 1]) == 7.0
    assert sequences_per_sentence("shadow", 4) == 8
