"""Slow, literal re-implementations of the authors' pipeline (Wu et al. 2020), shared by the tests.

Impact: for every word-piece position p (specials included) one batch of L sequences, sequence q
masking the word of p and the word of q, read at p. Decoding: their transposed "softmax", the
classic ``parse_proj`` Eisner (ROOT may take several children) and the max-product arborescence.
Importable from test files because ``conftest.py`` puts this folder on ``sys.path``.

Independent of what it checks: the model and tokenizer are loaded by transformers itself (from the
folder the pmask model was loaded from, in its dtype), and words are aligned to pieces here, from
the tokenizer's character offsets (:func:`ref_align`), never by pmask's loading or alignment code.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from transformers import AutoModelForMaskedLM, AutoTokenizer

from brute_force import all_trees

#: the bundled models' folders (``models/<name>``), for a pmask model loaded by a bundled name
MODELS = Path(__file__).resolve().parents[1] / "models"


# ----------------------------------------------------------------------------- loading and alignment
@dataclass
class RefAlignment:
    """Token ids of one sentence (special tokens included) and the word of each token (-1: special)."""

    input_ids: list
    word_index: list

    @property
    def n_words(self) -> int:
        return max(self.word_index) + 1

    def pieces(self, k: int) -> list:
        return [t for t, w in enumerate(self.word_index) if w == k]


def ref_align(tok, words) -> RefAlignment:
    """The words joined by single spaces (and one before the first, so that a byte-level BPE gives
    every word its leading space, as when each word is tokenised on its own) and tokenised once; each
    token belongs to the word whose characters its offsets overlap (special tokens: -1)."""
    text, spans = "", []
    for word in words:
        text += " "
        spans.append((len(text), len(text) + len(word)))
        text += word
    enc = tok(text, return_offsets_mapping=True, return_special_tokens_mask=True)
    word_index = []
    for (a, b), special in zip(enc["offset_mapping"], enc["special_tokens_mask"]):
        if special:
            word_index.append(-1)
            continue
        hits = [k for k, (s, e) in enumerate(spans) if a < e and max(b, a + 1) > s]
        assert len(hits) == 1, (words, text, a, b)
        word_index.append(hits[0])
    ids = list(enc["input_ids"])
    for k in range(len(words)):   # a word without any piece (a control character) gets the unknown token
        if k not in word_index:
            at = max((t + 1 for t, w in enumerate(word_index) if 0 <= w < k), default=1)
            ids.insert(at, tok.unk_token_id)
            word_index.insert(at, k)
    assert [w for w in word_index if w >= 0] == sorted(w for w in word_index if w >= 0), (words, word_index)
    return RefAlignment(ids, word_index)


_LOADED: dict = {}


def ref_model(lm):
    """``(tokenizer, model, num_layers)`` loaded by transformers from the folder ``lm`` (a pmask
    ``LoadedModel``, or a folder) was loaded from, in its dtype (float64 by default)."""
    assert not getattr(lm, "random_init", False), "a random-weight model cannot be loaded again independently"
    name = str(getattr(lm, "name", lm))
    path = Path(name) if Path(name).is_dir() else MODELS / name
    dtype = getattr(lm, "dtype", torch.float64)
    key = (str(path.resolve()), dtype)
    if key not in _LOADED:
        model = AutoModelForMaskedLM.from_pretrained(str(path), dtype=dtype).eval()
        _LOADED[key] = (AutoTokenizer.from_pretrained(str(path)), model, int(model.config.num_hidden_layers))
    return _LOADED[key]


# ----------------------------------------------------------------------------- impact
def _head(model, h):
    for attr in ("cls", "lm_head"):
        if hasattr(model, attr):
            return getattr(model, attr)(h)
    raise AssertionError("unknown head")


def authors_batch(ids: torch.Tensor, word_index: torch.Tensor, p: int, mask_id: int) -> torch.Tensor:
    """The authors' batch for piece position ``p``: shape (L, L), row q is the sentence with the
    word of p and the word of q masked (every piece of each; special tokens, word index -1, are
    never masked), so row p has only p's word masked. ``ids``/``word_index``: length L."""
    real = word_index >= 0
    same_p = (word_index == word_index[p]) & real
    masked = same_p[None, :] | ((word_index[None, :] == word_index[:, None]) & real[None, :])
    return torch.where(masked, mask_id, ids[None, :])


