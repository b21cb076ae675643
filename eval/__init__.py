"""Scores and studies: metrics, comparisons, sweeps, heatmaps, the HTML report and ``bench``.

Holds the scores (:mod:`.score` their shared base: addition over sentences and corpora, and the
columns they show; :mod:`.dependency_score` UAS/UUAS, :mod:`.bracket_score` bracket F1; :mod:`.columns`
the columns of every table, asked of them), :mod:`.compare` (predictions next to baselines),
:mod:`.tables` (the comparison and layer-sweep tables, the sweep plot; their writers in :mod:`.output`),
:mod:`.sweep`, :mod:`.impact_maps` and :mod:`.heatmap`, :mod:`.html` (the report) and
:mod:`.bench` (a probing study in one call), :mod:`.display` (what notebooks show) and
:mod:`.frames` (``to_pandas()``), :mod:`.consistency` (inputs made by
different runs). May import every wing below it: ``pmask.common``,
``pmask.corpora``, ``pmask.perturb``, ``pmask.trees``.

Only the light score classes are imported here; ``pmask.eval.tables`` / ``pmask.eval.heatmap``
(matplotlib) are imported on use.
"""
from pmask.eval.bracket_score import BracketScore, evalb_spans, sentence_spans
from pmask.eval.dependency_score import DependencyScore, length_bucket
from pmask.eval.punct import is_punct_tag, punct_mask
from pmask.eval.score import Column, Score

__all__ = [
    "BracketScore",
    "Column",
    "DependencyScore",
    "Score",
    "evalb_spans",
    "is_punct_tag",
    "length_bucket",
    "punct_mask",
    "sentence_spans",
]
