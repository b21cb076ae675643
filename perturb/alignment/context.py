"""Context words around a sentence (``--context N``) and the ``words-ptb`` tokenisation (Hoover et al. 2021).

A sentence may carry context: words of its neighbouring sentences in the same file, given to the
model but never masked, read or scored (``Sentence.meta["context"] = (before, after)``, set by
:func:`pmask.perturb.alignment.neighbours.add_context`). The word aligners lay a sentence with context out as
Hoover et al.'s code does: ``[CLS] before [SEP] sentence after [SEP]`` (no ``before``: ``[CLS]
sentence after [SEP]``); context pieces belong to no word (word index -1, like special tokens).

``words-ptb`` tokenises each word on its own after two adjustments of theirs (``make_subword_lists``
of ``pmi_accuracy/languagemodel.py`` in github.com/mcqll/cpmi-dependencies): PTB bracket tokens
(``-LRB-``, ``-RRB-``, ``-LSB-``, ``-RSB-``, ``-LCB-``, ``-RCB-``) are read as the brackets, and a
word tokenised exactly ``n ' t`` gives its ``n`` to the previous word's last piece ("does n't" is
fed as the model saw "doesn't": ``doesn ' t``; a piece missing from the vocabulary becomes the
unknown token, as in their code).

Example:
    >>> ptb_pieces(["-LRB-", "does", "n't"], lambda w: {"n't": ["n", "'", "t"]}.get(w, [w]))
    [['('], ['doesn'], ["'", 't']]
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from pmask.perturb.alignment.word_alignment import WordAlignment
from pmask.perturb.alignment.words import sentence_words

#: PTB's escaped brackets, read as the brackets themselves.
PTB_BRACKETS = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}"}


def sentence_context(sentence: Any) -> tuple[list[str], list[str]]:
    """The context words (before, after) a sentence carries (none: two empty lists)."""
    meta = getattr(sentence, "meta", None)
    context = meta.get("context") if isinstance(meta, dict) else None
    if not context:
        return [], []
    before, after = context
    return [str(w) for w in before], [str(w) for w in after]


def ptb_pieces(words: Sequence[str], tokenize: Callable[[str], list[str]]) -> list[list[str]]:
    """Each word's pieces under the ``words-ptb`` adjustments (see the module docstring)."""
    pieces = [list(tokenize(PTB_BRACKETS.get(w, w))) for w in words]
    for k in range(1, len(pieces)):
        if pieces[k] == ["n", "'", "t"] and pieces[k - 1]:
            pieces[k] = pieces[k][1:]
            pieces[k - 1][-1] += "n"
    return pieces


def _ends(tokenizer: Any) -> tuple[int, int]:
    first = tokenizer.cls_token_id if tokenizer.cls_token_id is not None else tokenizer.bos_token_id
    last = tokenizer.sep_token_id if tokenizer.sep_token_id is not None else tokenizer.eos_token_id
    return int(first), int(last)


def _unk(tokenizer: Any) -> int:
    unk = tokenizer.unk_token_id
    return int(unk if unk is not None else tokenizer.mask_token_id or 0)


def ptb_ids(tokenizer: Any, words: Sequence[str]) -> list[list[int]]:
    """Each word's piece ids under ``words-ptb`` (a word without pieces gets the unknown token)."""
    unk = _unk(tokenizer)
    out = []
    for pieces in ptb_pieces(words, tokenizer.tokenize):
        ids = [int(t) for t in tokenizer.convert_tokens_to_ids(pieces)] if pieces else [unk]
        out.append([unk if t is None else t for t in ids])
    return out


def ptb_align(tokenizer: Any, sentence: Sequence[str] | Any) -> WordAlignment:
    """The ``words-ptb`` alignment of a sentence (with its context, if it carries any).

    Args:
        tokenizer: a Hugging Face tokenizer with a classifier/begin and a separator/end token.
        sentence: n words, or an object with ``.words`` (and ``.meta["context"]``).

    Returns:
        ``[CLS] (before [SEP]) pieces of the n words (after) [SEP]`` as a :class:`WordAlignment`.
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
    first, last = _ends(tokenizer)
    head = [first] + (before + [last] if before else [])
    input_ids = head + ids + after + [last]
    word_index = [-1] * len(head) + index + [-1] * (len(after) + 1)
    return WordAlignment(input_ids=input_ids, word_index=word_index, n_words=n)


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
