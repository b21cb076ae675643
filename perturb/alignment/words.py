"""Word ↔ word-piece alignment: which model tokens each word of a sentence owns.

The engine reads a sentence's model input only through a :class:`WordAlignment`, made by the aligner of one
of the tokenisation modes (:data:`pmask.common.tokenization.TOKENIZE_ENTRIES`, ``impact_matrices(...,
tokenize=NAME)``):

- ``"words"`` (:func:`align`, the paper's scheme): each pre-split word is tokenised on its own
  (``is_split_into_words``) and pieces are assigned with the fast tokenizer's ``word_ids()``
  (never ``##`` heuristics).

A new tokenisation mode is one :class:`~pmask.common.tokenization.TokenizeMode` registered with its aligner
``(tokenizer, sentence, *, warn) -> WordAlignment`` (:mod:`pmask.perturb.alignment`). A sentence is a list of
words or an object with ``.words`` (and, for modes that rebuild the running text, ``.space_after``). Several
words may share pieces (the syntactic words of one multiword token): masking any of them masks all its pieces,
so two words whose pieces coincide have impact 0 on each other.
"""
from __future__ import annotations

from typing import Any, Sequence

from pmask.common.errors import ModelError
from pmask.perturb.alignment.word_alignment import WordAlignment


def sentence_words(sentence: Any) -> list[str]:
    """The words of a sentence given as a list of words or an object with ``.words``.

    Raises ``ValueError`` for a plain string (a common slip: words must be pre-split).
    """
    words = getattr(sentence, "words", sentence)
    if isinstance(words, str):
        raise ValueError("expected a list of words, got a string")
    return [str(w) for w in words]


def align_bare(tokenizer, sentence: Sequence[str] | Any) -> WordAlignment:
    """As :func:`align`, without the special tokens (Kim et al. 2020 run their models on the words alone).

    Example:
        >>> align_bare(tok, ["The", "cat"]).word_index   # doctest: +SKIP
        [0, 1]
    """
    full = align(tokenizer, sentence)
    keep = [t for t, w in enumerate(full.word_index) if w >= 0]
    return WordAlignment([full.input_ids[t] for t in keep], [full.word_index[t] for t in keep], full.n_words)


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
        >>> from transformers import AutoTokenizer
        >>> tok = AutoTokenizer.from_pretrained("bert-base-uncased")
        >>> al = align(tok, ["The", "unbelievable", "cat"])
        >>> al.n_words, al.pieces(0)   # after [CLS]; al.pieces(1) is e.g. [2, 3, 4] when a word splits in three
        (3, [1])
    """
    if not getattr(tokenizer, "is_fast", False):
        raise ModelError(f"tokenizer {type(tokenizer).__name__} is not a fast tokenizer; "
                         "word alignment needs word_ids()")
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
