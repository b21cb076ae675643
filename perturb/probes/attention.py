"""Probe ``attention``: a model's attention weights merged to words (Clark et al. 2019), every head.

F[i][j] = Σ_{u ∈ j} mean_{t ∈ i} A[t, u]: the attention A of one head from word i to word j, the mean
over i's pieces' rows of the sum over j's pieces' columns (:func:`merged_attention`), ``[L, H, n, n]``.
Its one metric, ``weight``, is that merged weight itself; ``--head`` picks a head or merges them
(:mod:`.attention_heads`). One unmasked pass per sentence (:mod:`.onepass`, imported when it runs: it
loads torch).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Iterator, Sequence

from pmask.common.probe_entries import METRIC_ENTRIES, PROBE_ENTRIES, MetricEntry, ProbeEntry

if TYPE_CHECKING:
    import numpy as np
    import torch

    from pmask.perturb.probes.onepass import OnePass
    from pmask.perturb.probes.pooling import WordPooling


def merged_attention(run: OnePass, pool: WordPooling, output: torch.Tensor) -> torch.Tensor:
    """Clark et al.'s merge of one sentence's attentions ``[L, H, T, T]`` to words ``[L, H, m, m]``."""
    return pool.mean_rows @ output @ pool.sum_cols.T


def attention_matrices(model: Any, sentences: Iterable[Any], *, layers: Sequence[int] | int | str, metric: str,
                       subword: str, tokenize: str, **kwargs: Any) -> Iterator[np.ndarray | None]:
    """Probe ``attention``'s arrays, one per sentence (None = too long); ``kwargs`` as for
    :func:`pmask.perturb.probes.onepass.one_pass_matrices`."""
    from pmask.perturb.probes.onepass import one_pass_matrices

    return one_pass_matrices(model, sentences, probe="attention", word_matrix=merged_attention, layers=layers,
                             metric=metric, subword=subword, tokenize=tokenize, **kwargs)


def sequences(n: int) -> int:
    """Forward sequences for a sentence of any length: the unmasked one."""
    return 1


# ---------------------------------------------------------------------------- entries

WEIGHT = METRIC_ENTRIES.register(MetricEntry(
    "weight", "the attention weight itself (probe attention, which has no other metric)"))

PROBE = PROBE_ENTRIES.register(ProbeEntry(
    "attention", "attention weights merged to words as Clark et al. 2019: F[i][j] = attention of word i to word j, "
                 "the mean over i's pieces of the sum over j's pieces; 1 sequence",
    metrics=("weight",), subwords=("avg",), attention_head_metrics=("weight",), runner=attention_matrices,
    sequences=sequences))
