"""Probe ``distance``: syntactic distance between the words of one unmasked pass (Kim et al. 2020).

F[i][j] = d(v_i, v_j), low = close:

- with ``l2``, ``l1``, ``cos``, ``cossim``, v_k is word k's hidden state: the mean of its pieces' states
  (subword ``avg``, Kim et al.'s default) or its first piece's (``first``): ``[L, n, n]``;
- with ``jsd``, ``hellinger``, v_k is word k's attention distribution, one per head: its merged row over
  the words and each special token (:mod:`.pooling`'s units): ``[L, H, n, n]``.

Each metric's computation is its entry's ``between_words`` (:mod:`.measures`; ``cos`` in :mod:`.pair`).
One unmasked pass per sentence (:mod:`.onepass`, imported when it runs: it loads torch). Kim et al.'s
input has no special tokens (``--tokenize bare``, their ``--faithful``), and they split the distances
top-down (decoder ``distance-split``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Iterator, Sequence

from pmask.common.options import check_probe, metric_entry
from pmask.common.probe_entries import PROBE_ENTRIES, AuthorsRecipe, ProbeEntry

if TYPE_CHECKING:
    import numpy as np
    import torch

    from pmask.perturb.probes.onepass import OnePass
    from pmask.perturb.probes.pooling import WordPooling


def word_distances(run: OnePass, pool: WordPooling, output: torch.Tensor) -> torch.Tensor:
    """One sentence's distances from its states ``[L, T, D]`` (``[L, m, m]``) or attentions ``[L, H, T, T]``
    (``[L, H, m, m]``), by the run's metric's measure."""
    import torch

    measure = metric_entry(run.metric).measure()
    if run.needs_attention:
        rows = pool.mean_rows @ output @ pool.units.T                                  # [L, H, m, U]
        return torch.stack([measure(layer) for layer in rows])
    pooling = pool.mean_rows if run.subword == "avg" else pool.first_rows
    return measure(pooling @ output)                                                   # [L, m, m]


def distance_matrices(model: Any, sentences: Iterable[Any], *, layers: Sequence[int] | int | str, metric: str,
                      subword: str, tokenize: str, **kwargs: Any) -> Iterator[np.ndarray | None]:
    """Probe ``distance``'s arrays, one per sentence (None = too long); ``kwargs`` as for
    :func:`pmask.perturb.probes.onepass.one_pass_matrices`."""
    from pmask.perturb.probes.onepass import one_pass_matrices

    check_probe("distance", metric, subword)
    metric_entry(metric).measure()   # a metric that measures no two words: refused before any model work
    return one_pass_matrices(model, sentences, probe="distance", word_matrix=word_distances, layers=layers,
                             metric=metric, subword=subword, tokenize=tokenize, **kwargs)


def sequences(n: int) -> int:
    """Forward sequences for a sentence of any length: the unmasked one."""
    return 1


# ---------------------------------------------------------------------------- entry

PROBE = PROBE_ENTRIES.register(ProbeEntry(
    "distance", "syntactic distance (Kim et al. 2020), low = close: F[i][j] = distance between words i and j, their "
                "unmasked hidden states (cos, l1, l2) or attention distributions (jsd, hellinger); 1 sequence",
    metrics=("l2", "l1", "cos", "jsd", "hellinger", "cossim"), subwords=("avg", "first"),
    attention_head_metrics=("jsd", "hellinger"), distance=True, decodes_layer_zero=True, bare_input=True,
    runner=distance_matrices, sequences=sequences,
    faithful=AuthorsRecipe("Kim et al.", ("distance-split",), renames={"cos": "cossim"}, tokenize="bare")))
