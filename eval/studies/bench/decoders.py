"""Which decoders a bench runs on a treebank under a probe: the requested ones that fit the treebank's
task and read what the probe gives (span charts or word-pair matrices), the task's defaults otherwise.
``settings`` is a :class:`pmask.eval.studies.bench.run.BenchSettings` (its ``decoders``)."""
from __future__ import annotations

from typing import Any, Sequence

from pmask.common.errors import PmaskError
from pmask.common.options import SPAN_PROBES
from pmask.eval.studies.bench.treebanks import Treebank
from pmask.pipeline.request import default_decoders

__all__ = ["decoders_for", "decoders_not_run"]


def decoders_for(treebank: Treebank, settings: Any, probe: str | None = None) -> list[str]:
    """The requested decoders that fit the treebank's task (the task's defaults when none were given) and,
    given a probe, read what it gives (span decoders for span charts, the others for word-pair matrices)."""
    from pmask.eval.studies.bench.scoring import task_of
    from pmask.trees.registry import decoder_reads_spans

    def fits(decoder: str) -> bool:
        return probe is None or decoder_reads_spans(decoder) == (probe in SPAN_PROBES)

    if settings.decoders is None:   # the defaults of every run (pmask.pipeline.request), each one benched
        if probe in SPAN_PROBES and treebank.task == "constituency":
            return list(default_decoders(treebank.task, probe))
        return list(default_decoders(treebank.task))
    chosen = [d for d in settings.decoders if task_of(d) == treebank.task]
    if not chosen:
        raise PmaskError(f"{treebank.path}: none of the decoders {', '.join(settings.decoders)} "
                         f"produces {treebank.task} trees")
    if probe is not None and not any(fits(d) for d in chosen):
        raise PmaskError(f"{treebank.path}: none of the decoders {', '.join(chosen)} reads the "
                         f"{'span charts' if probe in SPAN_PROBES else 'word-pair matrices'} of probe {probe}")
    return [d for d in chosen if fits(d)]


def decoders_not_run(treebanks: Sequence[Treebank], settings: Any) -> dict[str, list[str]]:
    """Per treebank, the requested decoders that do not fit its task (they are not run there).

    Raises:
        PmaskError: a requested decoder that fits none of the treebanks (it would give no row at all).
    """
    from pmask.eval.studies.bench.scoring import task_of

    requested = list(settings.decoders or [])
    tasks = {tb.task for tb in treebanks}
    useless = [d for d in requested if task_of(d) not in tasks]
    if useless:
        raise PmaskError(f"decoders {', '.join(useless)}: they produce {task_of(useless[0])} trees, but every treebank "
                         f"given is a {' and '.join(sorted(tasks))} treebank; leave them out of --decoders")
    return {tb.name: [d for d in requested if task_of(d) != tb.task] for tb in treebanks}
