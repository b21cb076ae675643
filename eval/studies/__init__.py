"""Studies over layers, probes and treebanks: the layer sweep (:mod:`.sweep`) and a probing study in
one call (:mod:`.bench`: stores, scores, per-probe results and files).

May import :mod:`pmask.eval.outputs`, :mod:`pmask.eval.scores` and :mod:`pmask.eval.comparison`
(and the wings below eval).
"""
