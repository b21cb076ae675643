"""Probe ``pair``, perturbed masking (Wu et al. 2020), and the metrics it compares masked states with.

F[i][j] = d(H(x∖{i})_i, H(x∖{i,j})_i): word i masked alone, then with word j, read at word i's pieces.
Its runner is the engine's own loop (:func:`pmask.perturb.engine.runner.impact_matrices` with the pairs of
:class:`pmask.perturb.engine.jobs.SentenceJob`), imported when it runs (the engine loads torch). Its
metrics' comparisons, each the ``compare`` of its entry, take a word's base values and its values with a
second word masked (``[N, layers, D]`` hidden states, or ``[N, layers]`` MLM-head probabilities):

- ``dist``: the Euclidean distance ||base − current||;
- ``cos``: 1 − cos(base, current); with probe ``distance`` it is also 1 − cos(v_i, v_j) between the
  unmasked states of two words (``between_words``; :mod:`.measures` holds that probe's other measures);
- ``prob``: base − current, the drop in the probability of the original piece when j is masked too.

Metric ``cpmi`` (:mod:`.cpmi`) is the pair probe's too, with sequences of its own.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Iterator, Sequence

from pmask.common.probe_entries import METRIC_ENTRIES, PROBE_ENTRIES, AuthorsRecipe, MetricEntry, ProbeEntry

if TYPE_CHECKING:
    import numpy as np
    import torch


def euclidean(base: torch.Tensor, current: torch.Tensor) -> torch.Tensor:
    """``dist``: ||base − current||_2 over the last axis, [N, layers, D] → [N, layers]."""
    import torch

    return torch.linalg.vector_norm(base - current, dim=-1)


def cosine(base: torch.Tensor, current: torch.Tensor) -> torch.Tensor:
    """``cos``: 1 − cos(base, current) over the last axis, [N, layers, D] → [N, layers]."""
    import torch.nn.functional as nnf

    return 1.0 - nnf.cosine_similarity(base, current, dim=-1)


def cosine_between_words(vectors: torch.Tensor) -> torch.Tensor:
    """``cos`` between every two rows: 1 − cos(v_i, v_j), vectors [..., m, D] → [..., m, m], 0 on the diagonal
    (Kim et al.'s code scores (cos + 1) / 2, a similarity: metric ``cossim``).

    Example:
        >>> import torch
        >>> cosine_between_words(torch.tensor([[1.0, 0.0], [0.0, 2.0]])).tolist()
        [[0.0, 1.0], [1.0, 0.0]]
    """
    import torch

    unit = vectors / torch.linalg.vector_norm(vectors, dim=-1, keepdim=True).clamp_min(1e-12)
    out = 1.0 - unit @ unit.transpose(-1, -2)
    out.diagonal(dim1=-2, dim2=-1).zero_()
    return out


def probability_drop(base: torch.Tensor, current: torch.Tensor) -> torch.Tensor:
    """``prob``: base − current, [N, layers] → [N, layers] (negative where masking j raises the probability)."""
    return base - current


def pair_matrices(model: Any, sentences: Iterable[Any], *, layers: Sequence[int] | int | str, metric: str,
                  subword: str, tokenize: str, **kwargs: Any) -> Iterator[np.ndarray | None]:
    """Probe ``pair``'s impact arrays, one per sentence (None = too long): the engine's
    :func:`~pmask.perturb.engine.runner.impact_matrices`, whose ``kwargs`` it takes."""
    from pmask.perturb.engine.runner import impact_matrices

    return impact_matrices(model, sentences, layers, metric=metric, subword=subword, tokenize=tokenize, **kwargs)


def sequences(n: int) -> int:
    """Forward sequences of probe pair for n words: the unmasked one, n with one word masked, n(n-1)/2 pairs."""
    return 1 + n + n * (n - 1) // 2


# ---------------------------------------------------------------------------- entries

DIST = METRIC_ENTRIES.register(MetricEntry(
    "dist", "Euclidean distance between H(x without word i)_p and H(x without words i, j)_p at each piece p of "
            "word i", compare=euclidean, pools=True))
PROB = METRIC_ENTRIES.register(MetricEntry(
    "prob", "p(original piece at p | x without word i) - p(original piece at p | x without words i, j) under the "
            "MLM head applied to the layer's state, at each piece p of word i", mlm_head=True,
    compare=probability_drop))
COS = METRIC_ENTRIES.register(MetricEntry(
    "cos", "1 - cosine similarity between H(x without word i)_p and H(x without words i, j)_p at each piece p of "
           "word i", compare=cosine, between_words=cosine_between_words, pools=True))

PROBE = PROBE_ENTRIES.register(ProbeEntry(
    "pair", "perturbed masking (Wu et al. 2020), the default: F[i][j] = d(H(x without i)_i, H(x without i, j)_i); "
            "1 + n + n(n-1)/2 sequences per sentence",
    metrics=("dist", "cos", "prob", "cpmi"), runner=pair_matrices, sequences=sequences, checkpoint=True,
    faithful=AuthorsRecipe("Wu et al.", ("eisner", "cle", "mst-projective", "mst"), metric="dist")))
