"""The perturbed-masking impact engine: word-level impact matrices F[l, i, j].

For a sentence of n words, masking word i replaces all its pieces by the mask token (special
tokens are never masked). With H_l(x)_p the layer-l hidden state at piece p:

- ``dist``: f_p(i, j) = || H_l(x∖{i})_p − H_l(x∖{i,j})_p ||_2          (p a piece of word i)
- ``cos``:  f_p(i, j) = 1 − cos(H_l(x∖{i})_p, H_l(x∖{i,j})_p)
- ``prob``: f_p(i, j) = P_l(orig_p | x∖{i}) − P_l(orig_p | x∖{i,j}), P_l = softmax of the model's
  MLM head applied to layer l's state (a true MLM probability only for the last layer); a
  drop in the probability of the original piece, so it can be negative.

Row i merges word i's pieces with the subword policy: ``avg`` (mean over pieces of each piece's
own value, the paper's default — not the value of averaged vectors), ``first``, ``sum``, ``max``.
F[l, i, j] = impact of word j on word i; F[l, i, i] = 0.

Exact shortcuts: the input with {i, j} masked is read at i (for F[i, j]) and at j (for F[j, i]),
so a sentence costs n + n(n−1)/2 forward sequences (+1 unmasked one with ``include_cls``); no
layer above the highest requested one is run and that top layer is computed only at the read
positions (see ``pmask.perturb.forward``). Sequences of many sentences are packed into batches
of at most ``batch_tokens`` padded tokens; the BERT-style fast path then runs them without the
padding (position-wise work on real tokens only, attention per run of equal-length rows).
"""
from __future__ import annotations

import logging
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from pmask.errors import ModelError
from pmask.perturb.alignment import WordAlignment
from pmask.perturb.forward import Encoder, Reads
from pmask.perturb.model import LoadedModel
from pmask.perturb.surface import align_sentence

logger = logging.getLogger(__name__)

METRICS = ("dist", "cos", "prob")
SUBWORD_POLICIES = ("avg", "first", "sum", "max")
# Padded tokens per forward batch. CPU: 2048 keeps bert-base's activations (2048 × 3072 float32
# = 25 MB) small and is on the flat part of the throughput curve (1024 and 4096 measured 4–10 %
# slower end to end, benchmarks/impact_speed.py --batch-tokens); GPUs want far bigger batches.
DEFAULT_BATCH_TOKENS = {"cpu": 2048, "cuda": 32768}


@dataclass
class ImpactStats:
    """Counters filled in by ``impact_matrices`` (pass one in as ``stats=``); they accumulate."""

    sentences: int = 0            # sentences taken from the input (skipped ones included)
    skipped: int = 0              # too long for the model: yielded None
    skipped_indices: list[int] = field(default_factory=list)
    forward_sequences: int = 0    # masked inputs run through the model
    tokens: int = 0               # real tokens in those inputs
    padded_tokens: int = 0        # tokens the lower layers computed (rows × padded width unless packed)
    reads: int = 0                # hidden states read (piece positions)
    query_slots: int = 0          # top-layer query positions computed (fast path; rows × most reads in a row)
    attention_pairs: int = 0      # query·key pairs of a full layer (Σ rows × length², padding included if computed)
    query_key_pairs: int = 0      # query·key pairs of the partial top layer
    batches: int = 0
    oom_retries: int = 0
    seconds: float = 0.0
    fast_path: bool | None = None


def _mask_code(k: int) -> int:
    return -2 if k < 0 else k  # -2 never matches a word index (specials are -1)


