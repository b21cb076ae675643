"""Hoover et al.'s tokenisation of each of their model classes (``words-ptb``): pieces and input layout.

Their code (``make_subword_lists`` and ``_create_pmi_dataset`` of each class in
``pmi_accuracy/languagemodel.py``, github.com/mcqll/cpmi-dependencies) tokenises each PTB word on its own,
then adjusts the pieces, and lays the input out around the sentence and its context words, differently for
each class. :data:`SUBWORD_LISTS` holds one :class:`SubwordLists` per class, named as theirs:

- ``BERT`` (and ``XLM``, whose one rule applies to its own ``</w>`` pieces only): PTB brackets read as
  brackets; a word tokenised ``n ' t`` (``n</w> 't</w>``) gives its ``n`` to the previous word's last piece;
  ``[CLS] (left [SEP]) sentence right [SEP]``;
- ``GPT2``: a word gets a leading space unless it starts with one of ``, . : ; ! '`` (looked at before its
  bracket is restored); ``Ġn 't`` gives its ``n`` to the previous word; ``bos left sentence right eos``;
- ``Bart``: as GPT2, but no leading space before ``) ] }`` either (after the bracket is restored) nor after a
  word that is literally ``( [ { `` or `````; ``bos left sentence right eos``;
- ``XLNet``: ``▁`` after an opening bracket removed, a lone ``▁`` before closing punctuation removed (not for the
  first word), ``▁ n ' t`` gives its ``n`` to the previous word; ``(left <sep>) sentence right <sep> <cls>``
  (their first-word check looks at the *last* word's last piece: kept, it is theirs).

A model family names the class whose tokenisation its ``--faithful`` reproduces
(``ModelFamily.subword_lists``); it is recorded on the model's tokenizer at load (:func:`use_subword_lists`)
so that the ``words-ptb`` aligner (:func:`pmask.perturb.alignment.context.ptb_align`) needs nothing else.

Example:
    >>> bert_pieces(["-LRB-", "does", "n't"], lambda w: {"n't": ["n", "'", "t"]}.get(w, [w]))
    [['('], ['doesn'], ["'", 't']]
"""
from __future__ import annotations

import json
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Sequence

#: PTB's escaped brackets, read as the brackets themselves.
PTB_BRACKETS = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}"}
_ATTRIBUTE = "pmask_subword_lists"     # set on a loaded tokenizer: the name of its SubwordLists
_PLAIN: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def bert_pieces(words: Sequence[str], tokenize: Callable[[str], list[str]]) -> list[list[str]]:
    """Their BERT (and XLM) pieces: brackets restored, then the ``n ' t`` (``n</w> 't</w>``) fix."""
    pieces = [list(tokenize(PTB_BRACKETS.get(w, w))) for w in words]
    for k in range(1, len(pieces)):
        if pieces[k] == ["n", "'", "t"] and pieces[k - 1]:
            pieces[k] = pieces[k][1:]
            pieces[k - 1][-1] += "n"
        elif pieces[k] == ["n</w>", "'t</w>"] and pieces[k - 1]:
            pieces[k] = pieces[k][1:]
            pieces[k - 1][-1] = pieces[k - 1][-1][:-4] + "n</w>"
    return pieces


def plain_tokenize(tokenizer: Any) -> Callable[[str], list[str]]:
    """The tokenizer's pieces of a text exactly as given: pmask makes a byte-level BPE put a space marker in
    front of every word (``configure_for_words``); their GPT-2 and BART code decides that per word."""
    if tokenizer not in _PLAIN:
        from tokenizers import Tokenizer

        spec = json.loads(tokenizer.backend_tokenizer.to_str())

        def unprefixed(node: Any) -> None:
            if isinstance(node, dict):
                if node.get("type") == "ByteLevel":
                    node["add_prefix_space"] = False
                for value in node.values():
                    unprefixed(value)
            elif isinstance(node, list):
                for value in node:
                    unprefixed(value)

        unprefixed(spec.get("pre_tokenizer"))
        _PLAIN[tokenizer] = Tokenizer.from_str(json.dumps(spec))
    backend = _PLAIN[tokenizer]
    return lambda text: list(backend.encode(text, add_special_tokens=False).tokens)


def _n_t(pieces: list[list[str]], marker: str) -> list[list[str]]:
    """``[marker + 'n', "'t"]`` gives its ``n`` to the previous word's last piece (GPT2, Bart)."""
    for k in range(1, len(pieces)):
        if pieces[k] == [marker + "n", "'t"] and pieces[k - 1]:
            pieces[k] = pieces[k][1:]
            pieces[k - 1][-1] += "n"
    return pieces