def authors_forward(model, batch: torch.Tensor):
    """``model`` on ``batch`` as their code runs it: no padding, segment 0, every hidden state."""
    return model(input_ids=batch, attention_mask=torch.ones_like(batch),
                 token_type_ids=torch.zeros_like(batch), output_hidden_states=True)


_REF_CACHE: dict = {}


def reference_piece_matrix(lm, words, layers, metric):
    """Authors' scheme: for every piece position p (specials included) one batch of L sequences,
    sequence q masking the word of p and the word of q; read at p; compare with p's word alone
    masked. Returns [len(layers), L, L] (row p, column q) and the alignment."""
    tok, model, num_layers = ref_model(lm)
    key = (id(model), tuple(words), tuple(layers), metric)
    if key in _REF_CACHE:
        return _REF_CACHE[key]
    al = ref_align(tok, words)
    ids = torch.tensor(al.input_ids)
    widx = torch.tensor(al.word_index)
    L = len(ids)
    ks = [k if k >= 0 else num_layers + 1 + k for k in layers]
    out = np.zeros((len(layers), L, L))
    with torch.inference_mode():
        for p in range(L):
            rows = authors_batch(ids, widx, p, tok.mask_token_id)
            batch = torch.cat([rows[p:p + 1], rows])   # row 0: only p's word masked; row 1+q: also q's word
            res = authors_forward(model, batch)
            for li, k in enumerate(ks):
                h = res.hidden_states[k][:, p].double()
                if metric == "dist":
                    d = (h[1:] - h[0]).norm(dim=-1)
                elif metric == "cos":
                    d = 1 - torch.nn.functional.cosine_similarity(h[1:], h[0:1], dim=-1)
                else:
                    logits = res.logits[:, p] if k == num_layers else _head(model, res.hidden_states[k][:, p])
                    prob = logits.double().softmax(-1)[:, ids[p]]
                    d = prob[0] - prob[1:]
                out[li, p] = d.numpy()
    _REF_CACHE[key] = (out, al)
    return out, al


def reference(lm, words, layers, metric, subword, include_cls=False):
    piece, al = reference_piece_matrix(lm, words, layers, metric)
    merge = {"avg": np.mean, "sum": np.sum, "max": np.max, "first": lambda a, axis: np.take(a, 0, axis=axis)}[subword]
    n = al.n_words
    cols = [al.pieces(j)[0] for j in range(n)]
    rows = [merge(piece[:, al.pieces(i)], axis=1)[:, cols] for i in range(n)]
    F = np.stack(rows, axis=1)
    if include_cls:
        cls = al.word_index.index(-1)
        full = np.zeros((len(layers), n + 1, n + 1))
        full[:, 1:, 1:] = F
        full[:, 0, 1:] = piece[:, cls, cols]
        full[:, 0, 0] = piece[:, cls, cls]
        return full
    return F



# ----------------------------------------------------------------------------- decoding
def ref_softmax(F):
    """Their ``e / e.sum(axis=1)``: entry [i][j] is divided by the sum of ROW j."""
    N = len(F)
    top = max(max(row) for row in F)
    e = [[math.exp(F[i][j] - top) for j in range(N)] for i in range(N)]
    row_sum = [sum(e[j]) for j in range(N)]
    return [[e[i][j] / row_sum[j] for j in range(N)] for i in range(N)]


