"""Distances between the words of one sentence (probe ``distance``, Kim et al. 2020), in torch.

Between hidden-state vectors (one per word, :func:`pairwise_vectors`):

- ``l2``: ||v_i − v_j||_2; ``l1``: ||v_i − v_j||_1; ``cos``: 1 − cos(v_i, v_j)
  (Kim et al.'s code scores (cos + 1) / 2, a *similarity*, as its "distance"; pmask uses the
  distance 1 − cos, so that for every metric a larger value means farther apart).

Between attention distributions (one per word and head, rows summing to 1, :func:`pairwise_distributions`):

- ``jsd``: the Jensen–Shannon distance sqrt(JS(p, q)), JS(p, q) = (KL(p‖m) + KL(q‖m))/2 with
  m = (p + q)/2 and natural logarithms (Kim et al. take the same square root of the divergence);
- ``hellinger``: ||√p − √q||_2 / √2.

All are symmetric, 0 on the diagonal and computed exactly (no matrix-product shortcut for
Euclidean distances; the distribution distances in float64, whatever the model's dtype).
"""
from __future__ import annotations

import math

import torch

HIDDEN_METRICS = ("l2", "l1", "cos", "cossim")
DISTRIBUTION_METRICS = ("jsd", "hellinger")


def pairwise_vectors(vectors: torch.Tensor, metric: str) -> torch.Tensor:
    """Distances between every two rows: vectors [..., m, D] → [..., m, m].

    Example:
        >>> pairwise_vectors(torch.tensor([[0.0, 0.0], [3.0, 4.0]]), "l2").tolist()
        [[0.0, 5.0], [5.0, 0.0]]
    """
    if metric == "l2":
        return torch.cdist(vectors, vectors, p=2.0, compute_mode="donot_use_mm_for_euclid_dist")
    if metric == "l1":
        return torch.cdist(vectors, vectors, p=1.0)
    if metric == "cos":
        unit = vectors / torch.linalg.vector_norm(vectors, dim=-1, keepdim=True).clamp_min(1e-12)
        out = 1.0 - unit @ unit.transpose(-1, -2)
        out.diagonal(dim1=-2, dim2=-1).zero_()
        return out
    if metric == "cossim":     # Kim et al.'s code: a similarity in [0, 1], which their parser splits at as a distance
        unit = vectors / torch.linalg.vector_norm(vectors, dim=-1, keepdim=True).clamp_min(1e-8)
        return (unit @ unit.transpose(-1, -2) + 1.0) / 2.0
    raise ValueError(f"unknown hidden-state metric {metric!r} (choose from {', '.join(HIDDEN_METRICS)})")


def _kl(p: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
    """KL(p || m) over the last axis, 0 · log 0 = 0 (m > 0 wherever p > 0)."""
    return torch.where(p > 0, p * torch.log(p / torch.where(p > 0, m, 1.0)), 0.0).sum(-1)


def pairwise_distributions(rows: torch.Tensor, metric: str) -> torch.Tensor:
    """Distances between every two distributions: rows [..., m, U] (each summing to 1) → [..., m, m].

    Example:
        >>> d = pairwise_distributions(torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=torch.float64), "hellinger")
        >>> round(float(d[0, 1]), 6)
        1.0
    """
    dtype = rows.dtype
    rows = rows.to(torch.float64).clamp_min(0)   # float64: small distances must not drown in rounding
    if metric == "hellinger":
        root = rows.sqrt()
        out = torch.cdist(root, root, p=2.0, compute_mode="donot_use_mm_for_euclid_dist") / math.sqrt(2.0)
        return out.to(dtype)
    if metric == "jsd":
        p, q = rows[..., :, None, :], rows[..., None, :, :]
        middle = (p + q) / 2                                                    # [..., m, m, U]
        js = (_kl(p.expand_as(middle), middle) + _kl(q.expand_as(middle), middle)) / 2
        out = js.clamp_min(0).sqrt()
        out.diagonal(dim1=-2, dim2=-1).zero_()
        return out.to(dtype)
    raise ValueError(f"unknown distribution metric {metric!r} (choose from {', '.join(DISTRIBUTION_METRICS)})")
