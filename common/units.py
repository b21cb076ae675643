"""What a record's units are: words of a sentence, or the elementary discourse units (EDUs) of a document;
one :class:`UnitEntry` each, in the registry :data:`UNITS` (torch-free).

A record (a :class:`pmask.corpora.Sentence`) names its unit in ``Sentence.unit``; code asks the entry
(``unit_entry(s.unit).record``, ``unit_of(sentences).job``), never the unit's name: its nouns ("sentence" and
"word", "document" and "EDU") for every message and table, the engine job its records run as, the texts the
authors' reader leaves (``--faithful``), and which settings apply to it (a refusal in one line, naming the
setting, before any model work: :meth:`UnitEntry.refusal`).

``word`` is registered here (the default: a record is a sentence of words); ``edu`` beside its job, in
:mod:`pmask.perturb.engine.documents` (imported by ``pmask/__init__.py``, torch-free). What the engine asks of a
unit (its job, its lengths) is :mod:`pmask.perturb.engine.units`, the same concept one wing up.

Example:
    >>> import pmask   # registers every unit
    >>> [(u.record, u.noun) for u in UNITS.values()]
    [('sentence', 'word'), ('document', 'EDU')]
    >>> UNITS["edu"].records(1), UNITS["word"].units(3)
    ('1 document', '3 words')
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pmask.common.labels import either, plural, short_label
from pmask.common.probe_entries import METRIC_ENTRIES, PROBE_ENTRIES
from pmask.common.registry import Registry

__all__ = ["UNITS", "UnitEntry", "unit_entry", "unit_marked", "unit_of"]


@dataclass(frozen=True)
class UnitEntry:
    """A kind of unit a record is made of.

    Attributes:
        name, description: the value of ``Sentence.unit`` (and of the API's ``unit=``) and one line for docs.
        record, noun: what a record of these units is called ("document") and what one unit is ("EDU").
        split: a record given as one string (the API) -> its units (words: at whitespace; EDUs: one a line).
        least, why_least: the fewest units a record holds, and why (a discourse tree needs two EDUs).
        long: a unit is many words (an EDU): labelled by its index and first words, not in full.
        marked: a CoNLL-U file of such records says so in a ``# units = NAME`` comment (words are CoNLL-U's own).
        job: the engine job its records run as in place of the probe's (a ``pmask.perturb.engine.jobs.SentenceJob``
            subclass; None: the probe's or the metric's own).
        sequences: with a :attr:`job`, its forward sequences for a record of U units (the [CLS] unit counted).
        authors_texts: under ``--faithful`` without a store, the records as the authors' reader leaves them
            (None: as read).
        probes, subwords, tokenize: the probes, subword policies and tokenisation modes it takes (None: every one).
        takes_context: takes ``--context`` (words of neighbouring records).
        pooled: each unit's pieces are pooled into one state, which only metrics with ``MetricEntry.pools`` read;
            ``pooling`` says how, for messages.
        discourse: ``--faithful`` decodes its records with the decoders' discourse mode (``Decoder.discourse``,
            Wu et al.'s discourse pipeline).
        skips_long: a record longer than the model's positions is left out with a warning (sentences); False:
            every such record is named and the run refused before any model work (a document is never truncated
            nor left out).
    """

    name: str
    description: str
    record: str
    noun: str
    split: Callable[[str], list[str]]
    least: int = 1
    why_least: str = "a sentence needs at least one word"
    long: bool = False
    marked: bool = False
    job: type[Any] | None = None
    sequences: Callable[[int], int] | None = None
    authors_texts: Callable[[Sequence[Any]], list[Any]] | None = None
    probes: tuple[str, ...] | None = None
    subwords: tuple[str, ...] | None = None
    tokenize: tuple[str, ...] | None = None
    takes_context: bool = True
    pooled: bool = False
    pooling: str = ""
    discourse: bool = False
    skips_long: bool = True

    def records(self, n: int) -> str:
        """``n`` records, counted: "1 document", "3 sentences"."""
        return plural(n, self.record)

    def units(self, n: int) -> str:
        """``n`` units, counted: "3 EDUs"."""
        return plural(n, self.noun)

    def labels(self, units: Sequence[str]) -> list[str]:
        """Short labels of a record's units: words as they are (:func:`pmask.common.labels.short_label`); long
        units (EDUs) as their 1-based index and first words, recognisable and short.

        Example:
            >>> import pmask
            >>> UNITS["edu"].labels(["We present a parser", "which beats the state of the art on four treebanks ."])
            ['1 We present a parser', '2 which beats the…']
        """
        if not self.long:
            return [short_label(str(u)) for u in units]
        return [short_label(f"{k} {u}") for k, u in enumerate(units, start=1)]

    @property
    def kind(self) -> str:
        """What a corpus of it is, for messages: "documents of EDUs", "sentences of words"."""
        return f"{self.record}s of {self.noun}s"

    def takes_metric(self, metric: str) -> bool:
        """Whether its records can be measured with ``metric`` (a pooled unit: only a metric that pools)."""
        return not self.pooled or METRIC_ENTRIES[metric].pools

    def metrics(self, probe: str | None) -> tuple[str, ...]:
        """The metrics of ``probe`` it takes, in the probe's order (its first is the default on this unit)."""
        return tuple(m for m in PROBE_ENTRIES[str(probe)].metrics if self.takes_metric(m))

    def refusal(self, probe: str | None, metric: str, subword: str, tokenize: str, context: int) -> str | None:
        """Why settings do not apply to this unit, in one line naming the first setting that does not (as
        ``{probe}``, ``{metric}``, ... which the CLI shows as its flags), or None when they all do: the probe
        first, so that a metric chosen for a refused probe is never blamed (None: not asked, the engine's).

        Example:
            >>> import pmask
            >>> UNITS["edu"].refusal("single", "dist", "avg", "words", 0)
            'documents of EDUs take {probe} pair only, not single'
        """
        if probe is not None and self.probes is not None and probe not in self.probes:
            return f"{self.kind} take {{probe}} {either(self.probes)} only, not {probe}"
        if metric in METRIC_ENTRIES and not self.takes_metric(metric):
            takes = self.metrics(probe) if probe in PROBE_ENTRIES else tuple(n for n in METRIC_ENTRIES
                                                                             if self.takes_metric(n))
            return f"{self.kind} take {{metric}} {' or '.join(takes)} ({self.pooling}), not {metric}"
        if self.subwords is not None and subword not in self.subwords:
            return f"{self.kind} take {{subword}} {either(self.subwords)} only ({self.pooling}), not {subword}"
        if self.tokenize is not None and tokenize not in self.tokenize:
            return (f"{self.kind} take {{tokenize}} {either(self.tokenize)} only (each {self.noun} is tokenised "
                    f"on its own), not {tokenize}")
        if context and not self.takes_context:
            return f"{self.kind} take no {{context}} (each {self.record} is read whole, on its own); leave it out"
        return None


#: The units, in documentation order (``word`` first: a record is a sentence of words unless it says otherwise).
UNITS: Registry[UnitEntry] = Registry("unit")

WORD = UNITS.register(UnitEntry(
    "word", "a sentence of words (every treebank and text format)", record="sentence", noun="word",
    split=str.split))


def unit_entry(name: str | None) -> UnitEntry:
    """The entry of unit ``name``; a one-line :class:`~pmask.common.errors.OptionError` listing the units
    otherwise."""
    return UNITS.lookup(name)


def unit_marked(text: str) -> UnitEntry | None:
    """The unit a ``# units = TEXT`` comment names (its name or its noun, any case), None for none.

    Example:
        >>> import pmask
        >>> unit_marked("EDU").name
        'edu'
    """
    wanted = text.strip().lower()
    return next((u for u in UNITS.values() if wanted in (u.name.lower(), u.noun.lower())), None)


def unit_of(records: Sequence[Any]) -> UnitEntry:
    """The unit of a corpus: its first record's (one unit per corpus), words for an empty one.

    Example:
        >>> unit_of([]).name
        'word'
    """
    return unit_entry(getattr(records[0], "unit", WORD.name)) if records else WORD