class _Job:
    """One sentence in flight: its sequences, reads and partial results."""

    def __init__(self, index: int, words: list[str], al: WordAlignment, n_layers: int, include_cls: bool,
                 device: torch.device, metric: str, hidden: int, dtype: torch.dtype):
        self.index = index
        self.words = words
        self.al = al
        self.n = n = al.n_words
        self.L = len(al)
        self.ids = torch.tensor(al.input_ids, dtype=torch.long)
        self.widx = torch.tensor(al.word_index, dtype=torch.long)
        self.include_cls = include_cls
        cls_pos = al.word_index.index(-1) if include_cls else -1
        self.cls_pos = cls_pos
        # sequences: (A, B) masked words (-1 = none); unmasked first, then singles, then pairs
        A: list[int] = []
        Bm: list[int] = []
        if include_cls:
            A.append(-1)
            Bm.append(-1)
        A.extend(range(n))
        Bm.extend([-1] * n)
        for i in range(n):
            for j in range(i + 1, n):
                A.append(i)
                Bm.append(j)
        # masking word k masks every piece of its group (a multiword token in surface mode), whose
        # pieces carry the group's first word in word_index; owner[k] == k for per-word input
        self.owner = np.array([al.word_index[al.pieces(k)[0]] for k in range(n)], dtype=np.int64)
        self.A = np.array([_mask_code(a if a < 0 else self.owner[a]) for a in A], dtype=np.int64)
        self.B = np.array([_mask_code(b if b < 0 else self.owner[b]) for b in Bm], dtype=np.int64)
        self.S = len(A)
        # reads: (seq, pos, is_base, col); grouped by seq in order
        r_seq: list[int] = []
        r_pos: list[int] = []
        r_base: list[bool] = []
        r_col: list[int] = []
        for s, (a, b) in enumerate(zip(A, Bm)):
            if a < 0:                       # unmasked: the [CLS] base state
                r_seq.append(s); r_pos.append(cls_pos); r_base.append(True); r_col.append(-1)
            elif b < 0:                     # word a masked: base states of a's pieces
                for p in al.pieces(a):
                    r_seq.append(s); r_pos.append(p); r_base.append(True); r_col.append(-1)
                if include_cls:
                    r_seq.append(s); r_pos.append(cls_pos); r_base.append(False); r_col.append(a)
            else:                           # words a, b masked: F[a, b] read at a, F[b, a] read at b
                for p in al.pieces(a):
                    r_seq.append(s); r_pos.append(p); r_base.append(False); r_col.append(b)
                for p in al.pieces(b):
                    r_seq.append(s); r_pos.append(p); r_base.append(False); r_col.append(a)
        self.r_seq = np.array(r_seq, dtype=np.int64)
        self.r_pos = np.array(r_pos, dtype=np.int64)
        self.r_base = np.array(r_base, dtype=bool)
        self.r_col = np.array(r_col, dtype=np.int64)
        self.r_orig = np.array(al.input_ids, dtype=np.int64)[self.r_pos]  # original token at each read
        self.next_seq = 0      # first sequence not yet scheduled
        self.done_seqs = 0
        shape = (n_layers, self.L) if metric == "prob" else (n_layers, self.L, hidden)
        self.base = torch.zeros(shape, dtype=torch.float64 if dtype == torch.float64 else torch.float32, device=device)
        self.acc = np.zeros((n_layers, self.L, n), dtype=np.float32)  # piece-level values, column = word

    @property
    def finished(self) -> bool:
        return self.done_seqs == self.S

    def result(self, subword: str) -> np.ndarray:
        """Merge piece rows into word rows: [n_layers, n, n] (or [.., n+1, n+1] with the CLS row)."""
        reduce = {"avg": np.mean, "sum": np.sum, "max": np.max}.get(subword)
        rows = []
        for k in range(self.n):
            block = self.acc[:, self.al.pieces(k), :]                    # [n_layers, pieces, n]
            rows.append(block[:, 0, :] if subword == "first" else reduce(block.astype(np.float64), axis=1))
        Fw = np.stack(rows, axis=1).astype(np.float32)
        Fw[:, self.owner[:, None] == self.owner[None, :]] = 0.0   # words of one group: no impact
        acc = self.acc
        if not self.include_cls:
            return np.ascontiguousarray(Fw)
        out = np.zeros((acc.shape[0], self.n + 1, self.n + 1), dtype=np.float32)
        out[:, 1:, 1:] = Fw
        out[:, 0, 1:] = acc[:, self.cls_pos, :]
        return out


class _Skipped:
    finished = True

    def __init__(self, index: int):
        self.index = index


