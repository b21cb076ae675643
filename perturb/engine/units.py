"""What the engine asks of the unit of its records (:class:`pmask.common.units.UnitEntry`): the job they run
as, what applies to them, and whether a record too long for the model is left out or refused.

Example:
    >>> import pmask
    >>> from pmask.common.units import UNITS
    >>> UNITS["edu"].job.__name__, UNITS["word"].job is None
    ('DocumentJob', True)
"""
from __future__ import annotations

import itertools
from typing import Any, Callable, Iterable, Sequence

from pmask.common.errors import ModelError, PmaskError
from pmask.common.units import UnitEntry, unit_of
from pmask.perturb.alignment import WordAlignment, get_aligner
from pmask.perturb.engine.impact_settings import ImpactSettings
from pmask.perturb.engine.jobs import SentenceJob

__all__ = ["check_record_lengths", "peek_unit", "refuse_long", "unit_run"]


def check_record_lengths(tokenizer: Any, max_length: int, name: str, aligner: Callable, records: Sequence[Any],
                         unit: UnitEntry) -> list[WordAlignment]:
    """Every record's model input; a :class:`PmaskError` naming all that exceed ``max_length`` positions, for a
    unit whose records are never truncated nor left out (``UnitEntry.skips_long`` False: documents).

    Raises:
        PmaskError: "N documents exceed the 512 positions of MODEL: D14-1030 (530 pieces), …".
    """
    alignments = [aligner(tokenizer, record) for record in records]
    refuse_long([(getattr(r, "id", str(k)), len(a)) for k, (r, a) in enumerate(zip(records, alignments))],
                max_length, name, unit)
    return alignments


def refuse_long(lengths: Sequence[tuple[str, int]], max_length: int, name: str, unit: UnitEntry) -> None:
    """A :class:`PmaskError` naming every record of ``lengths`` (id, pieces) longer than ``max_length`` positions.

    Example:
        >>> from pmask.common.units import UNITS
        >>> refuse_long([("d1", 12), ("d2", 600)], 512, "m", UNITS["edu"])
        Traceback (most recent call last):
        ...
        pmask.common.errors.PmaskError: 1 document exceeds the 512 positions of m: d2 (600 pieces); pmask never \
truncates a document: split it, leave it out (--limit, --max-words) or use a model with more positions
    """
    long = [(rid, length) for rid, length in lengths if length > max_length]
    if long:
        listed = ", ".join(f"{rid} ({length} pieces)" for rid, length in long[:10])
        more = f" and {len(long) - 10} more" if len(long) > 10 else ""
        verb = "exceeds" if len(long) == 1 else "exceed"
        raise PmaskError(f"{unit.records(len(long))} {verb} the {max_length} positions of {name}: {listed}{more}; "
                         f"pmask never truncates a {unit.record}: split it, leave it out (--limit, --max-words) or "
                         f"use a model with more positions")


def peek_unit(records: Iterable[Any]) -> tuple[Iterable[Any], UnitEntry]:
    """The unit of ``records`` (its first record's, one unit per corpus) and the records, a stream left whole."""
    if isinstance(records, Sequence):
        return records, unit_of(records[:1])
    iterator = iter(records)
    first = list(itertools.islice(iterator, 1))
    return itertools.chain(first, iterator), unit_of(first)


def unit_run(model: Any, records: Iterable[Any], impact: ImpactSettings,
             job_type: type[SentenceJob]) -> tuple[Iterable[Any], type[SentenceJob]]:
    """The engine's inputs and job class: records whose unit has a job of its own (documents of EDUs:
    ``DocumentJob``) run as that job, once what applies to them is checked and, where the unit never leaves a
    record out, every record's length; anything else as given.

    Raises:
        PmaskError: settings the unit does not take (its entry's refusal), a probe's job other than the one the
            unit's replaces, or records too long for the model.
    """
    records, unit = peek_unit(records)
    if unit.job is None:
        return records, job_type
    refusal = model.family.refusal(None, None, unit.name)   # a model family that reads words only
    if refusal:
        raise ModelError(f"model {model.name!r}: {refusal}")
    why = unit.refusal(None, str(impact.metric), str(impact.subword), str(impact.tokenize), 0)
    if why is None and job_type is not SentenceJob:
        why = f"{unit.kind} run as {unit.job.__name__}, in place of the word-pair job only, not {job_type.__name__}"
    if why is not None:
        raise PmaskError(why.format(probe="probe", metric="metric", subword="subword", tokenize="tokenize",
                                    context="context"))
    records = list(records)
    if not unit.skips_long:
        check_record_lengths(model.tokenizer, model.max_length, model.name, get_aligner(str(impact.tokenize)),
                             records, unit)
    return records, unit.job
