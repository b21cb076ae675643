"""How impacts are computed from a model: :class:`ImpactSettings` (metric, subword policy, tokenisation mode,
probe, context).

The one definition of these settings (torch-free). Everything that carries them holds one of these rather
than repeating the fields: :class:`~pmask.perturb.fill.model_spec.ModelSpec`,
:class:`~pmask.perturb.store.StoreSettings`, the engine's ``RunSettings``, a fill's
:class:`~pmask.perturb.fill.compute.FillRequest` and ``pmask.eval.studies.bench.run.BenchSettings``. Every
field is given: the settings of a request as given hold None for a value not given (:data:`UNSET`), which
:func:`pmask.pipeline.request.resolve` alone chooses; every function of the library below the pipeline wing
takes resolved ones (:meth:`ImpactSettings.check` refuses a None). The names and descriptions of each
setting's values live in :mod:`pmask.common.options`.

Example:
    >>> ImpactSettings("cos", "avg", "words", "pair", 0).as_dict()
    {'metric': 'cos', 'subword': 'avg', 'tokenize': 'words', 'probe': 'pair', 'context': 0}
    >>> UNSET.metric is None
    True
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Callable

from pmask.common.errors import SettingError
from pmask.common.options import check_context, check_metric, check_probe
from pmask.common.probe_entries import PROBE_ENTRIES
from pmask.common.tokenization import TOKENIZE_ENTRIES, tokenize_mode
from pmask.perturb.alignment import get_aligner


@dataclass(frozen=True)
class ImpactSettings:
    """The impact metric, the subword policy, the tokenisation mode, the probe and the words of context (see
    :mod:`pmask.common.options`).

    None is "not given" in a request as given (:data:`UNSET`); :func:`pmask.pipeline.request.resolve` chooses it
    (a store's own value wins when a store is read).
    """

    metric: str | None
    subword: str | None
    tokenize: str | None
    probe: str | None
    context: int | None     # words of neighbouring sentences given as context (``--context``; 0 = none)

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

    @property
    def context_words(self) -> int:
        """:attr:`context` of resolved settings, as an int; a ``ValueError`` for settings not resolved yet."""
        if self.context is None:
            raise ValueError("context is not chosen yet: resolve the request first (pmask.pipeline.request.resolve)")
        return self.context

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


#: The resolver of a run that computes impacts, connected from above (:func:`connect_resolver`).
_resolvers: list[Callable[[str, str, ImpactSettings], ImpactSettings]] = []


def connect_resolver(resolver: Callable[[str, str, ImpactSettings], ImpactSettings]) -> None:
    """Let the lower wings ask what ``pmask impact`` would choose for the settings a command leaves out (an
    unfinished store's ``--resume`` command spells only the others): ``resolver(model, unit, given)`` is the
    resolved settings of a run of model ``model`` over a corpus of ``unit`` records given ``given`` (None: left
    out). The resolver lives above this wing (:func:`pmask.pipeline.request.impact_choice`); ``pmask/__init__.py``
    connects it, as it connects the notebook renderers (:mod:`pmask.common.display`)."""
    _resolvers[:] = [resolver]


def resolved_impact(model: str, unit: str, given: ImpactSettings) -> ImpactSettings | None:
    """What the connected resolver chooses for ``given`` (see :func:`connect_resolver`); None when none is connected."""
    return _resolvers[0](model, unit, given) if _resolvers else None
