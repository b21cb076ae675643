"""Which words are punctuation (for scoring with punctuation excluded)."""
from __future__ import annotations

import unicodedata

from pmask.corpora.sentence import Sentence

PUNCT_UPOS = frozenset({"PUNCT", "SYM"})
PTB_PUNCT_TAGS = frozenset({"``", "''", ",", ".", ":", "-LRB-", "-RRB-", "#", "$"})


def _all_punct_chars(tag: str) -> bool:
    return bool(tag) and all(unicodedata.category(ch).startswith(("P", "S")) for ch in tag)


def is_punct_tag(tag: str | None) -> bool:
    """A PTB-style tag that marks punctuation: one of ``PTB_PUNCT_TAGS`` or made only of
    punctuation/symbol characters (e.g. ``-NONE-`` is not: it has letters)."""
    return tag is not None and (tag in PTB_PUNCT_TAGS or _all_punct_chars(tag))


def punct_mask(sentence: Sentence) -> list[bool]:
    """``mask[k-1]`` is True when word k is punctuation (excluded from scoring).

    Uses UPOS ``PUNCT``/``SYM`` when the sentence has UPOS tags, else its PTB tags (xpos, see
    :func:`is_punct_tag`); without either, nothing is punctuation.
    """
    n = len(sentence.words)
    if sentence.upos and any(u not in (None, "_") for u in sentence.upos):
        return [u in PUNCT_UPOS for u in sentence.upos]
    if sentence.xpos:
        return [is_punct_tag(t) for t in sentence.xpos]
    return [False] * n
