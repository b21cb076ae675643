"""XLNet's CPMI under ``--faithful`` equals Hoover et al.'s XLNet reading (``tests/cpmi_reference.py``) on a tiny
random XLNet: their tokenisation (``▁`` dropped after an opening bracket, a lone ``▁`` before closing
punctuation, the ``n't`` surgery, the first word looking at the last), their layout (nothing before the
sentence, or ``left <sep>``; ``right <sep> <cls>`` after it), their reading (hidden pieces replaced by the mask
token and masked by the permutation mask, the piece read through the target mapping)."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch
from cpmi_reference import authors_cpmi, reference_model
from family_impacts import impacts

from pmask.perturb.models.load import load_model
from pmask.perturb.testing.llm_zoo import make_tiny_llm

WORDS = ["The", "-LRB-", "committee", "-RRB-", "does", "n't", "approve", ",", "she", "said", "."]
LEFT, RIGHT = ["It", "was", "late", "."], ["Nobody", "came", "."]


@pytest.fixture(scope="module")
def xlnet(tmp_path_factory):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    folder = make_tiny_llm("xlnet", tmp_path_factory.mktemp("xlnet"))
    yield folder, load_model(str(folder), device="cpu", dtype="float64")
    torch.set_num_threads(threads)


@pytest.mark.parametrize("context", [False, True])
def test_faithful_is_their_xlnet_reading(xlnet, context):
    folder, lm = xlnet
    left, right = (LEFT, RIGHT) if context else ((), ())
    sentence = SimpleNamespace(words=WORDS, meta={"context": (list(left), list(right))})
    F = next(impacts(lm, [sentence], layers=[-1], metric="cpmi", tokenize="words-ptb"))[0]
    tokenizer, reference = reference_model("xlnet", folder)
    want = authors_cpmi("xlnet", reference, tokenizer, WORDS, left, right)
    scale = np.abs(want).max()
    assert scale > 1e-3
    np.testing.assert_allclose(F, want, rtol=1e-7, atol=1e-7 * scale)
