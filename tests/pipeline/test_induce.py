"""The parse pipeline (``pmask.pipeline.induce``): what a parsed sentence shows of itself, and F made symmetric
before the decoder reads it."""
from __future__ import annotations


def test_repr_of_a_parsed_sentence_is_short():
    import numpy as np

    from pmask.corpora import Sentence
    from pmask.perturb.fill.layer_impacts import Impact
    from pmask.pipeline.induce import Parsed

    n = 60
    words = [f"w{k}" for k in range(n)]
    parsed = Parsed(Sentence(id="s1", words=words), heads=np.arange(n), impact=Impact(F=np.random.rand(n, n)))
    text = repr(parsed)
    assert len(text) < 200 and "\n" not in text and "s1" in text and "60 words" in text


def test_f_is_made_symmetric_before_the_decoder_reads_it():
    """``--symmetrize`` and ``--absolute`` reach the decoder's F (Hoover et al.): each tree equals the decoder's on
    the matrix made symmetric here by hand (|F| first with absolute; sum F + F.T; triu and tril one triangle
    mirrored, the diagonal doubled)."""
    import numpy as np

    from pmask.corpora import Sentence
    from pmask.perturb.fill.layer_impacts import Impact
    from pmask.pipeline.decoding import Decoding
    from pmask.pipeline.induce import parse_sentences
    from pmask.trees.registry import DecodeInput, decode

    rng = np.random.default_rng(3)
    F = rng.normal(size=(6, 6))
    s = Sentence(id="1", words=list("abcdef"), heads=[2, 0, 2, 3, 4, 5], path="x")
    seen = set()
    for absolute in (False, True):
        A = np.abs(F) if absolute else F
        for mode, want in (("none", A), ("sum", A + A.T), ("triu", np.triu(A) + np.triu(A).T),
                           ("tril", np.tril(A) + np.tril(A).T)):
            got, = parse_sentences([s], [Impact(F=F)], Decoding("mst", -1, "gold", symmetrize=mode,
                                                                 absolute=absolute))
            assert got.heads.tolist() == decode("mst", DecodeInput(words=s.words, F=want, root=2)).tolist()
            assert got.F is F   # the record keeps the impacts as read
            seen.add(tuple(got.heads.tolist()))
    assert len(seen) > 2   # the modes give different trees here: the test would see a mode dropped


def test_every_model_decoder_reads_f_made_symmetric():
    import numpy as np

    from pmask.corpora import Sentence
    from pmask.perturb.fill.layer_impacts import Impact
    from pmask.pipeline.decoding import Decoding
    from pmask.pipeline.induce import parse_sentences
    from pmask.trees.registry import DecodeInput, decode

    W = np.random.default_rng(5).normal(size=(5, 5))
    s = Sentence(id="1", words=list("abcde"), heads=[2, 0, 2, 3, 4], path="x")
    for decoder in ("eisner", "cle", "mst", "mst-projective"):
        got, = parse_sentences([s], [Impact(F=W)], Decoding(decoder, -1, "gold", symmetrize="sum"))
        assert got.heads.tolist() == decode(decoder, DecodeInput(words=s.words, F=W + W.T, root=2)).tolist()
