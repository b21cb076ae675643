"""``pmask bench``: many treebanks × layers × decoders with baselines, in one call.

:mod:`.run` computes (resumable stores) and scores (:mod:`.scoring`); :mod:`.results` writes
``results.json``/``.csv``/``.md`` and the plots; :mod:`.html` gives the report its bench page.
"""
from pmask.eval.studies.bench.run import BenchResult, BenchSettings, run_bench

__all__ = ["BenchResult", "BenchSettings", "run_bench"]