def _check_layers(layers, num_layers: int) -> list[int]:
    if isinstance(layers, int):
        layers = [layers]
    layers = list(layers)
    if not layers:
        raise ValueError("layers is empty; give at least one layer (0 = embeddings, -1 = last)")
    out = []
    for k in layers:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise ValueError(f"layer {k!r} is not an integer")
        kk = int(k) + num_layers + 1 if k < 0 else int(k)
        if not 0 <= kk <= num_layers:
            raise ValueError(f"layer {k} out of range for a model with {num_layers} layers "
                             f"(valid: 0..{num_layers} or {-num_layers - 1}..-1)")
        out.append(kk)
    return out


def _is_oom(err: BaseException) -> bool:
    if isinstance(err, torch.OutOfMemoryError):
        return True
    text = str(err).lower()
    return isinstance(err, RuntimeError) and ("out of memory" in text or "can't allocate memory" in text)


def impact_matrices(model: LoadedModel, sentences: Iterable[Sequence[str]], layers: Sequence[int] | int = (-1,),
                    metric: str = "dist", subword: str = "avg", *, batch_tokens: int | None = None,
                    include_cls: bool = False, progress: bool = False, stats: ImpactStats | None = None,
                    fast_path: bool | None = None, tokenize: str = "words") -> Iterator[np.ndarray | None]:
    """Yield one impact array per input sentence, in input order.

    Each is float32 ``[len(layers), n, n]`` with F[l, i, j] = impact of word j on word i at
    ``layers[l]`` (0 = embeddings … num_layers = last; negative counts from the end), or, with
    ``include_cls``, ``[len(layers), n+1, n+1]`` whose index 0 is the first special token: row 0
    = impact of word j on that token's state (unmasked vs j masked), column 0 = 0.
    A sentence longer than ``model.max_length`` tokens is skipped with a warning and yields None.
    ``batch_tokens``: padded tokens per forward batch (default 2048 on CPU, 32768 on CUDA).
    ``fast_path``: None = auto, False = force the generic full-forward path. Streams: memory is
    bounded by one batch plus the sentences it touches. ``tokenize``: ``"words"`` (each word
    separately) or ``"text"`` (the surface text; sentences may then be ``Sentence`` objects, see
    ``pmask.perturb.surface``).
    """
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r} (choose from {', '.join(METRICS)})")
    if subword not in SUBWORD_POLICIES:
        raise ValueError(f"unknown subword policy {subword!r} (choose from {', '.join(SUBWORD_POLICIES)})")
    layer_ids = _check_layers(layers, model.num_layers)
    if batch_tokens is None:
        batch_tokens = DEFAULT_BATCH_TOKENS.get(model.device.type, 4096)
    if int(batch_tokens) < 1:
        raise ValueError(f"batch_tokens must be positive, got {batch_tokens}")
    stats = stats if stats is not None else ImpactStats()
    encoder = Encoder(model.model, fast=fast_path)
    stats.fast_path = encoder.fast
    if metric == "prob":
        encoder.check_head()
    return _run(model, encoder, sentences, layer_ids, metric, subword, int(batch_tokens), include_cls, progress, stats,
                tokenize)


