"""Which model to run and how impacts are computed with it: :class:`ModelSpec` (torch-free).

A small frozen dataclass that :class:`pmask.perturb.source.ImpactSource`, the commands
and ``pmask.eval.studies.bench`` pass around; loading a model imports torch only inside :meth:`ModelSpec.load`.
A request holds one as given (None: not given); :func:`pmask.pipeline.request.resolve` names the model and
chooses every impact setting, and everything here takes a resolved one.

Example:
    >>> ModelSpec("bert-base-uncased", impact=ImpactSettings("dist", "avg", "words", "pair", 0)).impact.metric
    'dist'
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pmask.common.errors import SettingError
from pmask.common.options import RANDOM_PREFIX, check_probe, metric_entry, split_random
from pmask.perturb.engine.impact_settings import UNSET, ImpactSettings
from pmask.perturb.fill.window import check_context_fits
from pmask.perturb.models.bundled import announce_default
from pmask.perturb.store.store_settings import norm_model


@dataclass(frozen=True)
class ModelSpec:
    """A model to load and how impacts are computed with it.

    ``name`` is a hub name, a local directory or ``random:NAME``; ``impact`` holds the impact settings (as
    given in a request: None where not given; resolved below the pipeline wing); ``head`` is read, not
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

    def check_store(self, store: Any) -> None:
        """A :class:`SettingError` naming the store's own value for any setting given here that differs from it
        (the store's settings are a layer of :func:`pmask.pipeline.request.resolve`)."""
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

    def load(self) -> Any:
        """The ``pmask.perturb.models.load.LoadedModel`` of this resolved spec (its name and impact settings chosen:
        :func:`pmask.pipeline.request.resolve`), with what its probe needs from the model checked at load."""
        if not self.name:
            raise ValueError("resolve the request first (pmask.pipeline.request.resolve names the model)")
        impact = self.impact
        check_context_fits(self.name, impact.context_words, str(impact.tokenize))   # a window too small: before loading
        if self.defaulted:
            announce_default(self.name)   # only now: nothing is said before an unrelated error, or when no model loads
        # lazy: loading torch/transformers costs seconds and is not needed for stores or baselines
        from transformers.utils import logging as hf_logging

        from pmask.perturb.models.load import load_model  # torch: only when loading

        hf_logging.disable_progress_bar()
        dtype = None if self.dtype == "auto" else self.dtype
        # a metric of the MLM head is checked below: an encoder-only checkpoint is then said by its refusal alone
        head_metric = metric_entry(impact.metric).mlm_head
        model = load_model(self.name, device=self.device, dtype=dtype, random_init=self.random_init,
                           threads=self.threads, note=not head_metric)
        from pmask.perturb.probes.support import check_support  # what the probe needs, checked at load, in one line

        check_support(model, str(impact.probe), str(impact.metric), subword=str(impact.subword), head=self.head)
        return model


#: A local model directory as an absolute path; a hub name as given (one implementation, the store's).
absolute_if_local = norm_model


def _same_model(given: str, stored: str | None) -> bool | None:
    """Whether a model name names the stored one (None when the store does not say)."""
    if stored is None:
        return None
    return absolute_if_local(given) == absolute_if_local(stored)
