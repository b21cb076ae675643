"""The encoder of the ``causal`` family (:mod:`pmask.perturb.encoders.causal`): a decoder-only LM's own forward.

One call per segment of equal-length rows (never padded), the batch's hidden tokens as a 2-D attention mask
(the model combines it with its causal mask) and explicit position ids, so that a hidden token changes
nothing but what attends to it. Hidden states at any layer; log-probabilities at the last layer only, from
the output head at the reads (verified at load, :func:`pmask.perturb.encoders.causal.inspect`) or, where the
head does not reproduce the model's logits, from the model's own logits.
"""
from __future__ import annotations

import copy
import inspect
from dataclasses import dataclass, replace
from typing import Any, Sequence

import torch

from pmask.common.errors import ModelError
from pmask.perturb.encoders.batch import PackedBatch
from pmask.perturb.encoders.encoder import Encoder
from pmask.perturb.encoders.mlm_head import token_probs

#: Relative agreement asked of the output head against the model's own logits, per dtype name.
TOLERANCE = {"float64": 1e-9, "float32": 1e-4}
LOW_PRECISION_TOLERANCE = 5e-2
PROBE_WORDS = ["The", "committee", "unexpectedly", "approved", "the", "budget", "on", "Tuesday", "."]


@dataclass
class CausalPaths:
    """What :func:`inspect` verified: whether the output head reproduces the model's logits (else the
    model's own logits are read)."""

    head: bool
    no_prob: str | None = None


def output_head(model: Any) -> Any:
    """The model's output embedding (``lm_head``): logits from the last (normalised) hidden state."""
    return model.get_output_embeddings()


def inspect_head(lm: Any) -> CausalPaths:
    """Check on a probe sentence that the output head applied to the last hidden state gives the model's
    logits (to the dtype's tolerance)."""
    model = lm.model
    ids = lm.tokenizer(PROBE_WORDS, is_split_into_words=True, return_tensors="pt")["input_ids"].to(lm.device)
    tol = TOLERANCE.get(str(lm.dtype).replace("torch.", ""), LOW_PRECISION_TOLERANCE)
    with torch.inference_mode():
        keep = torch.ones_like(ids)
        logits = model(input_ids=ids, attention_mask=keep).logits
        last = model.base_model(input_ids=ids, attention_mask=keep).last_hidden_state
        head = output_head(model)
        ok = head is not None and float((head(last) - logits).abs().max()) <= tol * float(logits.abs().max() or 1.0)
    return CausalPaths(head=ok)


#: What one more model call costs, in tokens computed (its fixed cost: the layers' calls, the cache's copy).
CALL_COST = 16


def prefix_plan(first_hidden: list[int], length: int, call_cost: int = CALL_COST) -> list[tuple[list[int], int]]:
    """Which rows of one input (the same tokens, each hiding from ``first_hidden[r]`` on) run together after
    which shared prefix: ``[(rows, start)]``, every row once. A group's rows run from ``start`` (the smallest first
    hidden position among them) on the keys and values of the prefix before it, which another row computed.
    Groups are consecutive in first-hidden order, chosen by dynamic programming to compute the fewest tokens,
    each call costing ``call_cost`` tokens more.

    Example:
        >>> prefix_plan([2, 12, 13, 20, 25], 30, call_cost=4)
        [([0], 2), ([1, 2], 12), ([3], 20), ([4], 25)]
    """
    order = sorted(range(len(first_hidden)), key=lambda r: first_hidden[r])
    h = [min(first_hidden[r], length) for r in order]
    best = [0.0] + [float("inf")] * len(order)
    cut = [0] * (len(order) + 1)
    for b in range(1, len(order) + 1):
        for a in range(b):
            cost = best[a] + (b - a) * (length - h[a]) + call_cost
            if cost < best[b]:
                best[b], cut[b] = cost, a
    groups, b = [], len(order)
    while b:
        a = cut[b]
        groups.append(([order[k] for k in range(a, b)], h[a]))
        b = a
    return groups[::-1]


