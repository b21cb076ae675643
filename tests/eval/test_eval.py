"""Every caller asks the decoder registry for a task's default decoder and baselines: changing
the registry's per-task table changes ``sweep``, ``bench`` and ``eval`` alike (issue 17)."""
from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from pmask.corpora import Sentence
from pmask.eval.comparison import compare
from pmask.eval.studies.bench import results as bench_files
from pmask.eval.studies.bench import scoring
from pmask.eval.studies.sweep import sweep_layers
from pmask.perturb.engine.impact_settings import ImpactSettings
from pmask.perturb.fill.model_spec import ModelSpec
from pmask.trees import registry, tasks

GOLD = [Sentence(id=f"s{k}", words=list("abcde")[: 3 + k], heads=[2, 0, 2, 3, 4][: 3 + k], path="g.conllu")
        for k in range(3)]


@pytest.fixture()
def other_table():
    """The registry with other dependency defaults and baselines than the shipped ones."""
    dep = replace(tasks.TASKS["dependency"], default_decoders=("cle",),
                  short_baselines=("left-chain", "random-eisner"), primary_baseline="left-chain")
    with tasks.TASKS.registered(dep):
        yield dep


class Source:
    """An impact source of random matrices for GOLD (what sweep_layers reads of one)."""

    sentences = GOLD
    corpus = "g.conllu"
    model_spec = ModelSpec(impact=ImpactSettings("dist", "avg", "words", "pair", 0))

    def held_settings(self):   # impacts as a store holds them: nothing is computed
        return self.model_spec.impact

    def use(self, spec):   # the resolved settings (pmask.pipeline.prepare.prepare)
        self.model_spec = spec

    def family(self, spec):   # a store of the masked family records none
        return None

    def impacts_by_layers(self, layers, include_cls=False):
        rng = np.random.default_rng(0)
        return {1: [SimpleNamespace(F=rng.random((len(s), len(s))) + 0.1, F_cls=None) for s in GOLD]}

    def model_name(self):
        return "stub"

    def describe_model(self):
        return {"name": "stub"}

    def impact_settings(self):
        return {"metric": "dist", "subword": "avg", "tokenize": "words"}


def test_sweep_decodes_with_the_registry_default(other_table):
    result = sweep_layers(Source(), layers=[1], baselines=True)
    assert result.sweep.meta["decoder"] == "cle"
    assert list(result.baselines) == list(registry.decoder_names("dependency", baseline=True))


def test_bench_scores_the_registry_short_baselines(other_table):
    scores = scoring.score_baselines(GOLD, "dependency", root="gold", punct="include", seed=0)
    assert list(scores) == ["left-chain", "random-eisner"]
    direct = compare.baseline_scores("dependency", GOLD, root="gold", names=["left-chain"])["left-chain"]
    assert scores["left-chain"].to_dict() == direct.to_dict()


def test_bench_summary_compares_with_the_registry_primary_baseline(other_table):
    rows = [{"treebank": "t", "language": "xx", "layer": k, "decoder": "eisner", "uas": 40.0 + k} for k in (1, 2)]
    baselines = [{"treebank": "t", "baseline": "right-chain", "uas": 30.0},
                 {"treebank": "t", "baseline": "left-chain", "uas": 12.5}]
    best = bench_files.best_layers(SimpleNamespace(rows=rows, baselines=baselines))
    assert best == [{"treebank": "t", "language": "xx", "probe": "pair", "impact_metric": None, "head": None,
                     "decoder": "eisner",
                     "metric": "uas", "layer": 2,
                     "score": 42.0, "baseline": "right-chain", "baseline_score": 30.0, "margin": 12.0,
                     "reference_baseline": "left-chain", "reference_score": 12.5, "reference_margin": 29.5}]


@pytest.mark.parametrize("task", ["dependency", "constituency"])
def test_eval_scores_every_baseline_of_the_task(task):
    golds = GOLD if task == "dependency" else [
        Sentence(id="p1", words=["a", "b", "c"], tree=registry.decode_constituency("balanced", "abc"), path="p")]
    assert list(compare.baseline_scores(task, golds, root="gold")) == list(registry.decoder_names(task, baseline=True))