def _run(lm: LoadedModel, encoder: Encoder, sentences, layer_ids, metric, subword, budget, include_cls, progress,
         stats: ImpactStats, tokenize: str = "words") -> Iterator[np.ndarray | None]:
    tok = lm.tokenizer
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0
    mask_id = tok.mask_token_id
    hidden = int(getattr(lm.model.config, "hidden_size", 0) or getattr(lm.model.config, "dim", 0))
    nl = len(layer_ids)
    total = len(sentences) if hasattr(sentences, "__len__") else None
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, unit="sent", desc="impact")
    source = enumerate(sentences)
    pending: deque = deque()
    active: _Job | None = None
    exhausted = False
    state = {"budget": budget}

    def next_job() -> _Job | None:
        nonlocal exhausted
        while not exhausted:
            try:
                index, item = next(source)
            except StopIteration:
                exhausted = True
                return None
            words = getattr(item, "words", item)
            words = [str(w) for w in words] if not isinstance(words, str) else None
            if words is None:
                raise ValueError(f"sentence {index}: expected a list of words, got a string")
            if not words:
                raise ValueError(f"sentence {index} is empty (no words)")
            stats.sentences += 1
            al = align_sentence(tok, item if tokenize == "text" else words, tokenize)
            if len(al) > lm.max_length:
                logger.warning("skipping sentence %d (%r …): %d tokens exceed the model maximum of %d",
                               index, " ".join(words[:8]), len(al), lm.max_length)
                stats.skipped += 1
                stats.skipped_indices.append(index)
                pending.append(_Skipped(index))
                continue
            if include_cls and -1 not in al.word_index:
                raise ModelError(f"sentence {index}: include_cls needs a special token, tokenizer of {lm.name!r} adds none")
            job = _Job(index, words, al, nl, include_cls, lm.device, metric, hidden, lm.dtype)
            pending.append(job)
            return job
        return None

    try:
        while True:
            t0 = time.perf_counter()
            parts: list[tuple[_Job, int, int]] = []
            rows = 0
            width = 0
            while True:
                if active is None or active.next_seq >= active.S:
                    active = next_job()
                    if active is None:
                        break
                w = max(width, active.L)
                room = state["budget"] // w - rows
                if room <= 0:
                    if rows:
                        break
                    room = 1
                k = min(room, active.S - active.next_seq)
                parts.append((active, active.next_seq, active.next_seq + k))
                active.next_seq += k
                rows += k
                width = w
            if parts:
                _run_batch(lm, encoder, parts, layer_ids, metric, pad_id, mask_id, stats, state)
            done = []
            while pending and pending[0].finished:
                job = pending.popleft()
                done.append(None if isinstance(job, _Skipped) else job.result(subword))
            stats.seconds += time.perf_counter() - t0
            if bar is not None and done:
                bar.update(len(done))
                bar.set_postfix(tok_s=f"{stats.tokens / max(stats.seconds, 1e-9):.0f}")
            yield from done
            if not parts and exhausted:
                break
    finally:
        if bar is not None:
            bar.close()


