"""Max relative deviation of each probe from the naive references of tests/perturb/test_probes.py.

Usage (from the repository root): python tools/probe_exactness.py

Tiny random BERT, RoBERTa (fast path) and ALBERT (generic path) models in float64, every layer;
the probes return float32, so about 6e-8 is the floor.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]



def resolved_impact(probe, **given):
    """The impact settings a run of ``probe`` with ``given`` resolves to (no model's recorded defaults)."""
    from pmask.pipeline.request import Request, resolve

    return resolve(Request.build(model="a-model", probe=probe, **given)).impact

def cases(num_layers: int) -> list[tuple[str, str, list[int]]]:
    """(probe, metric, layers) for every probe and metric; layer 0 only where it is not all zeros."""
    top = list(range(1, num_layers + 1))
    return ([("single", m, top) for m in ("dist", "cos", "prob")] + [("attention", "weight", top)]
            + [("distance", m, [0, *top]) for m in ("l2", "l1", "cos")]
            + [("distance", m, top) for m in ("jsd", "hellinger")])


def main() -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    sys.path[:0] = [str(ROOT / "tests" / "perturb"), str(ROOT / "tests")]
    from pmask.perturb.models.load import load_model
    from pmask.perturb.probes import probe_matrices
    from pmask.perturb.testing import make_tiny_bert, make_tiny_roberta
    from pmask.perturb.testing.zoo import make_tiny_architecture, training_texts

    from naive_probes import Naive
    from test_probes import sentences_for

    tmp = tempfile.mkdtemp()
    models = {"bert": make_tiny_bert(f"{tmp}/b"), "roberta": make_tiny_roberta(f"{tmp}/r"),
              "albert": str(make_tiny_architecture("albert", f"{tmp}/a", training_texts()))}
    for name, path in models.items():
        lm = load_model(path, device="cpu", dtype="float64")
        sents = sentences_for(lm)
        for probe, metric, layers in cases(lm.num_layers):
            worst = 0.0
            for words, F in zip(sents, probe_matrices(lm, sents, resolved_impact(probe, metric=metric), layers=layers)):
                naive = Naive(lm, words)
                if probe == "single":
                    want = naive.single(metric, layers)
                elif probe == "attention":
                    want = naive.attention(layers)
                else:
                    want = naive.distance(metric, layers)
                worst = max(worst, float(np.abs(F - want).max() / max(np.abs(want).max(), 1e-12)))
            print(f"{name:8s} {probe:9s} {metric:9s} max |got - naive| / max |naive| = {worst:.1e}")


if __name__ == "__main__":
    main()
