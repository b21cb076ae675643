"""Inputs and forwards for reading a causal LM's dependency syntax (benchmarks/causal_readings.py).

A sentence becomes a :class:`Layout`: one token sequence (a begin token, then the sentence once, or
twice for the *echo* layouts), the positions read for each word (its pieces in the last copy) and the
positions perturbed when the word is the source (its pieces in the first copy; in both copies with
``both``). :func:`perturbed_runs` runs the clean sequence once (keeping its keys and values) and, per
source word j, only the part from j's first perturbed position on, on top of the clean prefix's cache:
every word's log-probability (sum over its read pieces, each predicted from the token before it) and its
states at every layer (mean or last of its read pieces). :func:`naive_runs` is the same, one full
forward per input with no cache, for the tests.

Perturbations of word j (``kind``): ``hide`` (j's pieces masked out of every attention, positions
unchanged: Hoover et al.'s GPT-2 code), ``delete`` (j's pieces removed, the rest moved up) and
``replace`` (each of j's pieces replaced by one neutral token); ``none`` runs the clean sequence only (for the
readings that need no perturbation: distances, attention).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch

KINDS = ("hide", "delete", "replace", "none")
#: punctuation that takes no space before it in Hoover et al.'s GPT-2 tokenisation
NO_SPACE = (",", ".", ":", ";", "!", "'")
BRACKETS = {"-LCB-": "{", "-RCB-": "}", "-LSB-": "[", "-RSB-": "]", "-LRB-": "(", "-RRB-": ")"}


@dataclass(frozen=True)
class Layout:
    """One model input: ``ids`` (T tokens), ``read[k]`` and ``source[k]`` the positions of word k read as a
    target and perturbed as a source, ``first[k]`` its positions in the first copy (attention's keys)."""

    ids: list[int]
    read: list[list[int]]
    source: list[list[int]]
    first: list[list[int]]

    @property
    def n(self) -> int:
        return len(self.read)


def ptb_body(tokenizer: Any, words: Sequence[str]) -> tuple[list[int], list[list[int]]]:
    """Hoover et al.'s GPT-2 tokenisation, word by word: a space before each word unless it starts with
    :data:`NO_SPACE`, PTB brackets read as brackets, and a word ``n't`` (pieces ``Ġn 't``) giving its ``n`` to
    the previous word's last piece. Returns the ids and each word's positions."""
    lists = []
    for word in words:
        text = BRACKETS.get(word, word)
        lists.append(tokenizer.tokenize(text if word[0] in NO_SPACE else " " + text))
    for k in range(1, len(lists)):
        if lists[k] == ["\u0120n", "'t"] and lists[k - 1]:
            del lists[k][0]
            lists[k - 1][-1] += "n"
    unk = tokenizer.unk_token_id or 0
    ids, spans = [], []
    for pieces in lists:
        got = [unk if t is None else int(t) for t in tokenizer.convert_tokens_to_ids(pieces)] or [unk]
        spans.append(list(range(len(ids), len(ids) + len(got))))
        ids += got
    return ids, spans


def text_body(tokenizer: Any, sentence: Any) -> tuple[list[int], list[list[int]]]:
    """The sentence's running text (CoNLL-U ``SpaceAfter``) tokenised at once, pieces mapped to words by
    offsets (pmask's ``--tokenize text``; words that share a piece share all of their group's pieces)."""
    from pmask.perturb.alignment.surface import surface_align

    al = surface_align(tokenizer, sentence, warn=False)
    return list(al.input_ids), [list(al.pieces(k)) for k in range(al.n_words)]


def plain(bos: int, body: list[int], spans: list[list[int]]) -> Layout:
    """``bos sentence``: read and perturb the same pieces."""
    moved = [[p + 1 for p in s] for s in spans]
    return Layout([bos] + body, moved, moved, moved)


def echo(bos: int, body: list[int], spans: list[list[int]], before: list[int], between: list[int],
         both: bool = False) -> Layout:
    """``bos before sentence between sentence``: perturb the first copy (and the second with ``both``),
    read the second."""
    first = 1 + len(before)
    second = first + len(body) + len(between)
    one = [[p + first for p in s] for s in spans]
    two = [[p + second for p in s] for s in spans]
    source = [a + b for a, b in zip(one, two)] if both else one
    return Layout([bos] + before + body + between + body, two, source, one)


@dataclass
class Runs:
    """What the forwards give for one sentence (L+1 layers, n words, hidden size D).

    Per pool (``avg``, ``last``: how a word's state is read from its pieces): ``distance[pool][l, j, k]`` the
    distance between the clean states of words j and k; ``moved[pool][l, j, k]`` how far word k's state
    moves from its clean state when j is perturbed. ``logp[k]`` is word k's clean log-probability,
    ``logp_without[j, k]`` its log-probability with j perturbed. ``forwards`` and ``tokens`` count the
    sequences and the tokens run.
    """

    distance: dict[str, np.ndarray]
    logp: np.ndarray
    moved: dict[str, np.ndarray]
    logp_without: np.ndarray
    forwards: int
    tokens: int


def _perturbed(layout: Layout, j: int, kind: str, replace_id: int) -> tuple[int, list[int], list[int], list[bool],
                                                                             dict[int, int]]:
    """Source j's suffix from its first perturbed position f: (f, token ids, position ids, visible, map from
    an original position >= f to its index in the suffix; deleted positions are absent)."""
    hit = set(layout.source[j])
    f = min(hit)
    ids, pos, vis, where = [], [], [], {}
    for p in range(f, len(layout.ids)):
        if kind == "delete" and p in hit:
            continue
        where[p] = len(ids)
        ids.append(replace_id if kind == "replace" and p in hit else layout.ids[p])
        pos.append(f + len(pos) if kind == "delete" else p)
        vis.append(not (kind == "hide" and p in hit))
    return f, ids, pos, vis, where


def word_states(hidden: torch.Tensor, read: list[list[int]], pool: str) -> torch.Tensor:
    """[L+1, n, D] from [L+1, T, D]: mean (``avg``) or ``last`` of each word's read positions."""
    if pool == "last":
        return hidden[:, [r[-1] for r in read]]
    return torch.stack([hidden[:, r].mean(1) for r in read], 1)


def _logp_words(model: Any, final: torch.Tensor, reads: list[list[int]], targets: list[list[int]]) -> np.ndarray:
    """Per word: sum of log p(target piece), each read at the position before it (``final`` [T, D], normed)."""
    flat = [p - 1 for r in reads for p in r]
    logits = model.lm_head(final[flat]).log_softmax(-1)
    tok = torch.tensor([t for ts in targets for t in ts])
    lp = logits[torch.arange(len(flat)), tok].double().numpy()
    out, k = np.zeros(len(reads)), 0
    for w, r in enumerate(reads):
        out[w] = lp[k:k + len(r)].sum()
        k += len(r)
    return out


def _distances(words: torch.Tensor) -> np.ndarray:
    """[L+1, n, n] Euclidean distances between the words' states [L+1, n, D]."""
    return torch.cdist(words.double(), words.double()).numpy()


def _start(model: Any, layout: Layout, pools: Sequence[str]) -> tuple[torch.Tensor, Any, dict[str, torch.Tensor],
                                                                     list[list[int]], np.ndarray]:
    """The clean run: states [L+1, T, D], its cache, the words' states per pool, targets, clean log p."""
    out = model.model(torch.tensor([layout.ids]), use_cache=True, output_hidden_states=True)
    hidden = torch.stack(out.hidden_states)[:, 0]
    words = {pool: word_states(hidden, layout.read, pool) for pool in pools}
    targets = [[layout.ids[p] for p in r] for r in layout.read]
    return hidden, out.cache, words, targets, _logp_words(model, hidden[-1], layout.read, targets)


def perturbed_runs(model: Any, layout: Layout, kind: str, *, pools: Sequence[str] = ("avg", "last"),
                   replace_id: int = 0, chunk: int = 32) -> Runs:
    """The clean run and one run per source word (see the module docstring), batched ``chunk`` sources at a
    time on the clean prefix's cache. A source after every read piece (the last word, read as it is) changes
    nothing and is not run."""
    from transformers import DynamicCache

    n = layout.n
    with torch.no_grad():
        hidden, cache, clean, targets, logp = _start(model, layout, pools)
        L1 = hidden.shape[0]
        moved = {pool: np.zeros((L1, n, n)) for pool in pools}
        logp_without = np.tile(logp, (n, 1))
        kv = [(layer.keys, layer.values) for layer in cache.layers]
        order = [] if kind == "none" else sorted(
            (j for j in range(n) if any(k != j and max(layout.read[k]) >= min(layout.source[j]) for k in range(n))),
            key=lambda j: min(layout.source[j]))
        tokens = len(layout.ids)
        for c in range(0, len(order), chunk):
            group = [_perturbed(layout, j, kind, replace_id) for j in order[c:c + chunk]]
            P, S, B = max(g[0] for g in group), max(len(g[1]) for g in group), len(group)
            ids = torch.zeros((B, S), dtype=torch.long)
            pos = torch.zeros((B, S), dtype=torch.long)
            mask = torch.zeros((B, P + S), dtype=torch.long)
            for b, (f, i_, p_, v_, _) in enumerate(group):
                ids[b, :len(i_)] = torch.tensor(i_)
                pos[b, :len(p_)] = torch.tensor(p_)
                pos[b, len(p_):] = p_[-1] + 1
                mask[b, :f] = 1                                    # the clean prefix up to f, not beyond
                mask[b, P:P + len(v_)] = torch.tensor(v_, dtype=torch.long)
            past = DynamicCache(ddp_cache_data=[(k[:, :, :P].expand(B, -1, -1, -1).contiguous(),
                                                 v[:, :, :P].expand(B, -1, -1, -1).contiguous()) for k, v in kv])
            out = model.model(ids, attention_mask=mask, position_ids=pos, cache=past, use_cache=True,
                              output_hidden_states=True)
            suffix = torch.stack(out.hidden_states)              # [L+1, B, S, D]
            tokens += int(sum(len(g[1]) for g in group))
            for b, (f, _, _, _, where) in enumerate(group):
                full = torch.cat([hidden[:, :f], suffix[:, b]], 1)   # the perturbed sequence's states
                index = {p: f + s for p, s in where.items()} | {p: p for p in range(f)}
                _read_source(model, layout, order[c + b], f, index, full, clean, targets, moved, logp_without)
    return Runs({pool: _distances(w) for pool, w in clean.items()}, logp, moved, logp_without, len(order) + 1,
                tokens)


def _read_source(model: Any, layout: Layout, j: int, f: int, index: dict[int, int], full: torch.Tensor,
                 clean: dict[str, torch.Tensor], targets: list[list[int]], moved: dict[str, np.ndarray],
                 logp_without: np.ndarray) -> None:
    """Fill column j (source j) of ``moved`` and row j of ``logp_without`` from one perturbed sequence's states
    (``index``: original position -> position in it, deleted ones absent)."""
    changed = [k for k in range(layout.n) if k != j and max(layout.read[k]) >= f and
               all(p in index for p in layout.read[k])]
    if not changed:
        return
    read = [[index[p] for p in layout.read[k]] for k in changed]
    for pool, words in clean.items():
        moved[pool][:, j, changed] = (word_states(full, read, pool) - words[:, changed]).norm(dim=-1).double().numpy()
    # positions in the perturbed sequence are contiguous: a piece is predicted at the one before it
    logp_without[j, changed] = _logp_words(model, full[-1], read, [targets[k] for k in changed])


def naive_runs(model: Any, layout: Layout, kind: str, *, pools: Sequence[str] = ("avg", "last"),
               replace_id: int = 0) -> Runs:
    """:func:`perturbed_runs` the slow way: every input a full forward of its own, no cache (for the tests)."""
    n = layout.n
    with torch.no_grad():
        clean_h = torch.stack(model.model(torch.tensor([layout.ids]), output_hidden_states=True).hidden_states)[:, 0]
        clean = {pool: word_states(clean_h, layout.read, pool) for pool in pools}
        targets = [[layout.ids[p] for p in r] for r in layout.read]
        logp = _logp_words(model, clean_h[-1], layout.read, targets)
        moved = {pool: np.zeros((clean_h.shape[0], n, n)) for pool in pools}
        without = np.tile(logp, (n, 1))
        for j in range(n):
            hit = set(layout.source[j])
            keep = [p for p in range(len(layout.ids)) if not (kind == "delete" and p in hit)]
            ids = [replace_id if kind == "replace" and p in hit else layout.ids[p] for p in keep]
            mask = torch.tensor([[0 if kind == "hide" and p in hit else 1 for p in keep]])
            h = torch.stack(model.model(torch.tensor([ids]), attention_mask=mask,
                                        output_hidden_states=True).hidden_states)[:, 0]
            new = {p: t for t, p in enumerate(keep)}
            others = [k for k in range(n) if k != j and all(p in new for p in layout.read[k])]
            read = [[new[p] for p in layout.read[k]] for k in others]
            for pool in pools:
                moved[pool][:, j, others] = (word_states(h, read, pool) - clean[pool][:, others]).norm(dim=-1).numpy()
            without[j, others] = _logp_words(model, h[-1], read, [targets[k] for k in others])
    return Runs({pool: _distances(w) for pool, w in clean.items()}, logp, moved, without, n + 1, 0)


def attention(model: Any, layout: Layout) -> np.ndarray:
    """[L, H, n, n] attention from word i (mean over its read pieces as queries) to word j (sum over its
    first-copy pieces as keys), every layer and head, one clean forward with eager attention."""
    before = model.config._attn_implementation
    model.set_attn_implementation("eager")
    try:
        with torch.no_grad():
            att = torch.stack(model.model(torch.tensor([layout.ids]), output_attentions=True).attentions)[:, 0]
    finally:
        model.set_attn_implementation(before)
    rows = torch.stack([att[:, :, r].mean(2) for r in layout.read], 2)            # [L, H, n, T]
    return torch.stack([rows[..., f].sum(-1) for f in layout.first], 3).double().numpy()