def _run_batch(lm, encoder, parts, layer_ids, metric, pad_id, mask_id, stats, state) -> None:
    """Run one batch; on out-of-memory halve it (and the budget) and retry."""
    rows = sum(stop - start for _, start, stop in parts)
    try:
        _forward_batch(lm, encoder, parts, layer_ids, metric, pad_id, mask_id, stats)
        return
    except Exception as err:  # noqa: BLE001 - only OOM is handled, everything else re-raised
        if not _is_oom(err) or rows <= 1:
            raise
    stats.oom_retries += 1
    if lm.device.type == "cuda":
        torch.cuda.empty_cache()
    width = max(job.L for job, _, _ in parts)
    state["budget"] = max(width, min(state["budget"], rows * width) // 2)
    logger.warning("out of memory on a batch of %d sequences; retrying in halves (batch_tokens now %d)",
                   rows, state["budget"])
    half = rows // 2
    first: list = []
    second: list = []
    seen = 0
    for job, start, stop in parts:
        k = stop - start
        if seen + k <= half:
            first.append((job, start, stop))
        elif seen >= half:
            second.append((job, start, stop))
        else:
            cut = start + (half - seen)
            first.append((job, start, cut))
            second.append((job, cut, stop))
        seen += k
    _run_batch(lm, encoder, first, layer_ids, metric, pad_id, mask_id, stats, state)
    _run_batch(lm, encoder, second, layer_ids, metric, pad_id, mask_id, stats, state)


def _forward_batch(lm, encoder: Encoder, parts, layer_ids, metric, pad_id, mask_id, stats: ImpactStats) -> None:
    device = lm.device
    rows = sum(stop - start for _, start, stop in parts)
    width = max(job.L for job, _, _ in parts)
    ids = torch.full((rows, width), pad_id, dtype=torch.long)
    attn = torch.zeros((rows, width), dtype=torch.bool)
    r_row, r_pos, r_base, r_col, r_part, r_orig = [], [], [], [], [], []
    offset = 0
    real_tokens = 0
    for n_part, (job, start, stop) in enumerate(parts):
        k = stop - start
        A = torch.from_numpy(job.A[start:stop])[:, None]
        B = torch.from_numpy(job.B[start:stop])[:, None]
        masked = (job.widx[None, :] == A) | (job.widx[None, :] == B)
        ids[offset:offset + k, :job.L] = torch.where(masked, mask_id, job.ids[None, :])
        attn[offset:offset + k, :job.L] = True
        lo, hi = np.searchsorted(job.r_seq, [start, stop])
        r_row.append(job.r_seq[lo:hi] - start + offset)
        r_pos.append(job.r_pos[lo:hi])
        r_base.append(job.r_base[lo:hi])
        r_col.append(job.r_col[lo:hi])
        r_orig.append(job.r_orig[lo:hi])
        r_part.append(np.full(hi - lo, n_part, dtype=np.int64))
        offset += k
        real_tokens += k * job.L
    row = np.concatenate(r_row)
    pos = np.concatenate(r_pos)
    is_base = np.concatenate(r_base)
    col = np.concatenate(r_col)
    part = np.concatenate(r_part)
    # rank of each read within its row (reads are grouped by row)
    counts = np.bincount(row, minlength=rows)
    row_start = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank = np.arange(len(row)) - row_start[row]
    n_q = int(counts.max()) if len(counts) else 1
    q_idx = np.zeros((rows, n_q), dtype=np.int64)
    q_idx[row, rank] = pos

    to = lambda a: torch.as_tensor(a, device=device)  # noqa: E731
    acc_dtype = torch.float64 if lm.dtype == torch.float64 else torch.float32  # distances at >= float32
    reads = Reads(row=to(row), pos=to(pos), rank=to(rank), q_idx=to(q_idx))
    with torch.inference_mode():
        states = encoder.read_states(ids.to(device), attn.to(device), layer_ids, reads)  # [N, nl, D]
        if metric == "prob":
            values = encoder.token_probs(states, to(np.concatenate(r_orig)), acc_dtype)  # [N, nl]
        else:
            values = states.to(acc_dtype)                               # [N, nl, D]
        # store base states first (a pair's base may sit in this very batch), then compare
        base_sel = np.flatnonzero(is_base)
        for n_part, (job, _, _) in enumerate(parts):
            sel = base_sel[part[base_sel] == n_part]
            if len(sel):
                job.base[:, to(pos[sel])] = values[to(sel)].transpose(0, 1)
        dist_sel = np.flatnonzero(~is_base)
        out = None
        if len(dist_sel):
            base_vals = torch.cat([parts[n_part][0].base[:, to(pos[sel])].transpose(0, 1)
                                   for n_part in range(len(parts))
                                   for sel in [dist_sel[part[dist_sel] == n_part]] if len(sel)], dim=0)
            cur = values[to(dist_sel)]
            if metric == "dist":
                d = torch.linalg.vector_norm(base_vals - cur, dim=-1)
            elif metric == "cos":
                d = 1.0 - F.cosine_similarity(base_vals, cur, dim=-1)
            else:
                d = base_vals - cur
            out = d.cpu().numpy()                                      # [Nd, nl]
    # host-side bookkeeping last, so an OOM above leaves nothing half-done
    if out is not None:
        d_part = part[dist_sel]
        for n_part, (job, _, _) in enumerate(parts):
            m = d_part == n_part
            if m.any():
                job.acc[:, pos[dist_sel][m], col[dist_sel][m]] = out[m].T
    for job, start, stop in parts:
        job.done_seqs += stop - start
    stats.batches += 1
    stats.forward_sequences += rows
    stats.tokens += real_tokens
    work = encoder.work   # what the forward computed (the fast path skips padding where it can)
    stats.padded_tokens += work.tokens
    stats.reads += len(row)
    stats.query_slots += work.query_slots
    stats.attention_pairs += work.attention_pairs
    stats.query_key_pairs += work.query_key_pairs
