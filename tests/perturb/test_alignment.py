"""Word ↔ piece alignment from fast tokenizers' word_ids()."""
from __future__ import annotations

import pytest
from transformers import AutoTokenizer

from pmask.common.errors import ModelError
from pmask.perturb.alignment import WordAlignment, align
from pmask.perturb.models.load import load_tokenizer
from pmask.perturb.testing import TINY_SENTENCES


@pytest.fixture(scope="module")
def bert_tok(tiny_bert_dir):
    return load_tokenizer(str(tiny_bert_dir))


@pytest.fixture(scope="module")
def roberta_tok(tiny_roberta_dir):
    return load_tokenizer(str(tiny_roberta_dir))


def _check(al, tok, words):
    assert len(al.input_ids) == len(al.word_index)
    assert al.n_words == len(words)
    real = [w for w in al.word_index if w >= 0]
    assert real == sorted(real) and set(real) == set(range(len(words)))   # every word, in order
    for k in range(len(words)):
        pcs = al.pieces(k)
        assert pcs and pcs == list(range(pcs[0], pcs[-1] + 1))           # contiguous, non-empty
    specials = set(tok.all_special_ids)
    assert all(al.input_ids[t] in specials for t, w in enumerate(al.word_index) if w < 0)


@pytest.mark.parametrize("which", ["bert_tok", "roberta_tok"])
def test_alignment_invariants(request, which):
    tok = request.getfixturevalue(which)
    for words in TINY_SENTENCES:
        al = align(tok, words)
        _check(al, tok, words)
        assert al.input_ids == tok(words, is_split_into_words=True)["input_ids"]
        assert al.word_index[0] == -1 and al.word_index[-1] == -1


def test_multi_piece_words(bert_tok):
    words = ["He", "said", "the", "decision", "was", "unbelievable", "."]
    al = align(bert_tok, words)
    assert bert_tok.convert_ids_to_tokens([al.input_ids[p] for p in al.pieces(5)]) == ["un", "##believ", "##able"]
    assert al.first_pieces[5] == al.pieces(5)[0]


def test_punctuation_split_stays_one_word(bert_tok):
    al = align(bert_tok, ["Clinton", "'s", "bank"])
    assert len(al.pieces(1)) == 2                       # ' and s, both word 1


def test_roberta_prefix_space(roberta_tok):
    assert roberta_tok.add_prefix_space
    a = align(roberta_tok, ["the", "country"])
    b = align(roberta_tok, ["She", "the", "country"])
    assert a.input_ids[a.pieces(0)[0]:a.pieces(1)[-1] + 1] == b.input_ids[b.pieces(1)[0]:b.pieces(2)[-1] + 1]


@pytest.mark.parametrize("which", ["bert_tok", "roberta_tok"])
def test_unknown_and_vanishing_words(request, which):
    tok = request.getfixturevalue(which)
    for words in (["zebra", "\x07", "home"], ["\x07"], ["\x07", "\x00", "the"], ["the", ""], ["", "the"]):
        al = align(tok, words)
        _check(al, tok, words)
    if which == "bert_tok":
        al = align(tok, ["zebra", "\x07", "home"])
        assert al.input_ids[al.pieces(1)[0]] == tok.unk_token_id     # control char → unk, not lost
        assert al.input_ids[al.pieces(0)[0]] == tok.unk_token_id     # out-of-vocabulary word


def test_slow_tokenizer_rejected():
    class Slow:
        is_fast = False

    with pytest.raises(ModelError, match="not a fast tokenizer"):
        align(Slow(), ["a"])


def test_autotokenizer_roundtrip(tiny_bert_dir):
    tok = AutoTokenizer.from_pretrained(tiny_bert_dir)
    assert tok.is_fast
    assert align(tok, ["the", "cat"]).n_words == 2


@pytest.mark.parametrize("args, message", [
    (([101, 7, 102], [-1, 0]), "3 tokens but 2 word indices"),
    (([101, 7, 102], [-1, 0, -1], 3, [[1], [1]]), "pieces for 2 of 3 words"),
    (([101, 7, 102], [-1, 0, -1], 2), "word 1 has no model piece"),
])
def test_inconsistent_alignment_is_a_model_error(args, message):
    with pytest.raises(ModelError, match=message):
        WordAlignment(*args)
