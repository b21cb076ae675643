"""Hidden states at selected positions, computing only what the impact engine reads.

Two implementations behind one call, ``Encoder.read_states``:

- *fast* (BERT/RoBERTa/XLM-R/ELECTRA-style and DistilBERT layers): the layers are re-expressed
  with the model's own weights, layers above the highest requested one are never run, and the
  top requested layer computes keys/values for every token but queries, attention output and
  feed-forward only at the read positions;
- *generic* (any other architecture): the base model's full forward with ``output_hidden_states``.

Both return the same numbers (tests check it). Hidden state layer 0 = embedding output
(after ELECTRA's embedding projection), layer k = output of encoder layer k.
"""
from __future__ import annotations

import inspect
import logging
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from pmask.errors import ModelError

logger = logging.getLogger(__name__)


@dataclass
class Reads:
    """Which hidden states to return: read r is position ``pos[r]`` of batch row ``row[r]``.

    ``q_idx`` [B, R] lists each row's read positions (padded with 0) and ``rank[r]`` is read r's
    slot in its row, so the top layer can run its queries on ``q_idx`` only.
    """

    row: torch.Tensor    # [N] long
    pos: torch.Tensor    # [N] long
    rank: torch.Tensor   # [N] long
    q_idx: torch.Tensor  # [B, R] long


@dataclass
class _Packing:
    """A batch as runs of equal-length rows: ``segs`` = (rows, length, first token, query slots
    per row R, first query slot); ``read_tok`` [N] packed token of each read, ``q_tok`` [Q] packed
    token of each top-layer query slot, ``read_slot`` [N] query slot of each read."""

    segs: list[tuple[int, int, int, int, int]]
    read_tok: torch.Tensor
    q_tok: torch.Tensor
    read_slot: torch.Tensor


@dataclass
class Work:
    """What the last ``read_states`` computed: tokens through the full layers, Σ length² of
    their attention, top-layer query slots and their query·key pairs."""

    tokens: int
    attention_pairs: int
    query_slots: int
    query_key_pairs: int


def _layer_kind(layer) -> str | None:
    att = getattr(layer, "attention", None)
    sa = getattr(att, "self", None)
    if (sa is not None and all(hasattr(sa, a) for a in ("query", "key", "value"))
            and hasattr(getattr(att, "output", None), "dense") and hasattr(getattr(layer, "intermediate", None), "dense")
            and hasattr(getattr(layer, "output", None), "dense")
            and not getattr(layer, "add_cross_attention", False)):
        return "bert"
    if (att is not None and all(hasattr(att, a) for a in ("q_lin", "k_lin", "v_lin", "out_lin"))
            and hasattr(layer, "sa_layer_norm") and hasattr(layer, "ffn") and hasattr(layer, "output_layer_norm")):
        return "distilbert"
    return None


