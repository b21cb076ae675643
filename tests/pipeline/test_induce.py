"""The parse pipeline (``pmask.pipeline.induce``): what a parsed sentence shows of itself."""
from __future__ import annotations


def test_repr_of_a_parsed_sentence_is_short():
    import numpy as np

    from pmask.corpora import Sentence
    from pmask.perturb.source import Impact
    from pmask.pipeline.induce import Parsed

    n = 60
    words = [f"w{k}" for k in range(n)]
    parsed = Parsed(Sentence(id="s1", words=words), heads=np.arange(n), impact=Impact(F=np.random.rand(n, n)))
    text = repr(parsed)
    assert len(text) < 200 and "\n" not in text and "s1" in text and "60 words" in text