def gpt2_pieces(tokenizer: Any, words: Sequence[str]) -> list[list[str]]:
    """Their GPT2 pieces (see the module docstring)."""
    tokenize = plain_tokenize(tokenizer)
    pieces = [tokenize(("" if w[:1] in tuple(",.:;!'") else " ") + PTB_BRACKETS.get(w, w)) for w in words]
    return _n_t(pieces, "\u0120")


def bart_pieces(tokenizer: Any, words: Sequence[str]) -> list[list[str]]:
    """Their Bart pieces (see the module docstring)."""
    tokenize = plain_tokenize(tokenizer)
    pieces = []
    for k, word in enumerate(words):
        text = PTB_BRACKETS.get(word, word)
        space = text[:1] not in tuple(",.:;!')]}") and not (k > 0 and words[k - 1] in ("(", "[", "{", "`", "``"))
        pieces.append(tokenize((" " if space else "") + text))
    return _n_t(pieces, "\u0120")


def xlnet_pieces(tokenizer: Any, words: Sequence[str]) -> list[list[str]]:
    """Their XLNet pieces (see the module docstring)."""
    pieces = [list(tokenizer.tokenize(PTB_BRACKETS.get(w, w))) for w in words]
    for k, own in enumerate(pieces):
        before = pieces[k - 1]                  # k = 0: the last word, as in their code
        if own and own[0][:1] == "\u2581" and before and before[-1] in ("(", "[", "{"):
            own[0] = own[0][1:]
            if own[0] == "":
                own.pop(0)
        if k and len(own) > 1 and own[0] == "\u2581" and own[1] in (")", "]", "}", ",", ".", '"', "'", "!", "?"):
            own.pop(0)
        if k and own == ["\u2581", "n", "'", "t"] and before:
            del own[:2]
            before[-1] += "n"
    return pieces


Layout = Callable[[Any, list[int], list[int]], tuple[list[int], list[int]]]


def _cls_sep(tokenizer: Any, left: list[int], right: list[int]) -> tuple[list[int], list[int]]:
    first = tokenizer.cls_token_id if tokenizer.cls_token_id is not None else tokenizer.bos_token_id
    last = tokenizer.sep_token_id if tokenizer.sep_token_id is not None else tokenizer.eos_token_id
    return [int(first)] + (left + [int(last)] if left else []), right + [int(last)]


def _bos_eos(tokenizer: Any, left: list[int], right: list[int]) -> tuple[list[int], list[int]]:
    return [int(tokenizer.bos_token_id)] + left, right + [int(tokenizer.eos_token_id)]


def _sep_cls_after(tokenizer: Any, left: list[int], right: list[int]) -> tuple[list[int], list[int]]:
    return (left + [int(tokenizer.sep_token_id)] if left else []), right + [int(tokenizer.sep_token_id),
                                                                           int(tokenizer.cls_token_id)]


@dataclass(frozen=True)
class SubwordLists:
    """One of their classes' tokenisation: each word's pieces (``pieces(tokenizer, words)``) and the tokens
    before and after the sentence given the context words' ids (``layout(tokenizer, left, right)``)."""

    name: str
    pieces: Callable[[Any, Sequence[str]], list[list[str]]]
    layout: Layout


SUBWORD_LISTS: dict[str, SubwordLists] = {
    lists.name: lists for lists in (
        SubwordLists("BERT", lambda tok, words: bert_pieces(words, tok.tokenize), _cls_sep),
        SubwordLists("GPT2", gpt2_pieces, _bos_eos),
        SubwordLists("Bart", bart_pieces, _bos_eos),
        SubwordLists("XLNet", xlnet_pieces, _sep_cls_after))}


def use_subword_lists(tokenizer: Any, name: str) -> None:
    """Record on a loaded tokenizer which class's tokenisation ``words-ptb`` reproduces (a key of
    :data:`SUBWORD_LISTS`; a model family's ``subword_lists``)."""
    if name not in SUBWORD_LISTS:
        raise KeyError(f"no tokenisation of Hoover et al.'s class {name!r} (have {', '.join(SUBWORD_LISTS)})")
    setattr(tokenizer, _ATTRIBUTE, name)


def subword_lists(tokenizer: Any) -> SubwordLists:
    """The tokenisation ``words-ptb`` reproduces for this tokenizer's model (BERT's unless its family said)."""
    return SUBWORD_LISTS[getattr(tokenizer, _ATTRIBUTE, "BERT")]
