"""Scores and studies: metrics, comparisons, sweeps, heatmaps, the HTML report and ``bench``.

Holds the metrics (:mod:`.metric` their shared base: addition over sentences and corpora;
:mod:`.dependency_score` UAS/UUAS, :mod:`.bracket_score` bracket F1), :mod:`.compare`
(predictions next to baselines), :mod:`.report` (tables, sweep plots; their writers in :mod:`.output`),
:mod:`.sweep`, :mod:`.impact_maps` and :mod:`.heatmap`, :mod:`.html` (the report) and
:mod:`.bench` (a probing study in one call), :mod:`.display` (what notebooks show) and
:mod:`.frames` (``to_pandas()``), :mod:`.consistency` (inputs made by
different runs). May import every wing below it: ``pmask.common``,
``pmask.corpora``, ``pmask.perturb``, ``pmask.trees``.

Only the light metric classes are imported here; ``pmask.eval.report`` / ``pmask.eval.heatmap``
(matplotlib) are imported on use.
"""
from pmask.eval.bracket_score import BracketScore, evalb_spans, sentence_spans
from pmask.eval.dependency_score import DependencyScore, length_bucket
from pmask.eval.metric import Metric
from pmask.eval.punct import is_punct_tag, punct_mask

__all__ = [
    "BracketScore",
    "DependencyScore",
    "Metric",
    "evalb_spans",
    "is_punct_tag",
    "length_bucket",
    "punct_mask",
    "sentence_spans",
]
