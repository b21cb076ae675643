"""Hoover et al.'s tokenisation of each of their classes (``words-ptb``), on tokenizers whose vocabularies are
written out here, so that every expected piece is derived by hand from their ``make_subword_lists``."""
from __future__ import annotations

import pytest

from pmask.perturb.alignment import ptb_align
from pmask.perturb.alignment.subword_lists import (
    SUBWORD_LISTS,
    bert_pieces,
    subword_lists,
    use_subword_lists,
)


@pytest.fixture(scope="module")
def byte_bpe():
    """Byte-level BPE: ``cat``, ``does``, ``n``, brackets and punctuation with and without their space marker."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    merges = [("Ġ", "c"), ("Ġc", "a"), ("Ġca", "t"), ("c", "a"), ("ca", "t"), ("Ġ", "d"), ("Ġd", "o"), ("Ġdo", "e"),
              ("Ġdoe", "s"), ("Ġ", "n"), ("'", "t"), ("Ġ", ","), ("Ġ", "("), ("Ġ", ")")]
    for token in ["".join(m) for m in merges] + ["<s>", "</s>"]:
        vocab.setdefault(token, len(vocab))
    backend = Tokenizer(models.BPE(vocab, merges))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)   # as pmask configures it
    return PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<s>", eos_token="</s>")


@pytest.fixture(scope="module")
def sentencepiece():
    """A Unigram with ``▁cat``, ``cat``, ``▁does``, ``▁``, brackets and ``n ' t`` (no ``▁(``, ``▁n``)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    pieces = ["<unk>", "<sep>", "<cls>", "▁cat", "cat", "▁does", "▁", "(", ")", "n", "'", "t", "c", "a", "d", "o",
              "e", "s"]
    scores = [(p, 0.0 if p.startswith("<") else -1.0 if len(p) > 1 else -5.0) for p in pieces]
    backend = Tokenizer(models.Unigram(scores, unk_id=0))
    backend.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    return PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="<unk>", sep_token="<sep>", cls_token="<cls>")


def test_gpt2_space_before_every_word_but_punctuation_and_the_n_t_fix(byte_bpe):
    words = ["cat", ",", "-LRB-", "does", "n't", "-RRB-"]
    assert SUBWORD_LISTS["GPT2"].pieces(byte_bpe, words) == [
        ["Ġcat"], [","], ["Ġ("], ["Ġdoesn"], ["'t"], ["Ġ)"]]   # '-RRB-' starts with '-': a space, then ')'


def test_bart_no_space_after_an_opening_bracket_nor_before_a_closing_one(byte_bpe):
    words = ["(", "cat", "-RRB-", ",", "does", "n't"]
    assert SUBWORD_LISTS["Bart"].pieces(byte_bpe, words) == [["Ġ("], ["cat"], [")"], [","], ["Ġdoesn"], ["'t"]]
    assert SUBWORD_LISTS["GPT2"].pieces(byte_bpe, words) == [["Ġ("], ["Ġcat"], ["Ġ)"], [","], ["Ġdoesn"], ["'t"]]
    assert SUBWORD_LISTS["Bart"].pieces(byte_bpe, ["-LRB-", "cat"])[1] == ["Ġcat"]   # only a literal '(' counts


def test_xlnet_fixes(sentencepiece):
    words = ["-LRB-", "cat", "-RRB-", "does", "n't"]
    assert sentencepiece.tokenize("(") == ["▁", "("] and sentencepiece.tokenize("n't") == ["▁", "n", "'", "t"]
    assert SUBWORD_LISTS["XLNet"].pieces(sentencepiece, words) == [
        ["▁", "("], ["cat"], [")"], ["▁doesn"], ["'", "t"]]
    # their first word looks at the last word's last piece
    assert SUBWORD_LISTS["XLNet"].pieces(sentencepiece, ["cat", "-LRB-"]) == [["cat"], ["▁", "("]]


def test_bert_and_xlm_n_t():
    tok = {"n't": ["n", "'", "t"], "does": ["does"]}
    assert bert_pieces(["does", "n't", "-LSB-"], lambda w: tok.get(w, [w])) == [["doesn"], ["'", "t"], ["["]]
    xlm = {"n't": ["n</w>", "'t</w>"], "does": ["does</w>"]}
    assert bert_pieces(["does", "n't"], lambda w: xlm[w]) == [["doesn</w>"], ["'t</w>"]]


def test_layouts(byte_bpe, sentencepiece):
    bos, eos = byte_bpe.bos_token_id, byte_bpe.eos_token_id
    for name in ("GPT2", "Bart"):
        assert SUBWORD_LISTS[name].layout(byte_bpe, [7], [8]) == ([bos, 7], [8, eos])
        assert SUBWORD_LISTS[name].layout(byte_bpe, [], []) == ([bos], [eos])
    sep, cls = sentencepiece.sep_token_id, sentencepiece.cls_token_id
    assert SUBWORD_LISTS["XLNet"].layout(sentencepiece, [7], [8]) == ([7, sep], [8, sep, cls])
    assert SUBWORD_LISTS["XLNet"].layout(sentencepiece, [], []) == ([], [sep, cls])
    assert SUBWORD_LISTS["BERT"].layout(sentencepiece, [7], [8]) == ([cls, 7, sep], [8, sep])


def test_words_ptb_follows_the_class_recorded_on_the_tokenizer(byte_bpe):
    from copy import deepcopy

    tok = deepcopy(byte_bpe)
    assert subword_lists(tok).name == "BERT"
    use_subword_lists(tok, "GPT2")
    al = ptb_align(tok, ["cat", ","])
    assert tok.convert_ids_to_tokens(al.input_ids) == ["<s>", "Ġcat", ",", "</s>"]
    assert al.word_index == [-1, 0, 1, -1]
    with pytest.raises(KeyError, match="no tokenisation"):
        use_subword_lists(tok, "T5")
