"""One sentence's impacts at a layer, read from a store (``pmask.perturb.fill.layer_impacts``): a store's sentence
is checked against the corpus's, and only what the store skipped as too long reads as None."""
from __future__ import annotations

from pathlib import Path

import pytest
from resolved import spec_of

from pmask.corpora.corpus_spec import CorpusSpec
from pmask.perturb.fill.stores import build_store

MINI = CorpusSpec(Path(__file__).resolve().parents[2] / "data" / "mini.conllu", limit=2)


@pytest.fixture(scope="module")
def cos_text_store(tiny_bert_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("cache") / "st"
    build_store(MINI, spec_of(str(tiny_bert_dir), metric="cos", tokenize="text", device="cpu"), out, layers=[-1],
                progress=False)
    return out


def test_a_sentence_the_store_lacks_is_an_error_not_too_long(cos_text_store):
    """Only what the store skipped as too long reads as None; a position it does not hold is a StoreError."""
    from pmask.common.errors import StoreError
    from pmask.corpora import read_conllu
    from pmask.perturb.fill.layer_impacts import impacts_from_store
    from pmask.perturb.store import ImpactStore

    store, sentences = ImpactStore.open(cos_text_store), read_conllu(MINI.path)[:3]
    assert all(F is not None for F in impacts_from_store(store, sentences[:2]))
    with pytest.raises(StoreError, match="holds no sentence 2"):
        list(impacts_from_store(store, sentences))