def ref_parse_proj(scores):
    """Loop transcription of Kiperwasser & Goldberg's ``parse_proj``; scores[head][dep]."""
    N = len(scores) - 1
    inf = float("inf")
    complete = [[[0.0, 0.0] for _ in range(N + 1)] for _ in range(N + 1)]
    incomplete = [[[0.0, 0.0] for _ in range(N + 1)] for _ in range(N + 1)]
    cb = [[[-1, -1] for _ in range(N + 1)] for _ in range(N + 1)]
    ib = [[[-1, -1] for _ in range(N + 1)] for _ in range(N + 1)]
    for t in range(N + 1):
        incomplete[0][t][0] = -inf

    def first_max(values, offset):
        best, arg = values[0], 0
        for i, v in enumerate(values):
            if v > best:
                best, arg = v, i
        return best, offset + arg

    for k in range(1, N + 1):
        for s in range(N - k + 1):
            t = s + k
            vals = [complete[s][r][1] + complete[r + 1][t][0] + scores[t][s] for r in range(s, t)]
            incomplete[s][t][0], ib[s][t][0] = first_max(vals, s)
            vals = [complete[s][r][1] + complete[r + 1][t][0] + scores[s][t] for r in range(s, t)]
            incomplete[s][t][1], ib[s][t][1] = first_max(vals, s)
            vals = [complete[s][r][0] + incomplete[r][t][0] for r in range(s, t)]
            complete[s][t][0], cb[s][t][0] = first_max(vals, s)
            vals = [incomplete[s][r][1] + complete[r][t][1] for r in range(s + 1, t + 1)]
            complete[s][t][1], cb[s][t][1] = first_max(vals, s + 1)
    heads = [-1] * (N + 1)

    def back(s, t, d, comp):
        if s == t:
            return
        if comp:
            r = cb[s][t][d]
            if d == 0:
                back(s, r, 0, 1), back(r, t, 0, 0)
            else:
                back(s, r, 1, 0), back(r, t, 1, 1)
        else:
            r = ib[s][t][d]
            if d == 0:
                heads[s] = t
            else:
                heads[t] = s
            back(s, r, 1, 1), back(r + 1, t, 0, 1)

    back(0, N, 1, 1)
    return heads[1:]


def ref_faithful_eisner(F_cls, root, softmax=ref_softmax):
    """Their masking, ``softmax`` (theirs by default) and ``parse_proj`` on the transpose."""
    F = [list(map(float, row)) for row in F_cls]
    N = len(F)
    for j in range(N):
        F[root][j] = 0.0
    F[root][0] = 1.0
    F[0][0] = 0.0
    S = softmax(F)
    ST = [[S[j][i] for j in range(N)] for i in range(N)]
    return ref_parse_proj(ST)


def ref_faithful_cle_best(F_cls, root):
    """Brute force: max product of masked F[dep][head] over all trees; zero arcs impossible."""
    F = np.array(F_cls, dtype=float)
    F[0, :] = 0
    F[root, :] = 0
    F[root, 0] = 1
    np.fill_diagonal(F, 0)
    n = len(F) - 1
    H = all_trees(n)
    prod = F[np.arange(1, n + 1), H].prod(axis=1)
    return H, prod




# ----------------------------------------------------------------------------- whole pipeline
def authors_word_matrix(lm, words, layer=-1):
    """Their (n+1)x(n+1) matrix with [CLS] at 0: the piece matrix merged by their buffer walk
    (columns: first piece of each group; rows: mean over the group), [SEP] dropped."""
    piece, al = reference_piece_matrix(lm, words, [layer], "dist")
    mapping = list(al.word_index)

    def walk(matrix, pick):
        out = []
        for line in matrix:
            new_row, buf = [], []
            for j in range(len(line) - 1):
                buf.append(line[j])
                if mapping[j] != mapping[j + 1]:
                    new_row.append(pick(buf))
                    buf = []
            out.append(new_row)
        return out

    cols_merged = np.array(walk(piece[0].tolist(), lambda b: b[0])).T.tolist()
    return np.array(walk(cols_merged, lambda b: sum(b) / len(b))).T


def authors_heads(lm, words, root, decoder):
    """Heads (CoNLL-U convention) the authors' code would output for one sentence."""
    F = authors_word_matrix(lm, words)
    if decoder == "eisner":
        return ref_faithful_eisner(F.tolist(), root)
    H, prod = ref_faithful_cle_best(F, root)
    return H[int(np.argmax(prod))].tolist()
