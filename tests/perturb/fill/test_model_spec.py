"""``ModelSpec`` and the impact steps of the one resolution (:func:`pmask.perturb.fill.model_spec.resolve_impact`):
the authors' pipeline (``--faithful``), then the named model's recorded defaults, then the entries' defaults.
Each test pins a case where the order decides the result (issue 32); the whole resolution of a run, decoding
included, is :func:`pmask.pipeline.request.resolve` (``tests/pipeline/test_request.py``)."""
from __future__ import annotations

from pmask.perturb.engine.impact_settings import UNSET, ImpactSettings
from pmask.perturb.fill.model_spec import ModelSpec, resolve_impact

TINY = "pmask-tiny-en"   # the bundled model, which records metric prob for the pair probe


def impact(metric=None, probe=None, tokenize=None, context=None, subword=None) -> ImpactSettings:
    return ImpactSettings(metric, subword, tokenize, probe, context)


def test_the_bundled_models_recorded_metric_named_or_by_default():
    assert ModelSpec(TINY).or_default().with_defaults().impact.metric == "prob"
    assert ModelSpec().or_default().with_defaults().impact.metric == "prob"   # no name: the bundled model's
    assert ModelSpec().with_defaults().impact.metric == "dist"                  # no model: no recorded default
    assert ModelSpec("bert-base-uncased").or_default().with_defaults().impact.metric == "dist"


def test_the_recorded_metric_is_the_pair_probes_only():
    assert resolve_impact(impact(probe="distance"), TINY).metric == "l2"
    assert resolve_impact(impact(probe="single"), TINY).metric == "dist"
    assert resolve_impact(impact(probe="pair"), TINY).metric == "prob"


def test_the_faithful_pipeline_comes_before_the_models_recorded_default():
    assert resolve_impact(UNSET, TINY, faithful=True).metric == "dist"
    assert resolve_impact(impact("cos"), TINY, faithful=True).metric == "cos"   # a given one wins


def test_a_metrics_own_pipeline_before_its_probes():
    cpmi = resolve_impact(impact("cpmi"), "bert-base-uncased", faithful=True)
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


def test_the_faithful_layer_alone_leaves_the_rest_unset_so_a_stores_own_values_win():
    assert resolve_impact(UNSET, faithful=True, recorded=False, defaults=False) == impact("dist")
    assert resolve_impact(impact(probe="distortion"), faithful=True, recorded=False,
                          defaults=False) == impact(probe="distortion")
