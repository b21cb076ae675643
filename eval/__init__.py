"""Scores and studies: scores, comparisons, sweeps, heatmaps, the HTML report and ``bench``.

Grouped by role, each a subpackage, from the bottom up (a module imports only its own role or one
below it):

- :mod:`.outputs`: JSON-safe values, number formatting, the JSON/CSV/Markdown writers of every
  table, figure files (:mod:`.outputs.writers`) and pandas data frames (:mod:`.outputs.frames`);
- :mod:`.scores`: the shared base (:mod:`.scores.score`: addition over sentences and corpora, the
  columns a score shows), UAS/UUAS, bracket F1, Hoover et al.'s UUAS, punctuation, and the columns
  of every table, asked of the score classes (:mod:`.scores.columns`);
- :mod:`.comparison`: reading a prediction, checking inputs made by different runs, predictions
  next to baselines (:mod:`.comparison.compare`) and the comparison and layer-sweep tables
  (:mod:`.comparison.tables`);
- :mod:`.studies`: the layer sweep (:mod:`.studies.sweep`) and ``bench`` (:mod:`.studies.bench`);
- :mod:`.figures`: heatmaps of impacts and span charts;
- :mod:`.html`: the HTML report (``pmask report``);
- :mod:`.display`: what notebooks show.

May import every wing below it: ``pmask.common``, ``pmask.corpora``, ``pmask.perturb``, ``pmask.trees``,
``pmask.pipeline``. Only the light score classes are imported here; the tables and figures
(matplotlib) are imported on use.
"""
from pmask.eval.scores.bracket_score import BracketScore, evalb_spans, sentence_spans
from pmask.eval.scores.dependency_score import DependencyScore, length_bucket
from pmask.eval.scores.punct import is_punct_tag, punct_mask
from pmask.eval.scores.score import Column, Score

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