class Encoder:
    """Wraps a masked LM to compute hidden states (and MLM probabilities) at read positions."""

    def __init__(self, model, fast: bool | None = None):
        self.model = model
        self.config = model.config
        self.base = model.base_model
        self.layers = self._find_layers()
        kinds = {_layer_kind(layer) for layer in self.layers} if self.layers else {None}
        self.kind = kinds.pop() if len(kinds) == 1 else None
        pos_type = getattr(self.config, "position_embedding_type", None) or "absolute"
        usable = (self.kind is not None and pos_type == "absolute" and not getattr(self.config, "is_decoder", False)
                  and hasattr(self.base, "embeddings"))
        if fast and not usable:
            raise ModelError(f"no fast path for model type {self.config.model_type!r}; use the generic path")
        self.fast = usable if fast is None else bool(fast)
        self._qkv_cache: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}
        self._buffers: dict[tuple, torch.Tensor] = {}
        self.work: Work | None = None
        if self.kind == "bert":
            self.heads = self.layers[0].attention.self.num_attention_heads
        elif self.kind == "distilbert":
            self.heads = int(getattr(self.config, "n_heads", 0) or self.config.num_attention_heads)
        emb = getattr(self.base, "embeddings", None)
        self._emb_takes_tt = emb is not None and "token_type_ids" in inspect.signature(emb.forward).parameters \
            and getattr(emb, "token_type_embeddings", None) is not None
        self._base_takes_tt = "token_type_ids" in inspect.signature(self.base.forward).parameters \
            and bool(getattr(self.config, "type_vocab_size", 0))

    def _find_layers(self):
        for path in ("encoder.layer", "transformer.layer", "encoder.layers", "layers"):
            obj = self.base
            for part in path.split("."):
                obj = getattr(obj, part, None)
                if obj is None:
                    break
            if isinstance(obj, torch.nn.ModuleList):
                return obj
        return None

    # ----------------------------------------------------------------- MLM head
    def check_head(self) -> None:
        """Raise ModelError now if this model's MLM head is unknown (metric ``prob``)."""
        m = self.model
        if not any(hasattr(m, a) for a in ("cls", "lm_head", "generator_lm_head", "vocab_projector")):
            raise ModelError(f"metric 'prob' is not supported for model type {self.config.model_type!r} "
                             "(unknown MLM head)")

    def token_probs(self, h: torch.Tensor, token_ids: torch.Tensor, dtype: torch.dtype, chunk: int = 256) -> torch.Tensor:
        """P(token_ids[r] | state h[r, l]) under the MLM head: h [N, nl, D], token_ids [N] → [N, nl].

        Computed in chunks of reads so that the [chunk, nl, V] logits stay small for big vocabularies.
        """
        out = []
        for s in range(0, h.shape[0], chunk):
            logits = self.head(h[s:s + chunk]).to(dtype)
            logp = torch.log_softmax(logits, dim=-1)
            idx = token_ids[s:s + chunk, None, None].expand(-1, logits.shape[1], 1)
            out.append(logp.gather(-1, idx)[..., 0].exp())
        return torch.cat(out) if out else h.new_zeros((0, h.shape[1]), dtype=dtype)

    def head(self, h: torch.Tensor) -> torch.Tensor:
        """MLM logits [..., V] for hidden states [..., D]."""
        m = self.model
        if hasattr(m, "cls"):                          # BERT
            return m.cls(h)
        if hasattr(m, "lm_head"):                      # RoBERTa, XLM-R, CamemBERT
            return m.lm_head(h)
        if hasattr(m, "generator_lm_head"):            # ELECTRA generator
            return m.generator_lm_head(m.generator_predictions(h))
        if hasattr(m, "vocab_projector"):              # DistilBERT
            return m.vocab_projector(m.vocab_layer_norm(m.activation(m.vocab_transform(h))))
        raise ModelError(f"metric 'prob' is not supported for model type {self.config.model_type!r} (unknown MLM head)")

    # ----------------------------------------------------------------- forward
    def read_states(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, layers: list[int],
                    reads: Reads) -> torch.Tensor:
        """Hidden states [N, len(layers), D] at the reads, for ``layers`` (0 = embeddings, sorted or not)."""
        if self.fast:
            return self._fast(input_ids, attention_mask, layers, reads)
        return self._generic(input_ids, attention_mask, layers, reads)

    def _token_type_ids(self, input_ids):
        return torch.zeros_like(input_ids)

    def _generic(self, input_ids, attention_mask, layers, reads):
        kwargs = {"input_ids": input_ids, "attention_mask": attention_mask.long(), "output_hidden_states": True}
        if self._base_takes_tt:
            kwargs["token_type_ids"] = self._token_type_ids(input_ids)
        hidden = self.base(**kwargs).hidden_states
        B, T = input_ids.shape
        self.work = Work(B * T, B * T * T, 0, 0)
        return torch.stack([hidden[k][reads.row, reads.pos] for k in layers], dim=1)

    def _embed(self, input_ids):
        emb = self.base.embeddings
        if self.kind == "distilbert":
            h = emb(input_ids)
        elif self._emb_takes_tt:
            h = emb(input_ids=input_ids, token_type_ids=self._token_type_ids(input_ids))
        else:
            h = emb(input_ids=input_ids)
        proj = getattr(self.base, "embeddings_project", None)  # ELECTRA with embedding_size != hidden_size
        return proj(h) if proj is not None else h

    def _fast(self, input_ids, attention_mask, layers, reads):
        if self.kind == "bert":
            packed = self._packing(attention_mask, reads)
            if packed is not None:
                return self._fast_packed(input_ids, attention_mask, layers, reads, packed)
        B, T = input_ids.shape
        self.work = Work(B * T, B * T * T, B * reads.q_idx.shape[1], B * reads.q_idx.shape[1] * T)
        wanted = set(layers)
        top = max(layers)
        # boolean key mask [B, 1, 1, T] (True = attend); None when nothing is padded
        mask = None if bool(attention_mask.all()) else attention_mask[:, None, None, :]
        got: dict[int, torch.Tensor] = {}
        h = self._embed(input_ids)
        if 0 in wanted:
            got[0] = h[reads.row, reads.pos]
        for k in range(1, top + 1):
            layer = self.layers[k - 1]
            if k == top:
                out = self._layer(layer, h, mask, reads.q_idx)      # [B, R, D]
                got[k] = out[reads.row, reads.rank]
            else:
                h = self._layer(layer, h, mask, None)
                if k in wanted:
                    got[k] = h[reads.row, reads.pos]
        return torch.stack([got[k] for k in layers], dim=1)

    # ------------------------------------------------------- packed (no padding)
    def _packing(self, attention_mask, reads) -> "_Packing | None":
        """Split the batch into runs of consecutive rows of equal length, or None if it is not
        left-aligned (then the padded path runs)."""
        B, T = attention_mask.shape
        lengths = attention_mask.sum(1)
        if not bool((attention_mask == (torch.arange(T, device=lengths.device)[None, :] < lengths[:, None])).all()):
            return None
        run_len, run_rows = torch.unique_consecutive(lengths, return_counts=True)
        run_len, run_rows = run_len.tolist(), run_rows.tolist()
        row_tok = torch.cumsum(lengths, 0) - lengths                    # first packed token of each row
        counts = torch.bincount(reads.row, minlength=B)
        segs = []
        row0 = tok0 = q0 = 0
        q_flat, read_slot = [], torch.empty_like(reads.row)
        for L, b in zip(run_len, run_rows):
            R = max(int(counts[row0:row0 + b].max()), 1)
            q_flat.append((row_tok[row0:row0 + b, None] + reads.q_idx[row0:row0 + b, :R]).reshape(-1))
            sel = (reads.row >= row0) & (reads.row < row0 + b)
            read_slot[sel] = q0 + (reads.row[sel] - row0) * R + reads.rank[sel]
            segs.append((b, L, tok0, R, q0))
            row0, tok0, q0 = row0 + b, tok0 + b * L, q0 + b * R
        return _Packing(segs, row_tok[reads.row] + reads.pos, torch.cat(q_flat), read_slot)

    def _fast_packed(self, input_ids, attention_mask, layers, reads, pk: "_Packing"):
        """``_fast`` with every position-wise op on the real tokens only [tokens, D]; attention
        runs per run of equal-length rows, so nothing is padded."""
        self.work = Work(sum(b * L for b, L, *_ in pk.segs), sum(b * L * L for b, L, *_ in pk.segs),
                         sum(b * R for b, _, _, R, _ in pk.segs), sum(b * R * L for b, L, _, R, _ in pk.segs))
        wanted = set(layers)
        top = max(layers)
        got: dict[int, torch.Tensor] = {}
        x = self._embed(input_ids)[attention_mask]                       # [tokens, D]
        if 0 in wanted:
            got[0] = x[pk.read_tok]
        for k in range(1, top + 1):
            layer = self.layers[k - 1]
            if k == top:
                got[k] = self._bert_layer_packed(layer, x, pk, top=True)[pk.read_slot]
            else:
                x = self._bert_layer_packed(layer, x, pk, top=False)
                if k in wanted:
                    got[k] = x[pk.read_tok]
        return torch.stack([got[k] for k in layers], dim=1)

    def _bert_layer_packed(self, layer, x, pk: "_Packing", top: bool):
        """One BERT layer on packed tokens x [tokens, D]; with ``top`` only at the query slots."""
        N, D = x.shape
        H = self.heads
        w, b = self._fused_qkv(layer)
        A = w.shape[0] // 3
        dh = A // H
        if not top:
            xq = x
            qkv = torch.addmm(b, x, w.t(), out=self._buffer("qkv", N, 3 * A, x))
            q_all, kv, kv_off, q_stride = qkv, qkv, A, 3 * A
        else:
            xq = x[pk.q_tok]
            q_all = F.linear(xq, w[:A], b[:A])
            kv = torch.addmm(b[A:], x, w[A:].t(), out=self._buffer("qkv", N, 2 * A, x))
            kv_off = 0
        ctx = self._buffer("ctx", xq.shape[0], A, x)
        for nb, L, t0, R, q0 in pk.segs:
            kvs = kv[t0:t0 + nb * L, kv_off:kv_off + 2 * A].reshape(nb, L, 2, H, dh).permute(2, 0, 3, 1, 4)
            if top:
                q = q_all[q0:q0 + nb * R].view(nb, R, H, dh).transpose(1, 2)
                c0, R_ = q0, R
            else:
                q = q_all[t0:t0 + nb * L, :A].reshape(nb, L, H, dh).transpose(1, 2)
                c0, R_ = t0, L
            out = F.scaled_dot_product_attention(q, kvs[0], kvs[1])           # [nb, H, R_, dh]
            ctx[c0:c0 + nb * R_].view(nb, R_, H, dh).copy_(out.transpose(1, 2))
        return self._bert_tail(layer, xq, ctx, x)

    def _bert_tail(self, layer, xq, ctx, like):
        """Attention output projection, residual + LayerNorm, feed-forward: [rows, A] → [rows, D]."""
        M, D = xq.shape
        att_out, ffn_in, ffn_out = layer.attention.output, layer.intermediate, layer.output
        # residual + bias first, then the GEMM accumulates in place (saves a pass over memory)
        r = torch.add(xq, att_out.dense.bias, out=self._buffer("res", M, D, like)).addmm_(ctx, att_out.dense.weight.t())
        a = att_out.LayerNorm(r)
        i = torch.addmm(ffn_in.dense.bias, a, ffn_in.dense.weight.t(),
                        out=self._buffer("ffn", M, ffn_in.dense.out_features, like))
        if self._exact_gelu(layer):
            torch._C._nn.gelu_(i)   # same kernel as F.gelu, without a second [tokens, Dff] buffer
        else:
            i = ffn_in.intermediate_act_fn(i)
        r = torch.add(a, ffn_out.dense.bias, out=self._buffer("res", M, D, like)).addmm_(i, ffn_out.dense.weight.t())
        return ffn_out.LayerNorm(r)

    def _layer(self, layer, h, mask, q_idx):
        """One encoder layer; with ``q_idx`` [B, R] the output only at those positions [B, R, D]."""
        if self.kind == "bert":
            return self._bert_layer(layer, h, mask, q_idx)
        return self._distilbert_layer(layer, h, mask, q_idx)

    def _fused_qkv(self, layer) -> tuple[torch.Tensor, torch.Tensor]:
        """Query, key and value weights stacked [3·A, D] (one GEMM instead of three), cached."""
        key = id(layer)
        if key not in self._qkv_cache:
            sa = layer.attention.self
            self._qkv_cache[key] = (torch.cat([sa.query.weight, sa.key.weight, sa.value.weight]),
                                    torch.cat([sa.query.bias, sa.key.bias, sa.value.bias]))
        return self._qkv_cache[key]

    def _buffer(self, name: str, rows: int, cols: int, like: torch.Tensor) -> torch.Tensor:
        """A reusable [rows, cols] scratch tensor (inference mode only, else a fresh one).

        Big GEMM outputs written into kept buffers skip the allocator's page faults (5–15 % of a
        bert-base layer on CPU); ``torch.empty`` per call would hand back freshly mapped memory.
        """
        if not torch.is_inference_mode_enabled():
            return like.new_empty((rows, cols))
        key = (name, like.dtype, like.device)
        buf = self._buffers.get(key)
        if buf is None or buf.numel() < rows * cols:
            buf = self._buffers[key] = like.new_empty(rows * cols)
        return buf[:rows * cols].view(rows, cols)

    def _exact_gelu(self, layer) -> bool:
        act = layer.intermediate.intermediate_act_fn
        return getattr(act, "act", None) is F.gelu or act is F.gelu

    def _bert_layer(self, layer, h, mask, q_idx):
        B, T, D = h.shape
        H = self.heads
        w, b = self._fused_qkv(layer)
        A = w.shape[0] // 3
        dh = A // H
        x = h.reshape(B * T, D)
        if q_idx is None:
            R, xq = T, x
            qkv = torch.addmm(b, x, w.t(), out=self._buffer("qkv", B * T, 3 * A, x))
            q, k, v = qkv.view(B, T, 3, H, dh).permute(2, 0, 3, 1, 4)
        else:
            R = q_idx.shape[1]
            xq = torch.gather(h, 1, q_idx[:, :, None].expand(-1, -1, D)).reshape(B * R, D)
            q = F.linear(xq, w[:A], b[:A]).view(B, R, H, dh).transpose(1, 2)
            kv = torch.addmm(b[A:], x, w[A:].t(), out=self._buffer("qkv", B * T, 2 * A, x))
            k, v = kv.view(B, T, 2, H, dh).permute(2, 0, 3, 1, 4)
        ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=mask).transpose(1, 2).reshape(B * R, A)
        return self._bert_tail(layer, xq, ctx, x).view(B, R, D)

    def _distilbert_layer(self, layer, h, mask, q_idx):
        B, T, D = h.shape
        H = self.heads
        hq = h if q_idx is None else torch.gather(h, 1, q_idx[:, :, None].expand(-1, -1, D))
        R = hq.shape[1]
        att = layer.attention
        dh = att.q_lin.out_features // H
        q = att.q_lin(hq).view(B, R, H, dh).transpose(1, 2)
        k = att.k_lin(h).view(B, T, H, dh).transpose(1, 2)
        v = att.v_lin(h).view(B, T, H, dh).transpose(1, 2)
        ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=mask).transpose(1, 2).reshape(B, R, H * dh)
        a = layer.sa_layer_norm(att.out_lin(ctx) + hq)
        ffn = layer.ffn
        return layer.output_layer_norm(ffn.lin2(ffn.activation(ffn.lin1(a))) + a)
