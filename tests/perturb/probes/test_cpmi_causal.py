"""Causal CPMI under ``--faithful`` equals Hoover et al.'s GPT-2 reading (``tests/cpmi_reference.py``, checked
against their code by ``benchmarks/cpmi_equality.py --reference``), on tiny random causal models.

Their tokenisation (``words-ptb``: a leading space unless the word starts with ``, . : ; ! '``, PTB brackets
restored, the ``n't`` surgery), their layout (the tokenizer's bos first, eos last, context words around the
sentence with no separator) and their reading (word j hidden by the attention mask, the piece at p predicted
from p − 1) are the reference's; pmask runs one input per source word where they run one per (source word,
target piece). The clean default (``words``) differs only in the tokenisation and layout: its reading of its
own layout is theirs too.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch
from cpmi_reference import AuthorsLayout, authors_cpmi, authors_log_p, cpmi_from_log_p, reference_model
from family_impacts import impacts

from pmask.perturb.models.load import load_model
from pmask.perturb.testing.llm_zoo import make_tiny_llm

WORDS = ["The", "-LRB-", "committee", "-RRB-", "does", "n't", "approve", ",", "she", "said", "."]
LEFT, RIGHT = ["It", "was", "late", "."], ["Nobody", "came", "."]


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def model(request, tmp_path_factory):
    """(folder, pmask's float64 model) of a tiny GPT-2 (byte-level BPE, bos = eos) and Llama (SentencePiece-style,
    its tokenizer adding ``<s>`` itself)."""
    folder = make_tiny_llm(request.param, tmp_path_factory.mktemp(request.param))
    return folder, load_model(str(folder), device="cpu", dtype="float64")


@pytest.mark.parametrize("context", [False, True])
def test_faithful_is_their_gpt2_reading(model, context):
    folder, lm = model
    left, right = (LEFT, RIGHT) if context else ((), ())
    sentence = SimpleNamespace(words=WORDS, meta={"context": (list(left), list(right))})
    F = next(impacts(lm, [sentence], layers=[-1], metric="cpmi", tokenize="words-ptb"))[0]
    tokenizer, reference = reference_model("gpt2", folder)
    want = authors_cpmi("gpt2", reference, tokenizer, WORDS, left, right)
    scale = np.abs(want).max()
    assert scale > 1e-3 and np.allclose(np.triu(want), 0)
    np.testing.assert_allclose(F, want, rtol=1e-7, atol=1e-7 * scale)


def test_clean_is_their_reading_of_the_tokenizers_own_layout(model):
    folder, lm = model
    F = next(impacts(lm, [WORDS], layers=[-1], metric="cpmi"))[0]
    enc = lm.tokenizer(WORDS, is_split_into_words=True)   # pmask's word set-up: a space before every word, a start
    spans = [tuple(t for t, w in enumerate(enc.word_ids()) if w == k) for k in range(len(WORDS))]
    _, reference = reference_model("gpt2", folder)
    want = cpmi_from_log_p(authors_log_p("gpt2", reference, AuthorsLayout(list(enc["input_ids"]), spans)))
    np.testing.assert_allclose(F, want, rtol=1e-7, atol=1e-7 * np.abs(want).max())
    faithful = next(impacts(lm, [WORDS], layers=[-1], metric="cpmi", tokenize="words-ptb"))[0]
    assert not np.allclose(F, faithful)   # their tokenisation is not the clean one (the brackets, n't, commas)
