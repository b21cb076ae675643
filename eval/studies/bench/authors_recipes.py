"""``pmask bench --faithful``: which runs are their authors' pipelines, checked as ``pmask parse --faithful`` checks
them, before any model work.

Under ``--faithful`` each probe (with each metric) that has an authors' pipeline
(:meth:`pmask.eval.studies.bench.bench_settings.BenchSettings.pipeline`: the metric's own, else the probe's)
computes its impacts as that pipeline does, into a store of its own (``.faithful``), and is decoded by the
pipeline's decoders in its mode; a probe without one (single, attention) runs its clean pipeline, and says so
in one line. Each row records ``faithful``.
"""
from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any, Sequence

from pmask.eval.studies.bench.decoders import decoders_for
from pmask.pipeline.request import check_request

logger = logging.getLogger(__name__)

__all__ = ["check_faithful"]


def check_faithful(treebanks: Sequence[Any], settings: Any) -> None:
    """Refuse, in one line, a faithful decoding that ``pmask parse --faithful`` would refuse (e.g. root free for
    the authors' Eisner), for every treebank, run and decoder of the bench; log each run that has no authors'
    pipeline (it runs clean).

    Raises:
        SettingError: as :func:`pmask.pipeline.request.check_request` raises it (the pipeline's context, from the
            treebank's file, refused now, not after other stores are filled).
    """
    if not settings.faithful:
        return
    for probe, metric in settings.runs:
        pipeline = settings.recipe(probe, metric)
        if pipeline is None:
            logger.warning("bench: probe %s with metric %s has no authors' pipeline: its rows are its clean "
                           "pipeline's (faithful false)", probe, metric)
            continue
        impact = settings.spec_for(probe, settings.store_metric(metric)).impact
        logger.info("bench: probe %s runs %s's pipeline (metric %s, tokenize %s, context %s)", probe,
                    pipeline.authors, impact.metric, impact.tokenize, impact.context)
        request = settings.request_for(probe, settings.store_metric(metric))
        for tb in treebanks:
            for decoder in decoders_for(tb, settings, probe, metric):
                check_request(replace(request, decoding=settings.decoding_for(probe, metric, decoder)), tb.sentences)
