"""Metrics (UAS/UUAS, bracket F1), reports and heatmaps.

Only the light metric classes are imported here; ``pmask.eval.report`` / ``pmask.eval.heatmap``
(matplotlib) are imported on use.
"""
from pmask.eval.brackets import BracketScore, evalb_spans, sentence_spans
from pmask.eval.dependency import DependencyScore, length_bucket
from pmask.eval.punct import is_punct_tag, punct_mask

__all__ = [
    "BracketScore",
    "DependencyScore",
    "evalb_spans",
    "is_punct_tag",
    "length_bucket",
    "punct_mask",
    "sentence_spans",
]
