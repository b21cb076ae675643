"""Word ↔ word-piece alignment from a fast tokenizer's ``word_ids()`` (never ``##`` heuristics)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from pmask.errors import ModelError


@dataclass
class WordAlignment:
    """Model input for one sentence and which word each piece belongs to.

    ``input_ids[t]`` is the t-th token including special tokens; ``word_index[t]`` is the
    0-based word it belongs to, or -1 for special tokens. Every word has at least one piece
    (a word the tokenizer drops, e.g. a control character, is mapped to the unk token).
    """

    input_ids: list[int]
    word_index: list[int]
    n_words: int = 0
    _pieces: list[list[int]] = field(default_factory=list, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.n_words:
            self.n_words = max(self.word_index, default=-1) + 1
        if not self._pieces:
            pieces: list[list[int]] = [[] for _ in range(self.n_words)]
            for t, w in enumerate(self.word_index):
                if w >= 0:
                    pieces[w].append(t)
            self._pieces = pieces

    def __len__(self) -> int:
        return len(self.input_ids)

    def pieces(self, k: int) -> list[int]:
        """Token positions (into ``input_ids``) of word ``k``'s pieces, in order."""
        return self._pieces[k]

    @property
    def first_pieces(self) -> list[int]:
        """Position of each word's first piece."""
        return [p[0] for p in self._pieces]


def align(tokenizer, words: Sequence[str]) -> WordAlignment:
    """Tokenise pre-split ``words`` (with special tokens) and align pieces to words.

    Requires a fast tokenizer (``word_ids()``); raises ``ModelError`` otherwise. Words that yield
    no piece at all get a single unk-token piece in their place so no word is lost.
    """
    if not getattr(tokenizer, "is_fast", False):
        raise ModelError(f"tokenizer {type(tokenizer).__name__} is not a fast tokenizer; word alignment needs word_ids()")
    words = list(words)
    enc = tokenizer(words, is_split_into_words=True, add_special_tokens=True, truncation=False, verbose=False)
    ids: list[int] = list(enc["input_ids"])
    wids = enc.word_ids()
    unk = tokenizer.unk_token_id
    if unk is None:
        unk = tokenizer.mask_token_id if tokenizer.mask_token_id is not None else 0
    word_pos = [t for t, w in enumerate(wids) if w is not None]
    if word_pos:
        trailing_from = word_pos[-1] + 1
    else:  # nothing but specials: split them as the template does around a real word
        probe = tokenizer(["a"], is_split_into_words=True, add_special_tokens=True, verbose=False)
        trailing_from = probe.word_ids().index(0)
    input_ids: list[int] = []
    word_index: list[int] = []
    missing = 0  # next word not yet emitted

    def flush(upto: int) -> None:
        nonlocal missing
        while missing < upto:  # words the tokenizer dropped get one unk piece each
            input_ids.append(unk)
            word_index.append(missing)
            missing += 1

    for t, (tok, w) in enumerate(zip(ids, wids)):
        if w is None:
            if t >= trailing_from:
                flush(len(words))
            input_ids.append(tok)
            word_index.append(-1)
        else:
            flush(w)
            missing = max(missing, w + 1)
            input_ids.append(tok)
            word_index.append(w)
    flush(len(words))
    return WordAlignment(input_ids=input_ids, word_index=word_index, n_words=len(words))
