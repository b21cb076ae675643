"""Predictions compared with gold and with baselines, and the result tables: reading a prediction
(:mod:`.prediction`), checking that inputs were made by the same run (:mod:`.consistency`), the
comparison itself (:mod:`.compare`: ``evaluate_files``, ``Evaluation``) and its tables
(:mod:`.tables`: ``Comparison``, ``LayerSweep``, the sweep plot).

May import :mod:`pmask.eval.outputs` and :mod:`pmask.eval.scores` (and the wings below eval).
"""
