"""The measures of probe ``distance`` between two words of one unmasked pass (Kim et al. 2020), one metric
entry each, registered here with its computation (``between_words``).

Between hidden-state vectors (one per word):

- ``l1``: ||v_i − v_j||_1; ``l2``: ||v_i − v_j||_2;
- ``cossim``: (cos(v_i, v_j) + 1) / 2, the "distance" of Kim et al.'s code (a *similarity*, which their
  parser splits at as a distance; their ``--faithful`` ``cos``). pmask's ``cos`` is the distance
  1 − cos, so that for every other metric a larger value means farther apart; it is the pair probe's
  metric too, and its entry (:mod:`.pair`) holds both computations.

Between attention distributions (one per word and head, rows summing to 1):

- ``jsd``: the Jensen–Shannon distance sqrt(JS(p, q)), JS(p, q) = (KL(p‖m) + KL(q‖m))/2 with
  m = (p + q)/2 and natural logarithms (Kim et al. take the same square root of the divergence);
- ``hellinger``: ||√p − √q||_2 / √2.

Each takes rows ``[..., m, D]`` and returns ``[..., m, m]``: symmetric, 0 on the diagonal and computed
exactly (no matrix-product shortcut for Euclidean distances; the distribution distances in float64,
whatever the model's dtype). Torch is imported when a measure first runs.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pmask.common.probe_entries import METRIC_ENTRIES, MetricEntry

if TYPE_CHECKING:
    import torch


def l1_distances(vectors: torch.Tensor) -> torch.Tensor:
    """``l1`` between every two rows: vectors [..., m, D] → [..., m, m]."""
    import torch

    return torch.cdist(vectors, vectors, p=1.0)


def l2_distances(vectors: torch.Tensor) -> torch.Tensor:
    """``l2`` between every two rows: vectors [..., m, D] → [..., m, m].

    Example:
        >>> import torch
        >>> l2_distances(torch.tensor([[0.0, 0.0], [3.0, 4.0]])).tolist()
        [[0.0, 5.0], [5.0, 0.0]]
    """
    import torch

    return torch.cdist(vectors, vectors, p=2.0, compute_mode="donot_use_mm_for_euclid_dist")


def cosine_similarities(vectors: torch.Tensor) -> torch.Tensor:
    """``cossim`` between every two rows, (cos + 1) / 2 in [0, 1]: vectors [..., m, D] → [..., m, m]."""
    import torch

    unit = vectors / torch.linalg.vector_norm(vectors, dim=-1, keepdim=True).clamp_min(1e-8)
    return (unit @ unit.transpose(-1, -2) + 1.0) / 2.0


def _kl(p: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
    """KL(p || m) over the last axis, 0 · log 0 = 0 (m > 0 wherever p > 0)."""
    import torch

    return torch.where(p > 0, p * torch.log(p / torch.where(p > 0, m, 1.0)), 0.0).sum(-1)


def jensen_shannon_distances(rows: torch.Tensor) -> torch.Tensor:
    """``jsd`` between every two distributions: rows [..., m, U] (each summing to 1) → [..., m, m]."""
    import torch

    dtype = rows.dtype
    rows = rows.to(torch.float64).clamp_min(0)   # float64: small distances must not drown in rounding
    p, q = rows[..., :, None, :], rows[..., None, :, :]
    middle = (p + q) / 2                                                    # [..., m, m, U]
    js = (_kl(p.expand_as(middle), middle) + _kl(q.expand_as(middle), middle)) / 2
    out = js.clamp_min(0).sqrt()
    out.diagonal(dim1=-2, dim2=-1).zero_()
    return out.to(dtype)


def hellinger_distances(rows: torch.Tensor) -> torch.Tensor:
    """``hellinger`` between every two distributions: rows [..., m, U] (each summing to 1) → [..., m, m].

    Example:
        >>> import torch
        >>> d = hellinger_distances(torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=torch.float64))
        >>> round(float(d[0, 1]), 6)
        1.0
    """
    import torch

    dtype = rows.dtype
    root = rows.to(torch.float64).clamp_min(0).sqrt()   # float64: small distances must not drown in rounding
    out = torch.cdist(root, root, p=2.0, compute_mode="donot_use_mm_for_euclid_dist") / math.sqrt(2.0)
    return out.to(dtype)


# ---------------------------------------------------------------------------- entries

L1 = METRIC_ENTRIES.register(MetricEntry(
    "l1", "L1 distance between the hidden states of words i and j (probe distance)", between_words=l1_distances))
L2 = METRIC_ENTRIES.register(MetricEntry(
    "l2", "Euclidean distance between the hidden states of words i and j (probe distance)",
    between_words=l2_distances))
JSD = METRIC_ENTRIES.register(MetricEntry(
    "jsd", "Jensen-Shannon distance (square root of the divergence, natural log) between the attention "
           "distributions of words i and j (probe distance)", between_words=jensen_shannon_distances))
HELLINGER = METRIC_ENTRIES.register(MetricEntry(
    "hellinger", "Hellinger distance between the attention distributions of words i and j (probe distance)",
    between_words=hellinger_distances))
COSSIM = METRIC_ENTRIES.register(MetricEntry(
    "cossim", "(cosine similarity + 1) / 2 between the hidden states of words i and j, a similarity read as a "
              "distance: the cos of Kim et al.'s code (probe distance, --faithful)", between_words=cosine_similarities))
