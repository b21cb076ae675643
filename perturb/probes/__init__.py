"""The probes: every parameter-free way pmask reads syntax out of a model, behind one call.

:data:`PROBE_RUNNERS` is the one table of runners (names and descriptions live torch-free in
:data:`pmask.common.options.PROBES`, for the CLI, stores and ``bench``):

- ``pair`` (:mod:`pmask.perturb.engine.runner`): perturbed masking, F[i][j] = d(H(x∖{i})_i, H(x∖{i,j})_i);
- ``single`` (:mod:`.single`): F[i][j] = d(H(x)_i, H(x∖{j})_i), n + 1 sequences;
- ``attention`` and ``distance`` (:mod:`.onepass`): one unmasked pass, attention weights merged
  to words, or distances between words' states / attention distributions (:mod:`.measures`);
- ``distortion`` (:mod:`.distortion`): a span chart, F[l][r-1] = how far the words' states move
  when span l..r-1 is substituted, decontextualized or moved (Li & Lu 2023).

Head selection (:mod:`.heads`) is numpy only; this module imports torch only when a probe runs.
May import ``pmask.common``, ``pmask.corpora`` and the rest of ``pmask.perturb`` (never ``pmask.trees``).

Example:
    >>> from pmask.perturb import load_model                                            # doctest: +SKIP
    >>> F = next(probe_matrices(load_model("bert-base-uncased"), [["A", "cat", "sat"]], "single"))  # doctest: +SKIP
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from pmask.common.options import PROBES, check_probe, default_metric, default_subword, has_heads


@dataclass(frozen=True)
class ProbeRunner:
    """How one probe is computed: its runner and its cost in forward sequences per sentence."""

    name: str
    run: Callable[..., Iterator[np.ndarray | None]]
    sequences: Callable[[int], int]   # forward sequences for a sentence of n words (include_cls layout)
    checkpoint: bool = False          # ``run`` takes the engine's ``checkpoint`` (keeps a sentence under way)


def _pair(model: Any, sentences: Any, **kwargs: Any) -> Iterator[np.ndarray | None]:
    from pmask.perturb import impact_matrices  # the package's name, so a test may stand in for the engine

    return impact_matrices(model, sentences, **kwargs)


def _single(model: Any, sentences: Any, **kwargs: Any) -> Iterator[np.ndarray | None]:
    from pmask.perturb.probes.single import single_matrices

    return single_matrices(model, sentences, **kwargs)


def _one_pass(probe: str) -> Callable[..., Iterator[np.ndarray | None]]:
    def run(model: Any, sentences: Any, **kwargs: Any) -> Iterator[np.ndarray | None]:
        from pmask.perturb.probes.onepass import one_pass_matrices

        return one_pass_matrices(model, sentences, probe=probe, **kwargs)
    return run


def _distortion(model: Any, sentences: Any, **kwargs: Any) -> Iterator[np.ndarray | None]:
    from pmask.perturb.probes.distortion import distortion_charts

    return distortion_charts(model, sentences, **kwargs)


def _distortion_sequences(n: int) -> int:
    from pmask.perturb.probes.distortion import sequences

    return sequences(n)


#: Probe name -> runner; its keys are exactly ``pmask.common.options.PROBES`` (checked below).
PROBE_RUNNERS: dict[str, ProbeRunner] = {
    "pair": ProbeRunner("pair", _pair, lambda n: 1 + n + n * (n - 1) // 2, checkpoint=True),
    "single": ProbeRunner("single", _single, lambda n: n + 1, checkpoint=True),
    "attention": ProbeRunner("attention", _one_pass("attention"), lambda n: 1),
    "distance": ProbeRunner("distance", _one_pass("distance"), lambda n: 1),
    "distortion": ProbeRunner("distortion", _distortion, _distortion_sequences),
}
assert set(PROBE_RUNNERS) == set(PROBES), "every probe needs exactly one runner"


def probe_matrices(model: Any, sentences: Iterable[Any], probe: str = "pair", *,
                   layers: Sequence[int] | int | str = (-1,), metric: str | None = None, subword: str | None = None,
                   context: int = 0, **kwargs: Any) -> Iterator[np.ndarray | None]:
    """Yield one array per sentence (None = too long for the model), in input order, for ``probe``.

    Args:
        model: a ``pmask.perturb.LoadedModel``.
        sentences: lists of words, or objects with ``.words``.
        probe: a key of :data:`PROBE_RUNNERS`.
        layers: hidden-state indices or "all" (see :func:`pmask.common.options.resolve_layers`).
        metric: one of the probe's metrics (:data:`pmask.common.options.PROBE_METRICS`); None = its default.
        subword: the subword policy (None: the metric's default, see :func:`pmask.common.options.default_subword`).
        context: words of neighbouring sentences given as context (:func:`pmask.perturb.fill.context.add_context`;
            the sentences must then be read from a file).
        kwargs: ``batch_tokens``, ``include_cls``, ``progress``, ``stats``, ``fast_path``, ``tokenize``
            (see :func:`pmask.perturb.engine.runner.impact_matrices`).

    Returns:
        float32 ``[len(layers), n, n]`` arrays, or ``[len(layers), H, n, n]`` (every head) for the
        attention-based ones (:func:`pmask.common.options.has_heads`); F[.., i, j] relates word j
        to word i (``n + 1`` with ``include_cls``, index 0 = the first special token).
    """
    metric = metric or default_metric(probe)
    subword = subword or default_subword(metric)
    check_probe(probe, metric, subword)
    if context:
        from pmask.perturb.fill.context import add_context

        sentences = add_context(list(sentences), context)
    return PROBE_RUNNERS[probe].run(model, sentences, layers=layers, metric=metric, subword=subword, **kwargs)


def sequences_per_sentence(probe: str, n_words: int) -> int:
    """Forward sequences ``probe`` runs for a sentence of ``n_words`` words (include_cls layout)."""
    return PROBE_RUNNERS[probe].sequences(n_words)


__all__ = ["PROBE_RUNNERS", "ProbeRunner", "has_heads", "probe_matrices", "sequences_per_sentence"]
