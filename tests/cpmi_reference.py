"""Naive float64 references of Hoover et al.'s CPMI readings, one per model family, shared by the tests.

Written from the paper (CPMI[i, j] = log p(w_i | c) - log p(w_i | c without w_j), a word of several
pieces scored left to right by the chain rule) and from the observed behaviour of their
``ptb_tokenlist_to_pmi_matrix`` (github.com/mcqll/cpmi-dependencies, ``pmi_accuracy/languagemodel.py``,
transformers 4.27), never by calling pmask: one model call per input, the model's own logits,
log-softmax in float64 at the one position read. Their quirks are kept on purpose (every one is
listed in docs/cpmi.md, "every difference"):

- :func:`authors_subwords` / :func:`authors_layout`: their tokenisation of each family (PTB bracket
  names, prefix-space rules, the ``n't`` surgery) and their special tokens and context layout;
- :func:`authors_log_p`: their reading of a layout (row i: the word predicted, column j: the word
  hidden), whichever tokenisation made the layout, so a clean tokenisation can be fed too;
- :func:`authors_cpmi`: both, the matrix their code returns.

Families: ``bert`` (also XLM-free masked LMs), ``xlm``, ``bart``, ``xlnet``, ``gpt2`` (also any causal
LM read their GPT-2 way, e.g. a Llama: its tokenizer's bos/eos are the first and last tokens).
Checked against their code by ``benchmarks/cpmi_equality.py --reference``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

FAMILIES = ("bert", "xlm", "bart", "xlnet", "gpt2")
PTB_BRACKETS = {"-LCB-": "{", "-RCB-": "}", "-LSB-": "[", "-RSB-": "]", "-LRB-": "(", "-RRB-": ")"}


@dataclass
class AuthorsLayout:
    """One input as their code builds it: token ids (specials and context included) and, for each word
    of the sentence, the absolute positions of its pieces."""

    input_ids: list
    spans: list

    @property
    def n_words(self) -> int:
        return len(self.spans)


# ----------------------------------------------------------------------------- their tokenisation
def _byte_bpe_prefix(family: str, words: Sequence[str], index: int) -> bool:
    """Whether their GPT-2 / BART code tokenises word ``index`` with a leading space."""
    word = words[index]
    if family == "gpt2":      # checked on the PTB word as given, before its bracket is restored
        return word[0] not in ",.:;!'"
    word = PTB_BRACKETS.get(word, word)          # BART: checked after; and on the previous word as given
    return word[0] not in ",.:;!')]}" and not (index > 0 and words[index - 1] in ("(", "[", "{", "`", "``"))


def authors_subwords(family: str, tokenizer, words: Sequence[str]) -> list:
    """Their ``make_subword_lists``: the token strings of each word after their adjustments.

    A token string that the adjustments create (``does`` + ``n``) may be outside the vocabulary: it
    becomes the unknown token's id, as in their ``convert_tokens_to_ids``.
    """
    lists = []
    for index, word in enumerate(words):
        text = PTB_BRACKETS.get(word, word)
        if family in ("gpt2", "bart"):
            text = (" " if _byte_bpe_prefix(family, words, index) else "") + text
        lists.append(list(tokenizer.tokenize(text)))
    split_nt = {"bert": ["n", "'", "t"], "gpt2": ["\u0120n", "'t"], "bart": ["\u0120n", "'t"]}
    for i, pieces in enumerate(lists):
        if pieces == split_nt.get(family) and i:      # "does n't": the n joins the previous word's last piece
            del pieces[0]
            lists[i - 1][-1] += "n"
        elif family == "xlm" and pieces == ["n</w>", "'t</w>"] and i:
            del pieces[0]
            lists[i - 1][-1] = lists[i - 1][-1][:-4] + "n</w>"
        elif family == "xlnet":
            # lists[i - 1] for i == 0 is the LAST word: their code does not guard the first word here
            if pieces[0][0] == "\u2581" and lists[i - 1][-1] in ("(", "[", "{"):
                pieces[0] = pieces[0][1:]
                if pieces[0] == "":
                    pieces.pop(0)
            if pieces[0] == "\u2581" and pieces[1] in (")", "]", "}", ",", ".", '"', "'", "!", "?") and i:
                pieces.pop(0)
            if pieces == ["\u2581", "n", "'", "t"] and i:
                del pieces[:2]
                lists[i - 1][-1] += "n"
    return lists


def _ids(tokenizer, family: str, words: Sequence[str]) -> tuple:
    lists = authors_subwords(family, tokenizer, words)
    return [tokenizer.convert_tokens_to_ids(p) for p in lists], lists


def authors_layout(family: str, tokenizer, words: Sequence[str], pad_left: Sequence[str] = (),
                   pad_right: Sequence[str] = ()) -> AuthorsLayout:
    """Their input for a sentence (``pad_left`` / ``pad_right``: their context words, see ``get_padding``):

    - bert: ``[CLS] (left [SEP]) sentence right [SEP]``;
    - xlm: ``</s> (left </s>) sentence right </s>`` (its cls and sep are both ``</s>``);
    - bart: ``<s> left sentence right </s>``;
    - gpt2: ``bos left sentence right eos`` (GPT-2: ``<|endoftext|>`` both times);
    - xlnet: ``(left <sep>) sentence right <sep> <cls>`` (nothing before the sentence without context).
    """
    tok = tokenizer
    pieces, _ = _ids(tok, family, words)
    left = [t for w in _ids(tok, family, pad_left)[0] for t in w] if pad_left else []
    right = [t for w in _ids(tok, family, pad_right)[0] for t in w] if pad_right else []
    if family in ("bert", "xlm"):
        before = [tok.cls_token_id] + (left + [tok.sep_token_id] if pad_left else [])
        after = right + [tok.sep_token_id]
    elif family in ("bart", "gpt2"):
        before, after = [tok.bos_token_id] + left, right + [tok.eos_token_id]
    elif family == "xlnet":
        before = left + [tok.sep_token_id] if pad_left else []
        after = right + [tok.sep_token_id, tok.cls_token_id]
    else:
        raise ValueError(f"unknown family {family!r}")
    ids, spans = list(before), []
    for word in pieces:
        spans.append(tuple(range(len(ids), len(ids) + len(word))))
        ids.extend(word)
    return AuthorsLayout(ids + after, spans)


# ----------------------------------------------------------------------------- their reading
def _log_prob(family: str, model, ids: torch.Tensor, hidden: list, pos: int, mask_id) -> float:
    """log p(ids[pos]) as their code reads it, with the positions ``hidden`` hidden (pieces pos, pos+1, ... of
    the word predicted, and every piece of the other word, if any)."""
    target = int(ids[pos])
    if family == "gpt2":
        # the input stays whole; the hidden positions are dropped from the attention mask (keys), and
        # so is everything from pos on (a no-op for a causal model); read the state before pos
        attention = torch.ones(1, len(ids), dtype=torch.long)
        attention[0, pos:] = 0
        attention[0, hidden] = 0
        logits = model(input_ids=ids[None], attention_mask=attention).logits[0, pos - 1]
    else:
        x = ids.clone()
        x[hidden] = mask_id
        if family == "xlnet":
            # every hidden position is a mask token that no position may attend to; the query stream predicts pos
            perm = torch.zeros(1, len(ids), len(ids), dtype=model.dtype)
            perm[0, :, hidden] = 1.0
            mapping = torch.zeros(1, 1, len(ids), dtype=model.dtype)
            mapping[0, 0, pos] = 1.0
            logits = model(input_ids=x[None], perm_mask=perm, target_mapping=mapping).logits[0, 0]
        elif family == "bart":
            # their call passes input_ids alone: the decoder is fed the same masked input shifted right
            decoder = torch.cat([torch.tensor([model.config.decoder_start_token_id]), x[:-1]])
            logits = model(input_ids=x[None], decoder_input_ids=decoder[None]).logits[0, pos]
        else:   # bert, xlm: input_ids alone
            logits = model(input_ids=x[None]).logits[0, pos]
    return float(torch.log_softmax(logits.double(), -1)[target])


def authors_log_p(family: str, model, layout: AuthorsLayout, mask_id=None) -> np.ndarray:
    """``log_p[i, j]`` = Σ_k log p(piece k of word i | pieces k.. of i hidden, and every piece of j if j ≠ i):
    one model call per (i, j, k). ``mask_id``: the mask token (not used by ``gpt2``)."""
    ids = torch.tensor(layout.input_ids)
    n = layout.n_words
    log_p = np.zeros((n, n))
    with torch.no_grad():
        for i, target in enumerate(layout.spans):
            for j, source in enumerate(layout.spans):
                for k, pos in enumerate(target):
                    hidden = list(target[k:]) + (list(source) if j != i else [])
                    log_p[i, j] += _log_prob(family, model, ids, hidden, pos, mask_id)
    return log_p


def reference_model(family: str, folder):
    """``(tokenizer, model)`` of ``folder`` loaded by transformers in float64, eval mode.

    ``from_pretrained(dtype=torch.float64)`` leaves some XLNet weights in float32 and XLNet computes its
    relative positional encoding in float32 whatever the model's dtype: the model is converted with
    ``.double()`` and that encoding cast to float64, nothing else changed.
    """
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    auto = AutoModelForCausalLM if family in ("gpt2", "xlnet") else AutoModelForMaskedLM
    model = auto.from_pretrained(str(folder)).double().eval()
    if family == "xlnet":
        encode = model.transformer.relative_positional_encoding
        model.transformer.relative_positional_encoding = lambda *a, **kw: encode(*a, **kw).double()
    return AutoTokenizer.from_pretrained(str(folder)), model


def cpmi_from_log_p(log_p: np.ndarray) -> np.ndarray:
    """CPMI[i, j] = log_p[i, i] - log_p[i, j] (their ``pmi_matrix``; the diagonal is 0)."""
    return np.diag(log_p)[:, None] - log_p


def authors_cpmi(family: str, model, tokenizer, words: Sequence[str], pad_left: Sequence[str] = (),
                 pad_right: Sequence[str] = ()) -> np.ndarray:
    """The n × n matrix their ``ptb_tokenlist_to_pmi_matrix`` returns for ``words`` (rows: the word predicted)."""
    layout = authors_layout(family, tokenizer, words, pad_left, pad_right)
    return cpmi_from_log_p(authors_log_p(family, model, layout, getattr(tokenizer, "mask_token_id", None)))
