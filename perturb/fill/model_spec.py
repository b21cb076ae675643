"""Which model to run and how impacts are computed with it: :class:`ModelSpec` (torch-free).

A small frozen dataclass that :class:`pmask.perturb.source.ImpactSource`, the commands
and ``pmask.eval.studies.bench`` pass around; loading a model imports torch only inside :meth:`ModelSpec.load`.
:func:`resolve_impact` holds the impact steps of the one resolution of a run's defaults
(:func:`pmask.pipeline.request.resolve`, which every command and ``pmask.parse`` call).

Example:
    >>> ModelSpec("random:bert-base-uncased").with_defaults().impact.metric
    'dist'
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from pmask.common.errors import SettingError
from pmask.common.options import (
    DEFAULT_PROBE,
    RANDOM_PREFIX,
    check_probe,
    default_subword,
    metric_entry,
    metric_recipe,
    split_random,
)
from pmask.common.probe_entries import PROBE_ENTRIES
from pmask.perturb.engine.impact_settings import UNSET, ImpactSettings
from pmask.perturb.fill.window import check_context_fits
from pmask.perturb.models.bundled import DEFAULT_MODEL, announce_default, bundled_model
from pmask.perturb.store.store_settings import norm_model


@dataclass(frozen=True)
class ModelSpec:
    """A model to load and how impacts are computed with it.

    ``name`` is a hub name, a local directory or ``random:NAME``; ``impact`` fields left None
    take their defaults, or a store's own values when a store is read; ``head`` is read, not
    stored (stores hold every head); ``dtype`` "auto" is the engine's default for the device.
    """

    name: str | None = None
    random_init: bool = False
    impact: ImpactSettings = UNSET
    device: str = "auto"
    dtype: str = "auto"
    batch_tokens: int | None = None
    threads: int | None = None       # torch's CPU threads (None: torch's default)
    head: str | int | None = None    # None: "mean"; which attention head is decoded (attention-based probes)
    # the name is the default model because none was given (said in one line when it is loaded); not compared:
    # naming the bundled model means exactly what omitting it means
    defaulted: bool = field(default=False, compare=False, repr=False)

    def with_defaults(self) -> ModelSpec:
        """This spec with unset impact settings given their defaults (:func:`resolve_impact`: a bundled
        model's recorded ones, then the entries': probe pair, its metric (dist for pair), the metric's
        subword policy, tokenize words); a one-line error for a metric, subword policy or head the probe
        does not take."""
        return replace(self, impact=self.impact_defaults().check(self.head))

    def impact_defaults(self) -> ImpactSettings:
        """The impact settings this spec computes with (:func:`resolve_impact` without ``--faithful``; no
        check: :meth:`with_defaults` checks them)."""
        return resolve_impact(self.impact, self.name)

    def model_defaults(self) -> ModelSpec:
        """This spec with the named model's recorded defaults for the settings left unset (a bundled
        model's pair-probe metric): whether the bundled model was named or taken by default, and
        whatever store is read or written, the same settings result.

        Example:
            >>> ModelSpec("pmask-tiny-en").model_defaults().impact.metric
            'prob'
            >>> ModelSpec("bert-base-uncased").model_defaults() == ModelSpec("bert-base-uncased")
            True
        """
        return replace(self, impact=resolve_impact(self.impact, self.name, defaults=False))

    def named(self) -> ModelSpec:
        """This spec, naming the default model (:data:`pmask.perturb.models.bundled.DEFAULT_MODEL`) when it names
        none; :meth:`load` says so in one line, once, when it loads it."""
        if self.name:
            return self
        return replace(self, name=DEFAULT_MODEL, defaulted=True)

    def or_default(self) -> ModelSpec:
        """:meth:`named`, with the model's recorded defaults for the settings left unset
        (:meth:`model_defaults`). Called where a model will be run, not where a store is read.

        Example:
            >>> ModelSpec("bert-base-uncased").or_default() == ModelSpec("bert-base-uncased")
            True
            >>> ModelSpec().or_default() == ModelSpec("pmask-tiny-en").or_default()
            True
        """
        return self.named().model_defaults()

    def check_store(self, store: Any) -> ModelSpec:
        """This spec with the store's impact settings; a :class:`SettingError` naming the store's own
        value for any setting given here that differs from it."""
        held = store.settings
        for name, mine, theirs in self.impact.conflicts(held.impact)[:1]:   # the first conflict
            raise SettingError(f"{{{name}}} {mine} conflicts with the store {store.path}, which holds "
                               f"{name} {theirs}; leave {{{name}}} out or compute another store")
        if self.name is not None:
            name, random_init = split_random(self.name)
            random_init = random_init or self.random_init
            if _same_model(name, held.model) is False or bool(held.random_init) != random_init:
                stored = f"{RANDOM_PREFIX if held.random_init else ''}{held.model}"
                raise SettingError(f"{{model}} {self.name} conflicts with the store {store.path}, which was made "
                                   f"with {stored}; leave {{model}} out to read the store")
        check_probe(held.impact.probe, held.impact.metric, held.impact.subword, self.head)
        return replace(self, impact=held.impact)

    def load(self) -> Any:
        """The ``pmask.perturb.models.load.LoadedModel`` (the default model when no name is given, see
        :meth:`or_default`)."""
        if not self.name:
            return self.or_default().load()
        impact = self.impact_defaults()
        check_context_fits(self.name, impact.context or 0, impact.tokenize)   # a window too small: before loading
        if self.defaulted:
            announce_default(self.name)   # only now: nothing is said before an unrelated error, or when no model loads
        # lazy: loading torch/transformers costs seconds and is not needed for stores or baselines
        from transformers.utils import logging as hf_logging

        from pmask.perturb.models.load import load_model  # torch: only when loading

        hf_logging.disable_progress_bar()
        dtype = None if self.dtype == "auto" else self.dtype
        impact = self.impact
        # a metric of the MLM head is checked below: an encoder-only checkpoint is then said by its refusal alone
        head_metric = impact.probe is not None and impact.metric is not None and metric_entry(impact.metric).mlm_head
        model = load_model(self.name, device=self.device, dtype=dtype, random_init=self.random_init,
                           threads=self.threads, note=not head_metric)
        if impact.probe is not None:   # what the probe needs from the model is checked at load, in one line
            from pmask.perturb.probes.support import check_support

            check_support(model, impact.probe, impact.metric, subword=impact.subword or default_subword(impact.metric),
                          head=self.head)
        return model


def resolve_impact(impact: ImpactSettings, model: str | None = None, *, faithful: bool = False,
                   recorded: bool = True, defaults: bool = True) -> ImpactSettings:
    """The impact steps of the one resolution of a run's defaults (:func:`pmask.pipeline.request.resolve` runs
    them one layer at a time, after a store's own settings, and records where each value came from): each
    setting left unset (None) takes the first value of these layers, always in this order (a later one never
    overrides an earlier one):

    1. ``faithful``: the authors' pipeline (:class:`pmask.common.probe_entries.AuthorsRecipe`), the metric's own if it has
       one (cpmi: Hoover et al.'s) else the probe's: its metric, its variant of the metric given (a rename),
       its tokenisation and context;
    2. ``recorded``: the named model's recorded defaults (a bundled model's metric for the pair probe);
    3. ``defaults``: the entries' (:mod:`pmask.common.probe_entries`): probe pair, the probe's first metric, the
       metric's subword policy (else avg), tokenize words, context 0.

    Args:
        impact: the settings given (None = unset).
        model: the model's name (None: no recorded defaults).
        faithful, recorded, defaults: which layers apply.

    Returns:
        The settings, unchecked (:meth:`ImpactSettings.check` checks them).

    Example:
        >>> resolve_impact(UNSET, "pmask-tiny-en").metric, resolve_impact(UNSET, "pmask-tiny-en", faithful=True).metric
        ('prob', 'dist')
        >>> resolve_impact(ImpactSettings("cpmi", None, None, None, None), faithful=True).as_dict()
        {'metric': 'cpmi', 'subword': 'sum', 'tokenize': 'words-ptb', 'probe': 'pair', 'context': 30}
    """
    if faithful:
        impact = _faithful(impact)
    if recorded and impact.metric is None and impact.probe in (None, DEFAULT_PROBE):   # recorded for the pair probe
        found = bundled_model(model)
        metric = found.defaults.get("metric") if found else None
        impact = replace(impact, metric=metric) if metric else impact
    return impact.with_defaults() if defaults else impact


def _faithful(impact: ImpactSettings) -> ImpactSettings:
    """``impact`` with the settings its authors' pipeline fixes (the metric's own, else the probe's)."""
    probe = PROBE_ENTRIES.get(impact.probe or "pair")
    pipeline = metric_recipe(impact.metric) or (probe.faithful if probe else None)
    if pipeline is None:
        return impact
    metric = impact.metric or pipeline.metric
    return replace(impact, metric=pipeline.renames.get(metric, metric) if metric else None,
                   tokenize=impact.tokenize or pipeline.tokenize,
                   context=pipeline.context if impact.context is None else impact.context)


#: A local model directory as an absolute path; a hub name as given (one implementation, the store's).
absolute_if_local = norm_model


def _same_model(given: str, stored: str | None) -> bool | None:
    """Whether a model name names the stored one (None when the store does not say)."""
    if stored is None:
        return None
    return absolute_if_local(given) == absolute_if_local(stored)
