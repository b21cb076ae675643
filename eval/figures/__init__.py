"""Heatmaps of impacts: one matrix drawn as a heatmap (:mod:`.heatmap`), a span chart
(:mod:`.span_chart`), and the heatmaps of stored or computed impacts behind ``pmask heatmap``
(:mod:`.impact_maps`). matplotlib is imported when a figure is drawn.

May import :mod:`pmask.eval.outputs`, :mod:`pmask.eval.scores`, :mod:`pmask.eval.comparison` and
:mod:`pmask.eval.studies` (and the wings below eval).
"""
