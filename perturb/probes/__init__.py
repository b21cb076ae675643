"""The probes: every parameter-free way pmask reads syntax out of a model, behind one call.

Each probe is one module here that holds its code and registers its entry
(:class:`pmask.common.probe_entries.ProbeEntry`: names, descriptions, metrics, what it needs and
yields, its runner and its cost) and the entries of the metrics that are its own
(:class:`~pmask.common.probe_entries.MetricEntry`, each with its computation):

- ``pair`` (:mod:`.pair`): perturbed masking, F[i][j] = d(H(x∖{i})_i, H(x∖{i,j})_i), run by the engine
  (:mod:`pmask.perturb.engine.runner`); metrics ``dist``, ``prob``, ``cos``, and ``cpmi`` (:mod:`.cpmi`,
  its chain-rule job);
- ``single`` (:mod:`.single`): F[i][j] = d(H(x)_i, H(x∖{j})_i), n + 1 sequences;
- ``attention`` (:mod:`.attention`): attention weights merged to words, metric ``weight``;
- ``distance`` (:mod:`.distance`): distances between words' states or attention distributions, measured
  by the metrics of :mod:`.measures`;
- ``distortion`` (:mod:`.distortion`): a span chart, F[l][r-1] = how far the words' states move
  when span l..r-1 is substituted, decontextualized or moved (Li & Lu 2023).

Model families other than the masked LMs read some of them their own way (``ModelFamily.metric_jobs`` and
``readings``, filled in here beside the jobs): a causal LM's ``cpmi`` (:mod:`.cpmi_causal`), ``pair`` and
``single`` (:mod:`.causal_readings`), XLNet's ``cpmi`` (:mod:`.cpmi_permutation`).

Importing this package imports each of those modules, which registers their entries:
``pmask/__init__.py`` imports it, so every registry is complete once ``pmask`` is imported. The
modules import torch only when a probe runs (:mod:`.onepass`, the one-pass machinery, :mod:`.pooling`
and :mod:`.support` load it), so importing them loads no torch. Head selection
(:mod:`.attention_heads`) is numpy only. May import ``pmask.common``, ``pmask.corpora`` and the rest of
``pmask.perturb`` (never ``pmask.trees``).

Example:
    >>> from pmask.perturb.models.load import load_model                                # doctest: +SKIP
    >>> impact = ImpactSettings("dist", "avg", "words", "single", 0)
    >>> F = next(probe_matrices(load_model("bert-base-uncased"), [["A", "cat", "sat"]], impact))  # doctest: +SKIP
"""
from __future__ import annotations

from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from pmask.common.options import has_attention_heads, probe_entry
from pmask.perturb.engine.impact_settings import ImpactSettings

# The probe modules, in documentation order: each registers its entries as it is imported, and the order
# they are registered in is the order of --probe's and --metric's choices, of their help and of every table.
# isort: off
from pmask.perturb.probes import pair         # probe pair; metrics dist, prob, cos
from pmask.perturb.probes import cpmi         # metric cpmi (the pair probe's, with its own sequences)
from pmask.perturb.probes import measures     # metrics l1, l2, jsd, hellinger, cossim (probe distance's)
from pmask.perturb.probes import single       # probe single
from pmask.perturb.probes import attention    # probe attention; metric weight
from pmask.perturb.probes import distance     # probe distance
from pmask.perturb.probes import distortion   # probe distortion; metrics all, sub, dc, move
# the model families' own readings of these probes and metrics (ModelFamily.metric_jobs, readings)
from pmask.perturb.probes import cpmi_causal, cpmi_permutation, causal_readings  # noqa: F401
# isort: on

#: The modules that register probes and metrics, in the order they register them.
PROBE_MODULES = (pair, cpmi, measures, single, attention, distance, distortion)


def probe_matrices(model: Any, sentences: Iterable[Any], impact: ImpactSettings, *,
                   layers: Sequence[int] | int | str, **kwargs: Any) -> Iterator[np.ndarray | None]:
    """Yield one array per sentence (None = too long for the model), in input order, for ``impact.probe``.

    Args:
        model: a ``pmask.perturb.models.load.LoadedModel``.
        sentences: lists of words, or objects with ``.words``.
        impact: resolved impact settings (:func:`pmask.pipeline.request.resolve`): the probe (a key of
            :data:`pmask.common.probe_entries.PROBE_ENTRIES`), one of its metrics, the subword policy, the
            tokenisation mode and the words of neighbouring sentences given as context
            (:func:`pmask.perturb.alignment.neighbours.add_context`; the sentences must then be read from a file).
        layers: hidden-state indices or "all" (see :func:`pmask.common.options.resolve_layers`).
        kwargs: ``batch_tokens``, ``include_cls``, ``progress``, ``stats``, ``fast_path``
            (see :func:`pmask.perturb.engine.runner.impact_matrices`), ``checkpoint`` for a probe that takes one.

    Returns:
        float32 ``[len(layers), n, n]`` arrays, or ``[len(layers), H, n, n]`` (every head) for the
        attention-based ones (:func:`pmask.common.options.has_attention_heads`); F[.., i, j] relates word j
        to word i (``n + 1`` with ``include_cls``, index 0 = the first special token).
    """
    impact.check()
    if impact.context:
        from pmask.perturb.alignment.neighbours import add_context

        sentences = add_context(list(sentences), impact.context)
    return probe_entry(impact.probe).runner(model, sentences, layers=layers, metric=str(impact.metric),
                                            subword=str(impact.subword), tokenize=str(impact.tokenize), **kwargs)


def sequences_per_sentence(probe: str, n_words: int) -> int:
    """Forward sequences ``probe`` runs for a sentence of ``n_words`` words (include_cls layout)."""
    return probe_entry(probe).sequences(n_words)


__all__ = ["PROBE_MODULES", "has_attention_heads", "probe_matrices", "sequences_per_sentence"]
