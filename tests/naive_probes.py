"""Naive references of the probes, written from their definitions (used by tests/perturb/test_probes.py
and tests/cli/commands/test_parse.py).

They run the model's own forward, one input at a time, with eager attention and
``output_hidden_states`` / ``output_attentions``, and follow the README's definitions literally:

- single:    F[l, i, j] = mean over i's pieces p of d(H_l(x)_p, H_l(x∖{j})_p)  (prob: P(x) − P(x∖{j}));
- attention: F[l, h, i, j] = mean over i's pieces t of Σ over j's pieces u of A_l,h[t, u];
- distance:  F[l, i, j] = d(mean of i's piece states, mean of j's piece states) (l2, l1, 1 − cos), or
             the Jensen–Shannon (scipy) / Hellinger distance between the attention rows of i and j
             grouped by word (each special token on its own), per head.
"""
from __future__ import annotations

import numpy as np
import torch
from scipy.spatial.distance import jensenshannon

from pmask.perturb.alignment import align


class Naive:
    """One sentence run through the model's own forward, one input at a time, eager attention."""

    def __init__(self, lm, words):
        self.lm, self.words = lm, words
        al = align(lm.tokenizer, words)
        self.ids = torch.tensor(al.input_ids)
        self.pieces = [al.pieces(k) for k in range(len(words))]
        self.word_index = al.word_index

    def run(self, masked=()):
        x = self.ids.clone()
        for k in masked:
            x[self.pieces[k]] = self.lm.tokenizer.mask_token_id
        model = self.lm.model
        before = model.config._attn_implementation
        model.set_attn_implementation("eager")
        try:
            with torch.no_grad():
                out = model(input_ids=x[None], output_hidden_states=True, output_attentions=True)
        finally:
            model.set_attn_implementation(before)
        hidden = torch.stack(out.hidden_states)[:, 0]              # [L+1, T, D]
        attention = torch.stack(out.attentions)[:, 0]              # [L, H, T, T]
        head = self.lm.paths().head
        probs = torch.softmax(head(hidden), -1) if head is not None else None
        if probs is not None:
            probs[-1] = torch.softmax(out.logits[0], -1)
        return hidden, attention, probs

    def single(self, metric, layers):
        n = len(self.words)
        h0, _, p0 = self.run()
        F = np.zeros((len(layers), n, n))
        for j in range(n):
            hj, _, pj = self.run([j])
            for i in range(n):
                if i == j:
                    continue
                p = self.pieces[i]
                for a, layer in enumerate(layers):
                    if metric == "dist":
                        v = torch.linalg.vector_norm(h0[layer, p] - hj[layer, p], dim=-1)
                    elif metric == "cos":
                        v = 1 - torch.nn.functional.cosine_similarity(h0[layer, p], hj[layer, p], dim=-1)
                    else:
                        v = p0[layer, p, self.ids[p]] - pj[layer, p, self.ids[p]]
                    F[a, i, j] = v.mean().item()
        return F

    def attention(self, layers):
        _, att, _ = self.run()
        n = len(self.words)
        F = np.zeros((len(layers), att.shape[1], n, n))
        for a, layer in enumerate(layers):
            for i in range(n):
                for j in range(n):
                    if i != j:
                        block = att[layer - 1][:, self.pieces[i]][:, :, self.pieces[j]]      # [H, |i|, |j|]
                        F[a, :, i, j] = block.sum(-1).mean(-1).numpy()
        return F

    def distance(self, metric, layers):
        hidden, att, _ = self.run()
        n = len(self.words)
        if metric in ("l2", "l1", "cos"):
            F = np.zeros((len(layers), n, n))
            for a, layer in enumerate(layers):
                v = [hidden[layer, p].mean(0).numpy() for p in self.pieces]
                for i in range(n):
                    for j in range(n):
                        if metric == "l2":
                            F[a, i, j] = np.linalg.norm(v[i] - v[j])
                        elif metric == "l1":
                            F[a, i, j] = np.abs(v[i] - v[j]).sum()
                        elif i != j:
                            F[a, i, j] = 1 - v[i] @ v[j] / np.linalg.norm(v[i]) / np.linalg.norm(v[j])
            return F
        units = [("w", w) if w >= 0 else ("s", t) for t, w in enumerate(self.word_index)]
        names = list(dict.fromkeys(units))
        F = np.zeros((len(layers), att.shape[1], n, n))
        for a, layer in enumerate(layers):
            for h in range(att.shape[1]):
                rows = []
                for p in self.pieces:
                    row = att[layer - 1, h, p].mean(0).numpy()
                    rows.append(np.array([sum(row[t] for t, u in enumerate(units) if u == name) for name in names]))
                for i in range(n):
                    for j in range(n):
                        if i != j:
                            F[a, h, i, j] = (jensenshannon(rows[i], rows[j]) if metric == "jsd" else
                                             np.linalg.norm(np.sqrt(rows[i]) - np.sqrt(rows[j])) / np.sqrt(2))
        return F
