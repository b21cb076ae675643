"""The fast path for BERT-family layers (BERT, RoBERTa, XLM-R, CamemBERT, ELECTRA, DistilBERT).

The layers are re-expressed with the model's own weights on packed tokens [tokens, D]:
position-wise work (projections, feed-forward, LayerNorm) runs on real tokens only, attention
per segment of equal-length rows, so nothing is padded. Layers above the highest requested
one are never run, and the top requested layer computes keys/values for every token but
queries, attention output and feed-forward only at the read positions (its query slots).
It is used only for the model classes in ``FAST_PATH_CLASSES`` and only after agreeing with
the generic path on a probe input (``pmask.perturb.encoders.select``).
"""
from __future__ import annotations

import inspect
from typing import Any, Sequence

import torch
import torch.nn.functional as nnf

from pmask.perturb.encoders.batch import PackedBatch
from pmask.perturb.encoders.encoder import Encoder
from pmask.perturb.encoders.mlm_head import MlmHead

#: Model classes the fast path implements, with their layer family.
FAST_PATH_CLASSES: dict[str, str] = {
    "BertForMaskedLM": "bert", "RobertaForMaskedLM": "bert", "XLMRobertaForMaskedLM": "bert",
    "CamembertForMaskedLM": "bert", "ElectraForMaskedLM": "bert", "DistilBertForMaskedLM": "distilbert",
}


def fast_path_family(model: torch.nn.Module) -> str | None:
    """The layer family of ``model`` if the fast path implements its class and configuration, else None."""
    family = FAST_PATH_CLASSES.get(type(model).__name__)
    config = model.config
    if family is None or getattr(config, "is_decoder", False) or getattr(config, "add_cross_attention", False):
        return None
    if (getattr(config, "position_embedding_type", None) or "absolute") != "absolute":
        return None
    return family


