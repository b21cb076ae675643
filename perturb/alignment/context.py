"""Context words around a sentence (``--context N``) and the ``words-ptb`` tokenisation (Hoover et al. 2021).

A sentence may carry context: words of its neighbouring sentences in the same file, given to the
model but never masked, read or scored (``Sentence.meta["context"] = (before, after)``, set by
:func:`pmask.perturb.alignment.neighbours.add_context`). The word aligners lay a sentence with context out as
Hoover et al.'s code does for the model's class (:mod:`pmask.perturb.alignment.subword_lists`): for BERT
``[CLS] before [SEP] sentence after [SEP]`` (no ``before``: ``[CLS] sentence after [SEP]``), for GPT-2 and
BART ``<s> before sentence after </s>``, for XLNet ``before <sep> sentence after <sep> <cls>``; context
pieces belong to no word (word index -1, like special tokens).

``words-ptb`` tokenises each word on its own after their adjustments (``make_subword_lists`` of
``pmi_accuracy/languagemodel.py`` in github.com/mcqll/cpmi-dependencies, one per model class,
:mod:`pmask.perturb.alignment.subword_lists`): for BERT, PTB bracket tokens (``-LRB-``, ``-RRB-``, ``-LSB-``,
``-RSB-``, ``-LCB-``, ``-RCB-``) are read as the brackets, and a word tokenised exactly ``n ' t`` gives its
``n`` to the previous word's last piece ("does n't" is fed as the model saw "doesn't": ``doesn ' t``; a
piece missing from the vocabulary becomes the unknown token, as in their code).
"""
from __future__ import annotations

from typing import Any, Sequence

from pmask.perturb.alignment.subword_lists import subword_lists
from pmask.perturb.alignment.word_alignment import WordAlignment
from pmask.perturb.alignment.words import sentence_words


def sentence_context(sentence: Any) -> tuple[list[str], list[str]]:
    """The context words (before, after) a sentence carries (none: two empty lists)."""
    meta = getattr(sentence, "meta", None)
    context = meta.get("context") if isinstance(meta, dict) else None
    if not context:
        return [], []
    before, after = context
    return [str(w) for w in before], [str(w) for w in after]


def ptb_ids(tokenizer: Any, words: Sequence[str]) -> list[list[int]]:
    """Each word's piece ids under ``words-ptb``: the pieces of the tokenizer's model's class
    (:func:`pmask.perturb.alignment.subword_lists.subword_lists`); a word without pieces, or a piece missing from
    the vocabulary, gets the unknown token."""
    unk = _unk(tokenizer)
    out = []
    for pieces in subword_lists(tokenizer).pieces(tokenizer, words):
        ids = [tokenizer.convert_tokens_to_ids(p) for p in pieces] if pieces else [unk]
        out.append([unk if t is None else int(t) for t in ids])
    return out


def _unk(tokenizer: Any) -> int:
    unk = tokenizer.unk_token_id
    return int(unk if unk is not None else tokenizer.mask_token_id or 0)


def ptb_align(tokenizer: Any, sentence: Sequence[str] | Any) -> WordAlignment:
    """The ``words-ptb`` alignment of a sentence (with its context, if it carries any).

    Args:
        tokenizer: a Hugging Face tokenizer with a classifier/begin and a separator/end token.
        sentence: n words, or an object with ``.words`` (and ``.meta["context"]``).

    Returns:
        The pieces of the n words laid out as their code lays out the model's class (BERT:
        ``[CLS] (before [SEP]) pieces (after) [SEP]``) as a :class:`WordAlignment`.
    """
    words = sentence_words(sentence)
    before, after = sentence_context(sentence)
    groups = ptb_ids(tokenizer, words)
    flat = [t for g in groups for t in g]
    index = [k for k, g in enumerate(groups) for _ in g]
    ctx_before = [t for g in ptb_ids(tokenizer, before) for t in g] if before else []
    ctx_after = [t for g in ptb_ids(tokenizer, after) for t in g] if after else []
    return _layout(tokenizer, flat, index, len(words), ctx_before, ctx_after)


def _layout(tokenizer: Any, ids: list[int], index: list[int], n: int, before: list[int],
            after: list[int]) -> WordAlignment:
    """The sentence's pieces between the tokens its model's class puts before and after them (with the
    context words' pieces, if any)."""
    head, tail = subword_lists(tokenizer).layout(tokenizer, before, after)
    word_index = [-1] * len(head) + index + [-1] * len(tail)
    return WordAlignment(input_ids=head + ids + tail, word_index=word_index, n_words=n)


def add_context_pieces(tokenizer: Any, alignment: WordAlignment, sentence: Any) -> WordAlignment:
    """``alignment`` (of the ``words`` aligner) laid out with the sentence's context words, if any."""
    before, after = sentence_context(sentence)
    if not before and not after:
        return alignment

    def pieces(words: list[str]) -> list[int]:
        if not words:
            return []
        enc = tokenizer(words, is_split_into_words=True, add_special_tokens=False, truncation=False, verbose=False)
        return [int(t) for t in enc["input_ids"]]

    inside = [t for t, w in enumerate(alignment.word_index) if w >= 0]
    lo, hi = inside[0], inside[-1] + 1
    return _layout(tokenizer, list(alignment.input_ids[lo:hi]), list(alignment.word_index[lo:hi]), alignment.n_words,
                   pieces(before), pieces(after))
