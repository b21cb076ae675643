"""Issue 33, item 13: ``--faithful``'s dist default holds through ``pmask.parse`` too (the authors'
pipeline measures distances, whatever metric a bundled model records), not only on the command line."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import pmask
from pmask.corpora import read_corpus
from pmask.perturb.models.bundled import DEFAULT_MODEL, bundled_model

MINI = Path(__file__).resolve().parents[1] / "data" / "mini.conllu"


def test_faithful_measures_distances_with_the_bundled_model_in_python():
    assert bundled_model(DEFAULT_MODEL).defaults["metric"] == "prob"   # else this test would prove nothing
    sentences = read_corpus(MINI)[:3]
    faithful = pmask.parse(sentences, faithful=True)                   # no metric given
    dist = pmask.parse(sentences, faithful=True, metric="dist")
    prob = pmask.parse(sentences, faithful=True, metric="prob")
    for a, b, c in zip(faithful, dist, prob):
        assert a.F is not None and a.F.shape == (len(a.sentence.words),) * 2
        np.testing.assert_allclose(a.F, b.F, rtol=1e-5, atol=1e-6)
        assert not np.allclose(a.F, c.F, rtol=1e-3, atol=1e-4)
    plain = pmask.parse(sentences)                                     # without --faithful: the model's prob
    for a, c in zip(plain, pmask.parse(sentences, metric="prob")):
        np.testing.assert_allclose(a.F, c.F, rtol=1e-5, atol=1e-6)
