"""Which decoders a bench runs on a treebank under a probe: the requested ones that fit the treebank's
task and read what the probe gives (span charts or word-pair matrices), the task's defaults otherwise;
and which probes cannot be scored on a treebank at all (distortion's span charts on a dependency
treebank: no decoder there reads them), skipped there and named.
``settings`` is a :class:`pmask.eval.studies.bench.run.BenchSettings` (its ``decoders``, ``probes``)."""
from __future__ import annotations

from typing import Any, Sequence

from pmask.common.errors import PmaskError, SettingError
from pmask.common.options import SPAN_PROBES
from pmask.common.units import unit_of
from pmask.eval.scores.columns import optional_scores
from pmask.eval.studies.bench.treebanks import Treebank
from pmask.pipeline.request import default_decoders

__all__ = ["decoders_for", "decoders_not_run", "not_scored_line", "probes_not_run"]


def _gives(probe: str | None) -> str:
    return "span charts" if probe in SPAN_PROBES else "word-pair matrices"


def not_scored_line(probe: str, treebank: Treebank, settings: Any = None) -> str:
    """The line saying that ``probe`` is not scored on ``treebank`` (no benched decoder of its task reads
    what the probe gives, or, under ``--faithful``, none is its authors' pipeline's)."""
    pipeline = _recipe(settings, probe, None)
    if pipeline is not None:
        return (f"probe {probe} runs {pipeline.authors}'s pipeline (faithful), which decodes with "
                f"{', '.join(pipeline.decoders)}, and none of them is benched on a {treebank.task} treebank: "
                f"not scored on {treebank.name}")
    return (f"probe {probe} gives {_gives(probe)}, which no benched decoder of a {treebank.task} treebank reads: "
            f"not scored on {treebank.name}")


def decoders_for(treebank: Treebank, settings: Any, probe: str | None = None, metric: str | None = None) -> list[str]:
    """The requested decoders that fit the treebank's task (the task's defaults when none were given) and,
    given a probe, read what it gives (span decoders for span charts, the others for word-pair matrices);
    empty when none does (the probe is not scored on that treebank: :func:`probes_not_run`). Under
    ``bench --faithful`` a probe (with ``metric``, default its one) that has an authors' pipeline is decoded by
    that pipeline's decoders alone: those requested, or all of the task's when none were; on a treebank whose
    unit's faithful decoding is Wu et al.'s discourse pipeline (documents of EDUs), only those with a discourse
    mode (``Decoder.discourse``)."""
    from pmask.eval.studies.bench.scoring import task_of
    from pmask.trees.registry import decoder_reads_spans, get_decoder

    pipeline = _recipe(settings, probe, metric)
    discourse = pipeline is not None and unit_of(treebank.sentences).discourse

    def fits(decoder: str) -> bool:
        if pipeline is not None and decoder not in pipeline.decoders:
            return False
        if discourse and get_decoder(decoder).discourse is None:
            return False
        return probe is None or decoder_reads_spans(decoder) == (probe in SPAN_PROBES)

    if settings.decoders is None:   # the defaults of every run (pmask.pipeline.request), each one benched
        family = getattr(settings, "family", None)
        own = family.default_decoder(treebank.task) if family is not None and pipeline is None else None
        candidates = (pipeline.decoders if pipeline is not None else default_decoders(treebank.task, probe)
                      if probe in SPAN_PROBES else (own,) if own else default_decoders(treebank.task, None))
        return [d for d in candidates if task_of(d) == treebank.task and fits(d)]
    chosen = [d for d in settings.decoders if task_of(d) == treebank.task]
    if not chosen:
        raise PmaskError(f"{treebank.path}: none of the decoders {', '.join(settings.decoders)} "
                         f"produces {treebank.task} trees")
    return [d for d in chosen if fits(d)]


def _recipe(settings: Any, probe: str | None, metric: str | None) -> Any:
    """The authors' pipeline ``probe`` runs in this bench (None: its clean one)."""
    if probe is None or not getattr(settings, "faithful", False):
        return None
    return settings.recipe(probe, metric)


def probes_not_run(treebanks: Sequence[Treebank], settings: Any) -> dict[str, list[str]]:
    """Per treebank, the probes no benched decoder can score there (no store is made for them there).

    Raises:
        SettingError: an optional score asked (``scores``) that scores the trees of none of the treebanks.
        SettingError: a probe that can be scored on none of the treebanks, or a treebank on which none of
            the probes can be scored (either would give no row at all), before any model work.
    """
    probes = list(settings.probes or ())
    tasks = " and ".join(sorted({tb.task for tb in treebanks}))
    for name, cls in optional_scores().items():   # an optional score no treebank's trees can have
        if name in settings.scores and cls.task not in {tb.task for tb in treebanks}:
            raise SettingError(f"{{scores}} {name} scores {cls.task} trees, and every treebank given is a {tasks} "
                               f"treebank; leave it out")
    out = {tb.name: [p for p in probes if not decoders_for(tb, settings, p)] for tb in treebanks}
    for probe in probes:
        if all(probe in out[tb.name] for tb in treebanks) and _recipe(settings, probe, None) is not None:
            raise SettingError(not_scored_line(probe, treebanks[0], settings).split(": not scored")[0] +
                               "; leave it out of {probe}, or bench a treebank whose trees its decoders make")
        if all(probe in out[tb.name] for tb in treebanks):
            given = (f"none of the decoders {', '.join(settings.decoders)} reads them" if settings.decoders
                     else f"no decoder of a {tasks} treebank reads them")
            raise SettingError(f"probe {probe} gives {_gives(probe)}, and {given}: every treebank given is a {tasks} "
                               "treebank; leave it out of {probe}")
    for tb in treebanks:
        if probes and len(out[tb.name]) == len(probes):
            raise SettingError(f"{tb.path}: none of the probes {', '.join(probes)} can be scored on a {tb.task} "
                               "treebank; leave it out, or add a probe whose trees it holds to {probe}")
    return out


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
