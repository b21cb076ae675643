"""Synthetic store contents shared by the store tests (odd Unicode words, deterministic matrices)."""
from __future__ import annotations

import numpy as np

from pmask.corpora import Sentence
from pmask.perturb.engine.impact_settings import ImpactSettings
from pmask.perturb.store import CorpusInfo, StoreSettings, StoreWriter

ODD_WORDS = [
    ["naïve", "café", "Ünïcödé", "日本語", "🎉", "a\tb", '"quoted"', "back\\slash", "", "\u200b"],
    ["{json}", "[1,2]", "\n", "null", "ß", "\ud800"],   # lone surrogate: not even valid UTF-8
    ["one"],
    ["Straße", "–", "…", "ﬁ"],
    ["x", "y", "z"],
]
SETTINGS = StoreSettings(model="fake-model", impact=ImpactSettings("dist", "avg", "words", "pair", 0),
                         layers=(1, -1), revision="abc123",
                         random_init=False, dtype="float32", tokenizer={"lowercase": True},
                         layers_resolved=(1, 3), num_layers=3, max_length=64)


def _sentences(words=ODD_WORDS) -> list[Sentence]:
    return [Sentence(id=f"s-{k}-ü", words=list(w)) for k, w in enumerate(words)]


def _fake(k: int, n: int, n_layers: int = 2) -> dict:
    """Deterministic synthetic impacts + alignment for sentence k of n words (include_cls layout)."""
    rng = np.random.default_rng(k)
    word_index = [-1] + [w for w in range(n) for _ in range(1 + w % 2)] + [-1]
    return {"matrix": rng.random((n_layers, n + 1, n + 1), dtype=np.float32),
            "input_ids": list(range(100 + k, 100 + k + len(word_index))), "word_index": word_index,
            "pieces": ["[CLS]"] + [f"p{w}·{j}" for j, w in enumerate(word_index[1:-1])] + ["[SEP]"]}


def _write(path, sentences, *, settings=SETTINGS, skip=(), shard_size=2, **kw) -> None:
    corpus = CorpusInfo.of(sentences)
    with StoreWriter.open(path, settings, corpus, shard_size=shard_size, **kw) as w:
        for k in w.remaining:
            if k in skip:
                w.skip(k, sentences[k].id, len(sentences[k].words))
            else:
                w.add(k, sentences[k].id, sentences[k].words, **_fake(k, len(sentences[k].words)))
