"""How impacts are computed from a model: :class:`ImpactSettings` (metric, subword policy, tokenisation mode).

The one definition of these three settings and their defaults (torch-free). Everything that
carries them holds one of these rather than repeating the fields: :class:`~pmask.perturb.model_spec.ModelSpec`
(where a field may be left unset: None = "the default, or a store's own"),
:class:`~pmask.perturb.store.StoreSettings`, the engine's ``RunSettings``, a fill's
:class:`~pmask.perturb.fill.FillRequest` and ``pmask.eval.bench.run.BenchSettings``. The names
and descriptions of each setting's values live in :mod:`pmask.common.options`.

Example:
    >>> ImpactSettings(metric="cos").as_dict()
    {'metric': 'cos', 'subword': 'avg', 'tokenize': 'words'}
    >>> ImpactSettings(None, "first", None).with_defaults()
    ImpactSettings(metric='dist', subword='first', tokenize='words')
"""
from __future__ import annotations

from dataclasses import dataclass, fields

from pmask.common.options import METRICS, SUBWORD_POLICIES, check_choice
from pmask.perturb.alignment import get_aligner


@dataclass(frozen=True)
class ImpactSettings:
    """The impact metric, the subword policy and the tokenisation mode (see :mod:`pmask.common.options`).

    A field set to None is not chosen yet: :meth:`with_defaults` gives it the default, and a
    store's own value wins when a store is read (see ``ModelSpec.check_store``).
    """

    metric: str | None = "dist"
    subword: str | None = "avg"
    tokenize: str | None = "words"

    def with_defaults(self) -> ImpactSettings:
        """These settings with every unset field given its default (dist, avg, words)."""
        default = ImpactSettings()
        return ImpactSettings(self.metric or default.metric, self.subword or default.subword,
                              self.tokenize or default.tokenize)

    def check(self) -> ImpactSettings:
        """These settings, or a one-line ``OptionError`` (a ``ValueError``) naming the first unknown value
        (None included); tokenisation modes are those of the aligner registry ``pmask.perturb.alignment.ALIGNERS``."""
        check_choice("metric", self.metric, METRICS)
        check_choice("subword policy", self.subword, SUBWORD_POLICIES)
        get_aligner(self.tokenize)
        return self

    def as_dict(self) -> dict[str, str | None]:
        """``{"metric", "subword", "tokenize"}``, in that order (as provenance records them)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def conflicts(self, other: ImpactSettings) -> list[tuple[str, str, str | None]]:
        """``(name, mine, theirs)`` for each field set here that differs from ``other``'s."""
        theirs = other.as_dict()
        return [(name, mine, theirs[name]) for name, mine in self.as_dict().items()
                if mine is not None and mine != theirs[name]]


#: Nothing chosen: the defaults, or a store's own settings when a store is read.
UNSET = ImpactSettings(None, None, None)