class BertFamilyEncoder(Encoder):
    """Hidden states of BERT-family layers computed on packed tokens, partially on the top layer."""

    fast = True

    def __init__(self, model: torch.nn.Module, head: MlmHead | None, num_layers: int, name: str, family: str):
        super().__init__(model, head, num_layers, name)
        self.family = family
        self.layers = self.base.transformer.layer if family == "distilbert" else self.base.encoder.layer
        config: Any = model.config
        self.n_heads = int(getattr(config, "n_heads", 0) or config.num_attention_heads)
        embeddings = self.base.embeddings
        self._embed_takes_token_types = (family == "bert" and getattr(embeddings, "token_type_embeddings", None)
                                         is not None
                                         and "token_type_ids" in inspect.signature(embeddings.forward).parameters)
        self._fused: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}
        self._scratch: dict[tuple, torch.Tensor] = {}

    def states(self, batch: PackedBatch, layers: Sequence[int]) -> torch.Tensor:
        top = max(layers)
        self.work = batch.work(partial_top=top > 0)
        got: dict[int, torch.Tensor] = {}
        x = self._embed(batch)                                               # [tokens, D]
        if 0 in layers:
            got[0] = x[batch.read_token]
        for k in range(1, top + 1):
            if k == top:
                got[k] = self._layer(self.layers[k - 1], x, batch, top=True)[batch.read_slot]
            else:
                x = self._layer(self.layers[k - 1], x, batch, top=False)
                if k in layers:
                    got[k] = x[batch.read_token]
        return torch.stack([got[k] for k in layers], dim=1)

    def attentions(self, batch: PackedBatch, layers: Sequence[int]) -> list[torch.Tensor]:
        top = max(layers)
        self.work = batch.work(partial_top=False)
        got: dict[int, list[torch.Tensor]] = {}
        x = self._embed(batch)
        for k in range(1, top + 1):
            if k in layers:   # layer k's attention reads its input, hidden state k - 1
                got[k] = self._attention_probs(self.layers[k - 1], x, batch)
            if k < top:       # the top requested layer's output is never needed
                x = self._layer(self.layers[k - 1], x, batch, top=False)
        return [torch.stack([got[k][s] for k in layers], dim=1) for s in range(len(batch.segments))]

    def _attention_probs(self, layer: Any, x: torch.Tensor, batch: PackedBatch) -> list[torch.Tensor]:
        """softmax(Q K^T / sqrt(head size)) of one layer per segment, [rows, heads, length, length]
        (no attention mask: rows are never padded), as the model's eager attention computes it."""
        if self.family == "distilbert":
            queries, keys = layer.attention.q_lin(x), layer.attention.k_lin(x)
        else:
            weight, bias = self._fused_qkv(layer)
            width = weight.shape[0] // 3
            queries = nnf.linear(x, weight[:width], bias[:width])
            keys = nnf.linear(x, weight[width:2 * width], bias[width:2 * width])
        head_dim = keys.shape[1] // self.n_heads
        out = []
        for seg in batch.segments:
            q = queries[seg.tokens].view(seg.rows, seg.length, self.n_heads, head_dim).transpose(1, 2)
            k = keys[seg.tokens].view(seg.rows, seg.length, self.n_heads, head_dim).transpose(1, 2)
            out.append(torch.softmax(torch.matmul(q, k.transpose(2, 3)) * head_dim ** -0.5, dim=-1))
        return out

    def _embed(self, batch: PackedBatch) -> torch.Tensor:
        """Embedding output [tokens, D], one call per segment (positions restart in every row)."""
        emb = self.base.embeddings
        out = []
        for seg in batch.segments:
            ids = batch.rows(seg)
            if self.family == "distilbert":
                h = emb(ids)
            elif self._embed_takes_token_types:
                h = emb(input_ids=ids, token_type_ids=torch.zeros_like(ids))
            else:
                h = emb(input_ids=ids)
            out.append(h.reshape(-1, h.shape[-1]))
        x = torch.cat(out) if len(out) > 1 else out[0]
        projection = getattr(self.base, "embeddings_project", None)  # ELECTRA with embedding_size != hidden_size
        return projection(x) if projection is not None else x

    def _layer(self, layer: Any, x: torch.Tensor, batch: PackedBatch, top: bool) -> torch.Tensor:
        """One encoder layer on packed tokens x [tokens, D]; with ``top`` only at the query slots [Q, D]."""
        x_query = x[batch.query_token] if top else x
        if self.family == "distilbert":
            att = layer.attention
            context = self._attend(batch, att.q_lin(x_query), att.k_lin(x), att.v_lin(x), top)
            attended = layer.sa_layer_norm(att.out_lin(context) + x_query)
            ffn = layer.ffn
            return layer.output_layer_norm(ffn.lin2(ffn.activation(ffn.lin1(attended))) + attended)
        weight, bias = self._fused_qkv(layer)
        width = weight.shape[0] // 3
        if top:
            queries = nnf.linear(x_query, weight[:width], bias[:width])
            kv = torch.addmm(bias[width:], x, weight[width:].t(), out=self._buffer("qkv", x.shape[0], 2 * width, x))
            keys, values = kv[:, :width], kv[:, width:]
        else:
            qkv = torch.addmm(bias, x, weight.t(), out=self._buffer("qkv", x.shape[0], 3 * width, x))
            queries, keys, values = qkv[:, :width], qkv[:, width:2 * width], qkv[:, 2 * width:]
        return self._bert_tail(layer, x_query, self._attend(batch, queries, keys, values, top), x)

    def _attend(self, batch: PackedBatch, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                top: bool) -> torch.Tensor:
        """Scaled dot-product attention per segment: queries [Q or tokens, A], keys/values [tokens, A]."""
        width = keys.shape[1]
        head_dim = width // self.n_heads
        context = self._buffer("ctx", queries.shape[0], width, queries)

        def split(t: torch.Tensor, rows: slice, n_rows: int, length: int) -> torch.Tensor:
            return t[rows].reshape(n_rows, length, self.n_heads, head_dim).transpose(1, 2)

        for seg in batch.segments:
            k = split(keys, seg.tokens, seg.rows, seg.length)
            v = split(values, seg.tokens, seg.rows, seg.length)
            q_rows, q_len = (seg.slots, seg.slots_per_row) if top else (seg.tokens, seg.length)
            q = split(queries, q_rows, seg.rows, q_len)
            out = nnf.scaled_dot_product_attention(q, k, v)   # [rows, H, q_len, dh]
            context[q_rows].view(seg.rows, q_len, self.n_heads, head_dim).copy_(out.transpose(1, 2))
        return context

    def _bert_tail(self, layer: Any, x_query: torch.Tensor, context: torch.Tensor,
                   like: torch.Tensor) -> torch.Tensor:
        """Attention output projection, residual + LayerNorm, feed-forward: [rows, A] → [rows, D]."""
        rows, dim = x_query.shape
        att_out, ffn_in, ffn_out = layer.attention.output, layer.intermediate, layer.output
        # residual + bias first, then the GEMM accumulates in place (saves a pass over memory)
        residual = torch.add(x_query, att_out.dense.bias, out=self._buffer("res", rows, dim, like))
        attended = att_out.LayerNorm(residual.addmm_(context, att_out.dense.weight.t()))
        inner = torch.addmm(ffn_in.dense.bias, attended, ffn_in.dense.weight.t(),
                            out=self._buffer("ffn", rows, ffn_in.dense.out_features, like))
        if _is_exact_gelu(ffn_in.intermediate_act_fn):
            torch.ops.aten.gelu_(inner)   # the kernel of nnf.gelu, in place: no second [tokens, Dff] buffer
        else:
            inner = ffn_in.intermediate_act_fn(inner)
        residual = torch.add(attended, ffn_out.dense.bias, out=self._buffer("res", rows, dim, like))
        return ffn_out.LayerNorm(residual.addmm_(inner, ffn_out.dense.weight.t()))

    def _fused_qkv(self, layer: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """Query, key and value weights stacked [3·A, D] and biases [3·A] (one GEMM instead of three), cached."""
        key = id(layer)
        if key not in self._fused:
            sa = layer.attention.self
            self._fused[key] = (torch.cat([sa.query.weight, sa.key.weight, sa.value.weight]),
                                torch.cat([sa.query.bias, sa.key.bias, sa.value.bias]))
        return self._fused[key]

    def _buffer(self, name: str, rows: int, cols: int, like: torch.Tensor) -> torch.Tensor:
        """A reusable [rows, cols] scratch tensor (inference mode only, else a fresh one).

        Big GEMM outputs written into kept buffers skip the allocator's page faults (5–15 % of a
        bert-base layer on CPU); ``torch.empty`` per call would hand back freshly mapped memory.
        """
        if not torch.is_inference_mode_enabled():
            return like.new_empty((rows, cols))
        key = (name, like.dtype, like.device)
        buf = self._scratch.get(key)
        if buf is None or buf.numel() < rows * cols:
            buf = self._scratch[key] = like.new_empty(rows * cols)
        return buf[:rows * cols].view(rows, cols)


def _is_exact_gelu(act) -> bool:
    return getattr(act, "act", None) is nnf.gelu or act is nnf.gelu
