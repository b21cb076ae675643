"""Which model to run and how impacts are computed with it: :class:`ModelSpec` (torch-free).

A small frozen dataclass that :class:`pmask.perturb.source.ImpactSource`, the commands
and ``pmask.eval.bench`` pass around; loading a model imports torch only inside :meth:`ModelSpec.load`.

Example:
    >>> ModelSpec("random:bert-base-uncased").with_defaults().impact.metric
    'dist'
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from pmask.common.errors import SettingError
from pmask.common.options import RANDOM_PREFIX, check_probe, default_subword, has_heads, split_random
from pmask.perturb.engine.settings import UNSET, ImpactSettings
from pmask.perturb.models.bundled import DEFAULT_MODEL, announce_default, bundled_model
from pmask.perturb.store.settings import norm_model

#: Words of context ``--faithful --metric cpmi`` pads each sentence to (Hoover et al.'s PUD runs: ``--pad 30``).
FAITHFUL_CPMI_CONTEXT = 30


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
        """This spec with unset impact settings given their defaults (a bundled model's recorded ones, see
        :meth:`model_defaults`, then probe pair, its metric (dist for pair), subword avg, tokenize words);
        a one-line error for a metric, subword policy or head the probe does not take."""
        impact = self.impact_defaults().check(self.head)
        return replace(self, impact=impact)

    def impact_defaults(self) -> ImpactSettings:
        """The impact settings this spec computes with: :meth:`model_defaults`, then the probe's defaults
        (no check; :meth:`with_defaults` checks them)."""
        return self.model_defaults().impact.with_defaults()

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
        found = bundled_model(self.name)
        metric = found.defaults.get("metric") if found else None
        if metric and self.impact.metric is None and self.impact.probe in (None, "pair"):
            return replace(self, impact=replace(self.impact, metric=metric))
        return self

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

    def for_faithful(self) -> ModelSpec:
        """This spec for ``--faithful``: the authors' pipeline measures distances, so the pair probe's
        metric is ``dist`` unless one was given (whatever a bundled model's recorded default). With
        metric ``cpmi`` it is Hoover et al.'s pipeline: tokenisation ``words-ptb`` and 30 words of
        context (their PUD runs' ``--pad 30``) unless given. Probe ``distance`` runs as Kim et al.'s
        code does: without special tokens (``tokenize`` ``bare`` unless given) and with their ``cos``,
        (cosine similarity + 1) / 2 (metric ``cossim``)."""
        if self.impact.metric == "cpmi":
            return replace(self, impact=replace(self.impact, tokenize=self.impact.tokenize or "words-ptb",
                                                context=FAITHFUL_CPMI_CONTEXT if self.impact.context is None
                                                else self.impact.context))
        if self.impact.metric is None and self.impact.probe in (None, "pair"):
            return replace(self, impact=replace(self.impact, metric="dist"))
        if self.impact.probe == "distance":
            metric = "cossim" if self.impact.metric == "cos" else self.impact.metric
            return replace(self, impact=replace(self.impact, metric=metric, tokenize=self.impact.tokenize or "bare"))
        return self

    def for_probe(self, probe: str) -> ModelSpec:
        """This spec for ``probe`` (of several run with one model): :meth:`or_default`, the probe's own
        default metric unless one was given, and the head only for a probe that keeps every head."""
        spec = replace(self, impact=replace(self.impact, probe=probe), head=None).or_default().with_defaults()
        return replace(spec, head=self.head if has_heads(probe, spec.impact.metric) else None)

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
        """The ``pmask.perturb.LoadedModel`` (the default model when no name is given, see :meth:`or_default`)."""
        if not self.name:
            return self.or_default().load()
        if self.defaulted:
            announce_default(self.name)   # only now: nothing is said before an unrelated error, or when no model loads
        # lazy: loading torch/transformers costs seconds and is not needed for stores or baselines
        from transformers.utils import logging as hf_logging

        from pmask.perturb import load_model

        hf_logging.disable_progress_bar()
        dtype = None if self.dtype == "auto" else self.dtype
        model = load_model(self.name, device=self.device, dtype=dtype, random_init=self.random_init,
                           threads=self.threads)
        impact = self.impact
        if impact.probe is not None:   # what the probe needs from the model is checked at load, in one line
            from pmask.perturb.probes.support import check_support

            check_support(model, impact.probe, impact.metric, subword=impact.subword or default_subword(impact.metric),
                          head=self.head)
        return model


#: A local model directory as an absolute path; a hub name as given (one implementation, the store's).
absolute_if_local = norm_model


def _same_model(given: str, stored: str | None) -> bool | None:
    """Whether a model name names the stored one (None when the store does not say)."""
    if stored is None:
        return None
    return absolute_if_local(given) == absolute_if_local(stored)
