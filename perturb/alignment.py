"""Word ↔ word-piece alignment: which model tokens each word of a sentence owns.

The engine reads a sentence's model input only through a :class:`WordAlignment`, made by one
of the aligners registered in :data:`ALIGNERS` (``impact_matrices(..., tokenize=NAME)``):

- ``"words"`` (:func:`align`, the paper's scheme): each pre-split word is tokenised on its own
  (``is_split_into_words``) and pieces are assigned with the fast tokenizer's ``word_ids()``
  (never ``##`` heuristics).

A new tokenisation mode is one function ``(tokenizer, sentence) -> WordAlignment`` added to
``ALIGNERS``. A sentence is a list of words or an object with ``.words`` (and, for modes that
rebuild the running text, ``.space_after``). Several words may share pieces (the syntactic words
of one multiword token): masking any of them masks all its pieces, so two words whose pieces
coincide have impact 0 on each other.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from pmask.errors import ModelError
from pmask.options import check_choice


@dataclass
class WordAlignment:
    """Model input for one sentence and which pieces each word owns.

    Args:
        input_ids: the model's tokens, special tokens included, length T.
        word_index: for each token, the 0-based word it belongs to (the first one if several
            words share it), or -1 for special tokens; length T.
        n_words: number of words n (default: ``max(word_index) + 1``).
        word_pieces: optional explicit piece positions of each word (n lists of token
            positions); needed when words share pieces. Default: derived from ``word_index``.

    Every word must own at least one piece (:func:`align` maps a word the tokenizer drops to
    the unk token).

    Example:
        >>> al = WordAlignment([101, 7, 8, 9, 102], [-1, 0, 1, 1, -1])
        >>> al.pieces(1), al.first_pieces
        ([2, 3], [1, 2])
    """

    input_ids: list[int]
    word_index: list[int]
    n_words: int = 0
    word_pieces: list[list[int]] | None = None

    def __post_init__(self) -> None:
        if len(self.input_ids) != len(self.word_index):
            raise ModelError(f"alignment has {len(self.input_ids)} tokens but {len(self.word_index)} word indices")
        if not self.n_words:
            self.n_words = len(self.word_pieces) if self.word_pieces else max(self.word_index, default=-1) + 1
        if self.word_pieces is None:
            pieces: list[list[int]] = [[] for _ in range(self.n_words)]
            for t, w in enumerate(self.word_index):
                if w >= 0:
                    pieces[w].append(t)
            self.word_pieces = pieces
        if len(self.word_pieces) != self.n_words:
            raise ModelError(f"alignment lists pieces for {len(self.word_pieces)} of {self.n_words} words")
        for k, pcs in enumerate(self.word_pieces):
            if not pcs or not all(0 <= p < len(self.input_ids) and self.word_index[p] >= 0 for p in pcs):
                raise ModelError(f"word {k} has no model piece (or a piece outside the sentence's word tokens)")

    def __len__(self) -> int:
        return len(self.input_ids)

    def pieces(self, k: int) -> list[int]:
        """Token positions (into ``input_ids``) of word ``k``'s pieces, in order."""
        return self.word_pieces[k]

    @property
    def first_pieces(self) -> list[int]:
        """Position of each word's first piece."""
        return [p[0] for p in self.word_pieces]


def sentence_words(sentence: Any) -> list[str]:
    """The words of a sentence given as a list of words or an object with ``.words``.

    Raises ``ValueError`` for a plain string (a common slip: words must be pre-split).
    """
    words = getattr(sentence, "words", sentence)
    if isinstance(words, str):
        raise ValueError("expected a list of words, got a string")
    return [str(w) for w in words]


def align(tokenizer, sentence: Sequence[str] | Any) -> WordAlignment:
    """Tokenise pre-split words (with special tokens) and align pieces to words.

    Args:
        tokenizer: a fast (``tokenizers``-backed) Hugging Face tokenizer.
        sentence: n words, or an object with ``.words``.

    Returns:
        A :class:`WordAlignment` of T tokens; words that yield no piece at all (a control
        character) get a single unk-token piece so that no word is lost.

    Raises:
        ModelError: the tokenizer is not a fast one (no ``word_ids()``).

    Example:
        >>> al = align(tok, ["The", "unbelievable", "cat"])   # doctest: +SKIP
        >>> al.pieces(1)                                      # e.g. [2, 3, 4]
    """
    if not getattr(tokenizer, "is_fast", False):
        raise ModelError(f"tokenizer {type(tokenizer).__name__} is not a fast tokenizer; word alignment needs word_ids()")
    words = sentence_words(sentence)
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


#: Tokenisation modes: name -> ``aligner(tokenizer, sentence) -> WordAlignment``.
def _surface(tokenizer: Any, sentence: Any) -> WordAlignment:
    # lazy: pmask.perturb.surface builds on this module
    from pmask.perturb.surface import surface_align

    return surface_align(tokenizer, sentence)


ALIGNERS: dict[str, Callable[[Any, Any], WordAlignment]] = {"words": align, "text": _surface}


def get_aligner(name: str) -> Callable[[Any, Any], WordAlignment]:
    """The aligner registered as ``name`` in :data:`ALIGNERS`; ``OptionError`` (a ``ValueError``) for an unknown one."""
    return ALIGNERS[check_choice("tokenisation mode", name, ALIGNERS)]
