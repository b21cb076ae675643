"""The perturbed-masking impact engine (this subpackage imports torch).

    from pmask.perturb import load_model, impact_matrices
    lm = load_model("bert-base-uncased")
    for F in impact_matrices(lm, [["The", "cat", "sat", "."]], layers=[-1]):
        ...   # float32 [len(layers), n, n]; F[l, i, j] = impact of word j on word i
"""
from pmask.perturb.alignment import WordAlignment, align
from pmask.perturb.engine import METRICS, SUBWORD_POLICIES, ImpactStats, impact_matrices
from pmask.perturb.model import RANDOM_SEED, LoadedModel, load_model

__all__ = [
    "load_model", "LoadedModel", "RANDOM_SEED",
    "impact_matrices", "ImpactStats", "METRICS", "SUBWORD_POLICIES",
    "align", "WordAlignment",
]
