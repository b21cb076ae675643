"""How impacts are computed from a model: :class:`ImpactSettings` (metric, subword policy, tokenisation mode, probe).

The one definition of these four settings and their defaults (torch-free). Everything that
carries them holds one of these rather than repeating the fields: :class:`~pmask.perturb.fill.model_spec.ModelSpec`
(where a field may be left unset: None = "the default, or a store's own"),
:class:`~pmask.perturb.store.StoreSettings`, the engine's ``RunSettings``, a fill's
:class:`~pmask.perturb.fill.compute.FillRequest` and ``pmask.eval.studies.bench.run.BenchSettings``. The names
and descriptions of each setting's values live in :mod:`pmask.common.options`.

Example:
    >>> ImpactSettings(metric="cos").as_dict()
    {'metric': 'cos', 'subword': 'avg', 'tokenize': 'words', 'probe': 'pair', 'context': 0}
    >>> ImpactSettings(None, "first", None, None).with_defaults()
    ImpactSettings(metric='dist', subword='first', tokenize='words', probe='pair', context=0)
    >>> ImpactSettings("cpmi", None, None, None).with_defaults().subword   # the chain rule sums pieces
    'sum'
    >>> ImpactSettings(None, None, None, "distance").with_defaults().metric   # each probe's own default
    'l2'
"""
from __future__ import annotations

from dataclasses import dataclass, fields

from pmask.common.errors import SettingError
from pmask.common.options import (
    DEFAULT_PROBE,
    check_context,
    check_metric,
    check_probe,
    default_metric,
    default_subword,
)
from pmask.common.probe_entries import PROBE_ENTRIES
from pmask.common.tokenization import TOKENIZE_ENTRIES, tokenize_mode
from pmask.perturb.alignment import get_aligner

#: The metrics of the pair probe over documents of EDUs (on the mean of each EDU's piece states; the first is
#: the default, which outranks a model's recorded one: ``prob`` and ``cpmi`` read one piece's probability).
DOCUMENT_METRICS = ("dist", "cos")


def document_sequences(units: int) -> int:
    """Forward sequences of the pair probe over a document of ``units`` masked units: U(U+1)/2 (each unit
    alone, each pair u < v once: the input with {u, v} masked serves F[u][v] and F[v][u]). Torch-free, so
    that the cost of a run (:mod:`pmask.perturb.probes.cost`) is counted by the engine's own formula.

    Example:
        >>> document_sequences(15)   # 14 EDUs and the [CLS] unit
        120
    """
    return units * (units + 1) // 2


@dataclass(frozen=True)
class ImpactSettings:
    """The impact metric, the subword policy, the tokenisation mode and the probe (see :mod:`pmask.common.options`).

    A field set to None is not chosen yet: :meth:`with_defaults` gives it the default, and a
    store's own value wins when a store is read (see ``ModelSpec.check_store``).
    """

    metric: str | None = "dist"
    subword: str | None = "avg"
    tokenize: str | None = "words"
    probe: str | None = DEFAULT_PROBE
    context: int | None = 0     # words of neighbouring sentences given as context (``--context``; 0 = none)

    def with_defaults(self) -> ImpactSettings:
        """These settings with every unset field given its default (avg, words, pair, and the probe's
        own default metric: dist for pair and single)."""
        default = ImpactSettings()
        probe = self.probe or default.probe
        metric = self.metric or default_metric(probe)
        return ImpactSettings(metric, self.subword or default_subword(metric), self.tokenize or default.tokenize,
                              probe, self.context or 0)

    def check(self, head: str | int | None = None) -> ImpactSettings:
        """These settings, or a one-line error: an ``OptionError`` (a ``ValueError``) naming the first
        unknown value (None included), a ``SettingError`` for a metric, subword policy or ``head`` the
        probe does not take; tokenisation modes are those of the aligner registry
        ``pmask.common.tokenization.TOKENIZE_ENTRIES``."""
        if self.probe is None:   # the engine's own check: whichever probe runs the metric (its caller checked that)
            check_metric(self.metric, self.subword)
        else:
            check_probe(self.probe, self.metric, self.subword, head)
        get_aligner(self.tokenize)
        check_context(self.context)
        mode = tokenize_mode(self.tokenize)
        if self.context and not mode.takes_context:
            padded = " or ".join(n for n, m in TOKENIZE_ENTRIES.items() if m.takes_context)
            raise SettingError(f"{{context}} pads the words of a sentence with its neighbours' words; it takes "
                               f"{{tokenize}} {padded}, not {mode.name}")
        if mode.probes is not None and self.probe is not None and self.probe not in mode.probes:
            raise SettingError(f"{{tokenize}} {mode.name} lays the sentence out for probe {' or '.join(mode.probes)}, "
                               f"not {self.probe}")
        bare = [name for name, entry in PROBE_ENTRIES.items() if entry.bare_input]
        if not mode.special_tokens and self.probe is not None and self.probe not in bare:
            raise SettingError(f"{{tokenize}} {mode.name} (no special tokens, Kim et al.'s input) is for probe "
                               f"{' or '.join(bare)}, not {self.probe}")
        return self

    def as_dict(self) -> dict[str, str | int | None]:
        """``{"metric", "subword", "tokenize", "probe", "context"}``, in that order (as provenance records them)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def conflicts(self, other: ImpactSettings) -> list[tuple[str, str | int, str | int | None]]:
        """``(name, mine, theirs)`` for each field set here that differs from ``other``'s."""
        theirs = other.as_dict()
        return [(name, mine, theirs[name]) for name, mine in self.as_dict().items()
                if mine is not None and mine != theirs[name]]


#: Nothing chosen: the defaults, or a store's own settings when a store is read.
UNSET = ImpactSettings(None, None, None, None, None)
