"""``--context N`` end to end through ``pmask impact`` (issue 39, item 17): which neighbours a sentence gets
(the previous sentence first, then the next, in turn, until it holds N words), each cut to its first N words,
laid out ``[CLS] before [SEP] sentence after [SEP]``; and the CPMI values computed on that input.

The expectation is built here, never by pmask: the token ids from the tiny model's ``vocab.txt`` and word
lists written out by hand from Hoover et al.'s ``get_padding`` (pmi_accuracy/main.py), and the CPMI of
every word pair from one forward of the Hugging Face model per input.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.numpy import load_file

from pmask.cli import main

#: 5, 3, 5 and 6 words, each one piece of the tiny model's vocabulary
S0, S1, S2, S3 = (["the", "new", "bank", "was", "large"], ["he", "said", "."], ["she", "was", "in", "the", "country"],
                  ["those", "news", "were", "in", "the", "country"])
#: (before, sentence, after) of each sentence, by hand: --context 6 ...
CONTEXT_6 = [([], S0, S1),          # no sentence before: the next one (5 + 3 >= 6)
             (S0, S1, []),          # the previous one first (3 + 5 >= 6), not the next
             (S1, S2, []),          # the previous one (5 + 3 >= 6)
             ([], S3, [])]          # 6 words already
#: ... and --context 4: sentence 1 gets the *first* 4 words of sentence 0
CONTEXT_4 = [([], S0, []), (S0[:4], S1, []), ([], S2, []), ([], S3, [])]
TOLERANCE = 3e-4


def conllu(path: Path, sentences: list[list[str]]) -> Path:
    blocks = []
    for k, words in enumerate(sentences):
        n = len(words)
        blocks.append("\n".join([f"# sent_id = c{k}"] + [f"{i}\t{w}\t{w}\tX\tX\t_\t{0 if i == n else i + 1}\tdep\t_\t_"
                                                         for i, w in enumerate(words, 1)]))
    path.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    return path


def literal_ids(model_dir: Path, before: list[str], words: list[str], after: list[str]) -> list[int]:
    vocab = {token: k for k, token in enumerate((model_dir / "vocab.txt").read_text(encoding="utf-8").splitlines())}
    tokens = ["[CLS]", *before, *(["[SEP]"] if before else []), *words, *after, "[SEP]"]
    return [vocab[t] for t in tokens]


def stored(store: Path) -> list[dict[str, np.ndarray]]:
    """Each sentence's arrays, read from the shards with safetensors (not through pmask's reader)."""
    manifest = json.loads((store / "manifest.json").read_text(encoding="utf-8"))
    shards: dict[str, dict[str, np.ndarray]] = {}
    out = []
    for entry in sorted(manifest["sentences"], key=lambda e: e["index"]):
        arrays = shards.setdefault(entry["shard"], load_file(str(store / entry["shard"])))
        out.append({k: arrays[f"{entry['key']}/{k}"] for k in ("input_ids", "impact")})
    return out


def naive_cpmi(model, ids: list[int], first: int, n: int, mask_id: int) -> np.ndarray:
    """CPMI[i, j] = log p(w_i | i masked) - log p(w_i | i and j masked), words first … first + n - 1 of ``ids``
    (every input in one call of the model, each row its own input)."""
    inputs = torch.tensor(ids).repeat(n * n, 1)
    for i in range(n):
        for j in range(n):
            inputs[i * n + j, [first + i, first + j]] = mask_id
    with torch.no_grad():
        logits = model(input_ids=inputs).logits.double()
    log_p = np.array([[float(torch.log_softmax(logits[i * n + j, first + i], -1)[ids[first + i]]) for j in range(n)]
                      for i in range(n)])
    return np.diag(log_p)[:, None] - log_p


@pytest.fixture(scope="module")
def hf_model(tiny_bert_dir):
    from transformers import BertForMaskedLM

    return BertForMaskedLM.from_pretrained(str(tiny_bert_dir)).eval()


@pytest.mark.parametrize("context, layout", [(6, CONTEXT_6), (4, CONTEXT_4)], ids=["context-6", "context-4"])
def test_context_gives_the_previous_sentence_first_cut_and_laid_out_as_hoover_et_al(
        context, layout, tiny_bert_dir, hf_model, tmp_path, capsys):
    corpus = conllu(tmp_path / "c.conllu", [S0, S1, S2, S3])
    store = tmp_path / "st"
    assert main(["impact", str(corpus), "--model", str(tiny_bert_dir), "--metric", "cpmi", "--context", str(context),
                 "--layers", "-1", "-q", "-o", str(store)]) == 0, capsys.readouterr().err
    mask_id = literal_ids(tiny_bert_dir, [], ["[MASK]"], [])[1]
    for k, ((before, words, after), got) in enumerate(zip(layout, stored(store))):
        ids = literal_ids(tiny_bert_dir, before, words, after)
        assert got["input_ids"].tolist() == ids, f"sentence {k}"
        first = 1 + len(before) + (1 if before else 0)
        want = naive_cpmi(hf_model, ids, first, len(words), mask_id)
        # float32 (the store) against float64 here: up to ~1e-4 on these values of up to ~5 nats
        np.testing.assert_allclose(got["impact"][-1][1:, 1:], want, atol=TOLERANCE, err_msg=f"sentence {k}")
        if before or after:   # the neighbours change the values by far more: values alone catch another choice
            alone = naive_cpmi(hf_model, literal_ids(tiny_bert_dir, [], words, []), 1, len(words), mask_id)
            assert np.abs(want - alone).max() > 10 * TOLERANCE
