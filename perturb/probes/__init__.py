"""The probes: every parameter-free way pmask reads syntax out of a model, behind one call.

Each probe is one entry of :data:`pmask.common.probes.PROBE_ENTRIES` (torch-free: names, descriptions,
metrics, what it needs and yields, for the CLI, stores and ``bench``), whose ``runner`` and
``sequences`` name their functions as ``"module:function"``; :func:`~pmask.common.probes.resolve` imports them:

- ``pair`` (:mod:`pmask.perturb.engine.runner`): perturbed masking, F[i][j] = d(H(x∖{i})_i, H(x∖{i,j})_i);
- ``single`` (:mod:`.single`): F[i][j] = d(H(x)_i, H(x∖{j})_i), n + 1 sequences;
- ``attention`` and ``distance`` (:mod:`.onepass`): one unmasked pass, attention weights merged
  to words, or distances between words' states / attention distributions (:mod:`.measures`);
- ``distortion`` (:mod:`.distortion`): a span chart, F[l][r-1] = how far the words' states move
  when span l..r-1 is substituted, decontextualized or moved (Li & Lu 2023).

Head selection (:mod:`.attention_heads`) is numpy only; this module imports torch only when a probe runs.
May import ``pmask.common``, ``pmask.corpora`` and the rest of ``pmask.perturb`` (never ``pmask.trees``).

Example:
    >>> from pmask.perturb.models.load import load_model                                # doctest: +SKIP
    >>> F = next(probe_matrices(load_model("bert-base-uncased"), [["A", "cat", "sat"]], "single"))  # doctest: +SKIP
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from pmask.common.options import check_probe, default_metric, default_subword, has_heads, probe_entry
from pmask.common.probes import PROBE_ENTRIES, resolve


@dataclass(frozen=True)
class ProbeRunner:
    """How one probe is computed: its runner and its cost in forward sequences per sentence (resolved from
    its entry, :data:`pmask.common.probes.PROBE_ENTRIES`)."""

    name: str
    run: Callable[..., Iterator[np.ndarray | None]]
    sequences: Callable[[int], int]   # forward sequences for a sentence of n words (include_cls layout)
    checkpoint: bool = False          # ``run`` takes the engine's ``checkpoint`` (keeps a sentence under way)

    @classmethod
    def of(cls, probe: str) -> ProbeRunner:
        """The runner of ``probe``'s entry, its functions imported now."""
        entry = probe_entry(probe)
        return cls(entry.name, resolve(entry.runner), resolve(entry.sequences), entry.checkpoint)


class _Runners(Mapping[str, ProbeRunner]):
    def __getitem__(self, probe: str) -> ProbeRunner:
        if probe not in PROBE_ENTRIES:
            raise KeyError(probe)
        return ProbeRunner.of(probe)

    def __iter__(self) -> Iterator[str]:
        return iter(PROBE_ENTRIES)

    def __len__(self) -> int:
        return len(PROBE_ENTRIES)


#: Probe name -> runner, a view of :data:`pmask.common.probes.PROBE_ENTRIES` (each runner resolved when read).
PROBE_RUNNERS: Mapping[str, ProbeRunner] = _Runners()


def pair_sequences(n: int) -> int:
    """Forward sequences of probe pair for n words: the unmasked one, n with one word masked, n(n-1)/2 pairs."""
    return 1 + n + n * (n - 1) // 2


def probe_matrices(model: Any, sentences: Iterable[Any], probe: str = "pair", *,
                   layers: Sequence[int] | int | str = (-1,), metric: str | None = None, subword: str | None = None,
                   context: int = 0, **kwargs: Any) -> Iterator[np.ndarray | None]:
    """Yield one array per sentence (None = too long for the model), in input order, for ``probe``.

    Args:
        model: a ``pmask.perturb.models.load.LoadedModel``.
        sentences: lists of words, or objects with ``.words``.
        probe: a key of :data:`pmask.common.probes.PROBE_ENTRIES`.
        layers: hidden-state indices or "all" (see :func:`pmask.common.options.resolve_layers`).
        metric: one of the probe's metrics (:data:`pmask.common.options.PROBE_METRICS`); None = its default.
        subword: the subword policy (None: the metric's default, see :func:`pmask.common.options.default_subword`).
        context: words of neighbouring sentences given as context
            (:func:`pmask.perturb.alignment.neighbours.add_context`; the sentences must then be read from a file).
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
        from pmask.perturb.alignment.neighbours import add_context

        sentences = add_context(list(sentences), context)
    run = resolve(probe_entry(probe).runner)
    return run(model, sentences, layers=layers, metric=metric, subword=subword, **kwargs)


def sequences_per_sentence(probe: str, n_words: int) -> int:
    """Forward sequences ``probe`` runs for a sentence of ``n_words`` words (include_cls layout)."""
    return resolve(probe_entry(probe).sequences)(n_words)


__all__ = ["PROBE_RUNNERS", "ProbeRunner", "has_heads", "pair_sequences", "probe_matrices", "resolve",
           "sequences_per_sentence"]
