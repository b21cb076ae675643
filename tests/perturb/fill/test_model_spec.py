"""``ModelSpec`` resolves its settings in one ordered step (:func:`pmask.perturb.fill.model_spec.resolve_impact`):
the authors' pipeline (``--faithful``), then the named model's recorded defaults, then the entries'
defaults. Each test pins a case where the order decides the result (issue 32)."""
from __future__ import annotations

import itertools
import re

import pytest

from pmask.perturb.engine.impact_settings import UNSET, ImpactSettings
from pmask.perturb.fill.model_spec import ModelSpec, resolve_impact

TINY = "pmask-tiny-en"   # the bundled model, which records metric prob for the pair probe


def impact(metric=None, probe=None, tokenize=None, context=None, subword=None) -> ImpactSettings:
    return ImpactSettings(metric, subword, tokenize, probe, context)


def test_the_bundled_models_recorded_metric_named_or_by_default():
    assert ModelSpec(TINY).resolve().impact.metric == "prob"
    assert ModelSpec().resolve().impact.metric == "prob"                  # no name: the bundled model, its defaults
    assert ModelSpec().resolve(name=False).impact.metric == "dist"        # a loaded model given: no recorded default
    assert ModelSpec().with_defaults().impact.metric == "dist"
    assert ModelSpec("bert-base-uncased").resolve().impact.metric == "dist"


def test_the_recorded_metric_is_the_pair_probes_only():
    assert ModelSpec(TINY, impact=impact(probe="distance")).resolve().impact.metric == "l2"
    assert ModelSpec(TINY, impact=impact(probe="single")).resolve().impact.metric == "dist"
    assert ModelSpec(TINY).for_probe("distance").impact.metric == "l2"
    assert ModelSpec(TINY).for_probe("pair").impact.metric == "prob"


def test_the_faithful_pipeline_comes_before_the_models_recorded_default():
    assert ModelSpec(TINY).resolve(faithful=True).impact.metric == "dist"
    assert ModelSpec(TINY).for_faithful().or_default().with_defaults().impact.metric == "dist"
    assert ModelSpec(TINY).or_default().for_faithful().with_defaults().impact.metric == "prob"   # the other order
    assert ModelSpec(TINY, impact=impact("cos")).resolve(faithful=True).impact.metric == "cos"   # a given one wins


def test_a_metrics_own_pipeline_before_its_probes():
    cpmi = ModelSpec("bert-base-uncased", impact=impact("cpmi")).resolve(faithful=True).impact
    assert (cpmi.tokenize, cpmi.context, cpmi.subword) == ("words-ptb", 30, "sum")
    given = resolve_impact(impact("cpmi", tokenize="words", context=0), faithful=True)
    assert (given.tokenize, given.context) == ("words", 0)               # 0 words of context given is kept
    assert resolve_impact(impact("cpmi")).as_dict() == {"metric": "cpmi", "subword": "sum", "tokenize": "words",
                                                        "probe": "pair", "context": 0}


def test_the_distance_probes_pipeline_renames_its_metric_and_fixes_its_input():
    cos = resolve_impact(impact("cos", "distance"), faithful=True)
    assert (cos.metric, cos.tokenize) == ("cossim", "bare")
    default = resolve_impact(impact(probe="distance"), faithful=True)
    assert (default.metric, default.tokenize) == ("l2", "bare")          # the rename applies to a given cos only
    assert resolve_impact(impact("cos", "distance")).metric == "cos"     # not without --faithful


def test_for_faithful_leaves_the_rest_unset_so_a_stores_own_values_win():
    assert ModelSpec(impact=UNSET).for_faithful().impact == impact("dist")
    assert ModelSpec(impact=impact(probe="distortion")).for_faithful().impact == impact(probe="distortion")


def test_the_head_is_kept_only_for_a_probe_that_keeps_every_head():
    spec = ModelSpec("bert-base-uncased", head=3)
    assert spec.for_probe("attention").head == 3 and spec.for_probe("pair").head is None
    assert spec.for_probe("distance").head is None


@pytest.mark.parametrize("name,metric,probe,tokenize,context", list(itertools.product(
    [None, TINY, "bert-base-uncased"], [None, "dist", "cos", "prob", "cpmi"], [None, "pair", "single"],
    [None, "words"], [None, 0, 5])))
def test_one_step_equals_the_chain_of_methods(name, metric, probe, tokenize, context):
    spec = ModelSpec(name, impact=impact(metric, probe, tokenize, context))
    for faithful in (False, True):
        chain = spec.for_faithful() if faithful else spec
        try:
            expected = chain.or_default().with_defaults()
        except Exception as error:   # a setting the probe does not take: the same refusal
            with pytest.raises(type(error), match=re.escape(str(error))):
                spec.resolve(faithful=faithful)
            continue
        assert spec.resolve(faithful=faithful) == expected
