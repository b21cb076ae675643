"""The perturbation model: sequences as data, and a new perturbation as a job the engine runs unchanged.

The new perturbation here (masking three words per sequence: word i and the bigram j j+1) is a
subclass of :class:`~pmask.perturb.engine.jobs.SentenceJob` written in this file only; it runs through
``impact_matrices(job_type=...)`` and is checked against a literal reference with the model itself.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pmask.perturb.engine.jobs import NO_WORD, PlanBuilder, ReadPlan, SentenceJob
from pmask.perturb.engine.perturbation import Hiding, Masking, last_fitting
from pmask.perturb.engine.rewrite import COMMA, MASK, Rewriting, SentencePieces
from pmask.perturb.engine.runner import impact_matrices
from pmask.perturb.engine.stats import ImpactStats
from pmask.perturb.models.load import load_model

from authors_reference import authors_forward, ref_align, ref_model

SENTS = [["She", "walked", "home", "."], ["He", "said", "the", "decision", "was", "unbelievable", "."], ["news"]]


def test_masking_masks_any_set_of_units():
    covers = np.array([[0, 1, 0, 0, 0, 0], [0, 0, 1, 1, 0, 0], [0, 0, 0, 0, 1, 0], [0, 0, 1, 0, 1, 0]], dtype=bool)
    masked = np.array([[-1, -1, -1], [0, 1, 2], [3, -1, -1], [1, 3, -1]])
    seqs = Masking(np.arange(10, 16), covers, masked, mask_id=0)
    assert seqs.tokens(0, 4).reshape(4, 6).tolist() == [[10, 11, 12, 13, 14, 15], [10, 0, 0, 0, 0, 15],
                                                        [10, 11, 0, 13, 0, 15], [10, 11, 0, 0, 0, 15]]
    assert seqs.tokens(1, 2).tolist() == [10, 0, 0, 0, 0, 15]
    assert seqs.offsets.tolist() == [0, 6, 12, 18, 24]


def test_hiding_hides_keys_replaces_tokens_or_both():
    covers = np.array([[0, 1, 0, 0, 0], [0, 0, 1, 1, 0]], dtype=bool)
    hidden = np.array([[-1, -1], [0, -1], [0, 1]])
    keys = Hiding(np.arange(10, 15), covers, hidden)
    assert keys.tokens(0, 3).reshape(3, 5).tolist() == [[10, 11, 12, 13, 14]] * 3      # the input stays whole
    assert keys.hidden(0, 3).reshape(3, 5).astype(int).tolist() == [[0, 0, 0, 0, 0], [0, 1, 0, 0, 0],
                                                                      [0, 1, 1, 1, 0]]
    assert keys.hidden(1, 2).astype(int).tolist() == [0, 1, 0, 0, 0] and keys.offsets.tolist() == [0, 5, 10, 15]
    both = Hiding(np.arange(10, 15), covers, hidden, replacement=0)
    assert both.tokens(1, 3).reshape(2, 5).tolist() == [[10, 0, 12, 13, 14], [10, 0, 0, 0, 14]]
    assert both.hidden(1, 3).tolist() == keys.hidden(1, 3).tolist()
    replaced = Hiding(np.arange(10, 15), covers, hidden, keys=False, replacement=0)
    assert replaced.tokens(2, 3).tolist() == [10, 0, 0, 0, 14] and not replaced.hidden(0, 3).any()


def test_last_fitting_is_the_token_budget_rule():
    offsets = np.array([0, 3, 5, 9, 10])        # sequences of 3, 2, 4 and 1 tokens
    assert [last_fitting(offsets, 0, room) for room in (0, 2, 3, 4, 5, 8, 9, 10, 99)] == [0, 0, 1, 1, 2, 2, 3, 4, 4]
    assert last_fitting(offsets, 2, 4) == 3 and last_fitting(offsets, 2, -1) < 2


def test_rewriting_builds_every_rewrite_at_once_as_one_by_one(bert):
    from pmask.perturb.alignment import align

    alignment = align(bert.tokenizer, ["He", "said", "unbelievable", "things", "."])
    pieces = SentencePieces(alignment, 99, [7, 8])
    rewrites = [[0, 1, 2, 3, 4], [MASK, 3, 4], [2, COMMA, 0, 1, COMMA, 3, 4], [MASK, 2, MASK], [0, 1, 2, 3, MASK]]
    seqs = Rewriting(pieces, rewrites)
    assert seqs.offsets.tolist() == np.cumsum([0] + [pieces.length(u) for u in rewrites]).tolist()
    assert pieces.lengths(rewrites).tolist() == [pieces.length(u) for u in rewrites]
    units = 0
    for s, units_s in enumerate(rewrites):
        ids, positions = pieces.build(units_s)
        assert seqs.tokens(s, s + 1).tolist() == ids.tolist()
        for pos, word in zip(positions, [u for u in units_s if u >= 0]):
            assert (seqs.unit_sequence[units], seqs.unit_word[units]) == (s, word)
            assert (seqs.unit_position[units] + np.arange(seqs.unit_length[units])).tolist() == pos.tolist()
            units += 1
    assert units == len(seqs.unit_word)


class BigramJob(SentenceJob):
    """F[i, j] = || H(x∖{i})_i − H(x∖{i, j, j+1})_i ||: the impact on word i of the bigram j j+1 (three
    words masked at once); 0 where the bigram holds i or j + 1 = n."""

    def _masked_units(self) -> np.ndarray:
        n = self.n_words
        rows = [[i, NO_WORD, NO_WORD] for i in range(n)]
        rows += [[i, j, j + 1] for i in range(n) for j in range(n - 1) if i not in (j, j + 1)]
        return np.array(rows, dtype=np.int64)

    def _plan_reads(self) -> ReadPlan:
        plan = PlanBuilder(self)
        for s, (i, j, _) in enumerate(self.sequences.masked.tolist()):
            plan.add_word(s, i, j == NO_WORD, NO_WORD if j == NO_WORD else j)   # base of i, or F[i, j]
        return plan.build()


def naive_bigram(lm, words, layers):
    tok, model, num_layers = ref_model(lm)
    al = ref_align(tok, words)
    ids, owner = torch.tensor(al.input_ids), np.array(al.word_index)

    def states(masked):
        x = ids.clone()
        x[torch.as_tensor(np.isin(owner, list(masked)))] = tok.mask_token_id
        with torch.inference_mode():
            return authors_forward(model, x[None]).hidden_states

    n = len(words)
    F = np.zeros((len(layers), n, n))
    for i in range(n):
        base, pieces = states({i}), al.pieces(i)
        for j in range(n - 1):
            if i in (j, j + 1):
                continue
            current = states({i, j, j + 1})
            for li, k in enumerate(layers):
                F[li, i, j] = float((base[k][0, pieces] - current[k][0, pieces]).norm(dim=-1).mean())
    return F


@pytest.fixture(scope="module")
def bert(tiny_bert_dir):
    return load_model(tiny_bert_dir, device="cpu", dtype="float64")


@pytest.mark.parametrize("budget", [1, 30, 10**6])
def test_a_new_perturbation_is_a_job_the_engine_runs_unchanged(bert, budget):
    stats = ImpactStats()
    got = list(impact_matrices(bert, SENTS, layers=[1, 3], job_type=BigramJob, batch_tokens=budget, stats=stats,
                               metric="dist", subword="avg", tokenize="words"))
    for words, F in zip(SENTS, got):
        want = naive_bigram(bert, words, [1, 3])
        np.testing.assert_allclose(F, want, rtol=1e-6, atol=1e-7)   # F is float32
    assert np.abs(got[1]).max() > 1e-3
    n = [len(w) for w in SENTS]
    assert stats.forward_sequences == sum(k + k * (k - 1) - 2 * (k - 1) for k in n)
    assert (stats.batches == stats.forward_sequences) == (budget == 1)