class CausalEncoder(Encoder):
    """Hidden states and next-token log-probabilities of a causal LM at the reads, hidden tokens masked.

    With ``reuse_prefix`` (its fast path) the rows of one input that hide nothing before some position run from
    there on the keys and values of the part before it, computed once: the same numbers to float rounding
    (a causal state depends on nothing after it), fewer tokens computed (its ``work.tokens``); without, each
    row is the model's own forward as it stands.
    """

    hides_keys = True

    def __init__(self, model: Any, num_layers: int, name: str, paths: CausalPaths, reuse_prefix: bool = True):
        super().__init__(model, None, num_layers, name)
        self.paths = paths
        self.reuse_prefix = self.fast = reuse_prefix
        self._computed = 0   # tokens run through the model in the current call
        # the keyword of a cache to start from: transformers 5 renames past_key_values to cache
        self._cache_name = "cache" if "cache" in inspect.signature(self.base.forward).parameters else \
            "past_key_values"

    def _outputs(self, ids: torch.Tensor, hidden: torch.Tensor | None, states: bool) -> list[torch.Tensor]:
        """The rows' hidden states at every layer (``states``) or last normalised state, each [rows, length, D]:
        rows of one input that hide nothing before some position share the keys and values of the part before it,
        computed once (by the row that hides least, the clean one where the batch holds it; :func:`prefix_plan`)."""
        rows, length = ids.shape
        if not self.reuse_prefix or hidden is None or rows < 2:
            return self._call(ids, hidden, states)
        out: list[torch.Tensor] | None = None
        for members in _same_tokens(ids):
            first = [int(torch.nonzero(hidden[r]).min()) if bool(hidden[r].any()) else length for r in members]
            source = members[max(range(len(members)), key=lambda k: first[k])]
            prefix = self._call(ids[source:source + 1], hidden[source:source + 1], states, cache=True)
            cache, values = prefix[0], prefix[1:]
            out = out if out is not None else [v.new_empty((rows, length, v.shape[-1])) for v in values]
            for o, v in zip(out, values):
                o[source] = v[0]
            rest = [r for r in members if r != source]
            for group, start in prefix_plan([first[members.index(r)] for r in rest], length):
                chosen = [rest[k] for k in group]
                part = self._call(ids[chosen], hidden[chosen], states, past=(cache, start))
                for o, v, own in zip(out, part, values):
                    o[chosen, :start] = own[0, :start]
                    o[chosen, start:] = v
        assert out is not None
        return out

    def _call(self, ids: torch.Tensor, hidden: torch.Tensor | None, states: bool, cache: bool = False,
              past: tuple[Any, int] | None = None) -> list[Any]:
        """One model call: the outputs [rows, length - start, D] (every layer's with ``states``, else the last
        normalised one), after the prefix's cache ``past = (cache, start)``; with ``cache`` its own cache first."""
        rows, length = ids.shape
        start = past[1] if past is not None else 0
        inputs = self._inputs(ids, hidden)
        inputs["input_ids"], inputs["position_ids"] = ids[:, start:], inputs["position_ids"][:, start:]
        if past is not None and start:
            prefix = copy.deepcopy(past[0])
            prefix.crop(start - prefix.get_seq_length())   # negative: the tokens to drop (every transformers)
            prefix.batch_repeat_interleave(rows)
            inputs[self._cache_name] = prefix
        output = self.base(**inputs, use_cache=cache or past is not None, output_hidden_states=states)
        self._computed += int(inputs["input_ids"].numel())
        if states and (output.hidden_states is None or len(output.hidden_states) != self.num_layers + 1):
            got = 0 if output.hidden_states is None else len(output.hidden_states)
            raise ModelError(f"model {self.name!r} returns {got} hidden states, expected {self.num_layers + 1} "
                             "(embeddings + one per layer)")
        values = list(output.hidden_states) if states else [output.last_hidden_state]
        return [getattr(output, "cache", None) or output.past_key_values, *values] if cache else values

    @staticmethod
    def _inputs(ids: torch.Tensor, hidden: torch.Tensor | None) -> dict[str, Any]:
        """The model's inputs for rows ``ids`` [rows, length] with tokens ``hidden`` [rows, length] (or None)."""
        rows, length = ids.shape   # a mask even when nothing is hidden: transformers warns of padding without one
        keep = torch.ones_like(ids) if hidden is None else (~hidden).to(torch.long)
        return {"input_ids": ids, "attention_mask": keep,
                "position_ids": torch.arange(length, device=ids.device).expand(rows, length)}

    def states(self, batch: PackedBatch, layers: Sequence[int]) -> Any:
        self._computed = 0
        out = []
        for seg in batch.segments:
            hidden = self._outputs(batch.rows(seg), batch.hidden_rows(seg), states=True)
            local = batch.read_token[seg.reads] - seg.first_token
            out.append(torch.stack([hidden[k].reshape(-1, hidden[k].shape[-1])[local] for k in layers], dim=1))
        self._count(batch)
        return torch.cat(out)

    def _count(self, batch: PackedBatch) -> None:
        """The call's work: the tokens the model computed (fewer than the batch's when prefixes were shared)."""
        self.work = replace(batch.work(partial_top=False), tokens=self._computed)

    def attentions(self, batch: PackedBatch, layers: Sequence[int]) -> list[torch.Tensor]:
        """The attention weights of layers ``layers`` per segment, [rows, len(layers), heads, length, length]
        (the model's own, eager attention; nothing hidden: the one-pass probes read the sentence as it is)."""
        from pmask.perturb.encoders.generic import eager_attention

        self.work = batch.work(partial_top=False)
        out = []
        with eager_attention(self.model, self.name):
            for seg in batch.segments:
                att = self.base(**self._inputs(batch.rows(seg), None), output_attentions=True).attentions
                if not att or len(att) != self.num_layers or any(a is None for a in att):
                    raise ModelError(f"model {self.name!r} ({type(self.model).__name__}) returns no attention "
                                     "weights, which the attention-based probes need")
                out.append(torch.stack([att[k - 1] for k in layers], dim=1))
        return out

    def check_prob(self, layers: Sequence[int]) -> None:
        if self.paths.no_prob:
            raise ModelError(self.paths.no_prob)
        if any(k != self.num_layers for k in layers):
            raise ModelError(f"model {self.name!r}: a causal model's log-probabilities are read at its last layer "
                             f"({self.num_layers}) only, its own next-token prediction; use --layers -1")

    def probs(self, batch: PackedBatch, layers: Sequence[int], token_ids: Any, dtype: Any, log: bool = False) -> Any:
        """P(token | the state at the read) at the last layer: token_ids [N] → [N, 1] (natural logs with ``log``);
        a read at position p − 1 gives the probability of the token at p."""
        self.check_prob(layers)
        self._computed = 0
        out = []
        for seg in batch.segments:
            local = batch.read_token[seg.reads] - seg.first_token
            if self.paths.head:   # the head at the reads only
                last = self._outputs(batch.rows(seg), batch.hidden_rows(seg), states=False)[0]
                logits = output_head(self.model)(last.reshape(-1, last.shape[-1])[local])
            else:
                full = self.model(**self._inputs(batch.rows(seg), batch.hidden_rows(seg))).logits
                self._computed += int(full.shape[0] * full.shape[1])
                logits = full.reshape(-1, full.shape[-1])[local]
            out.append(token_probs(logits[:, None], token_ids[seg.reads], dtype, log)[:, 0])
        self._count(batch)
        return torch.cat(out)[:, None] if out else torch.zeros((0, 1), dtype=dtype)


def _same_tokens(ids: torch.Tensor) -> list[list[int]]:
    """The rows of ``ids`` [rows, length] grouped by identical tokens (the inputs of one sentence that hide words
    by the attention mask), in first-row order."""
    groups: dict[bytes, list[int]] = {}
    for r, row in enumerate(ids.cpu().numpy()):
        groups.setdefault(row.tobytes(), []).append(r)
    return list(groups.values())
