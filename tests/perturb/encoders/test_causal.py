"""The causal family: decoder-only LLMs of every architecture transformers loads from GGUF, against naive references.

Tiny random 2-layer models of each causal architecture of ``pmask.perturb.testing.llm_zoo`` (Llama with a
SentencePiece-style and a byte-level tokenizer, Qwen2, Mistral, Phi-3, GPT-2, GPT-NeoX, Gemma, Qwen3) are
built once per session and loaded through ``load_model`` (float64). For each, pmask's ``cpmi``, ``single``,
``pair`` and ``distance`` equal a naive computation written here, one full forward of the model's own
(``model(input_ids, attention_mask=...)``) per input, as Hoover et al.'s GPT-2 code reads a causal model:
word j hidden by the attention mask, the piece at p predicted from position p − 1; ``pair`` hides a word by
the start token in place of its pieces. The batch size changes nothing, and what a causal model cannot do is
refused in one line before any sentence runs.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from family_impacts import impacts

from pmask.common.errors import ModelError
from pmask.common.model_families import MODEL_FAMILIES
from pmask.perturb.engine.stats import ImpactStats
from pmask.perturb.models.load import load_model
from pmask.perturb.testing.llm_zoo import make_tiny_llm
from pmask.perturb.testing.zoo import training_texts

CAUSAL = ["llama", "llama-bbpe", "qwen2", "mistral", "phi3", "gpt2", "gpt-neox", "gemma", "qwen3"]
SENTS = [["The", "committee", "unexpectedly", "approved", "it", "."], ["She", "walked", "home", "."]]
RTOL = 1e-6


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Tiny models run fastest on one thread (on a shared machine two fight over the cores)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def llm_zoo(tmp_path_factory):
    """name -> float64 LoadedModel, built on first use and cached for the session."""
    base = tmp_path_factory.mktemp("llm_zoo")
    texts = training_texts()
    cache: dict = {}

    def get(name: str, dtype: str = "float64"):
        if (name, dtype) not in cache:
            folder = base / name
            if not folder.exists():
                make_tiny_llm(name, folder, texts)
            cache[name, dtype] = load_model(str(folder), device="cpu", dtype=dtype)
        return cache[name, dtype]

    return get


def layout(lm, words):
    """The input and each word's piece positions, from the tokenizer's own word ids (with its start token)."""
    enc = lm.tokenizer(words, is_split_into_words=True)
    wid = enc.word_ids()
    return torch.tensor(enc["input_ids"]), [[t for t, w in enumerate(wid) if w == k] for k in range(len(words))]


def forward(lm, ids, keep=None):
    with torch.no_grad():
        out = lm.model(input_ids=ids[None], attention_mask=None if keep is None else keep[None],
                       output_hidden_states=True)
    return out.logits[0], [h[0] for h in out.hidden_states]


def naive_cpmi(lm, words):
    """log_p[i, j] = Σ_k log p(piece k of i | before it, j hidden): one forward per (j, i, k), as their GPT-2 code."""
    ids, pieces = layout(lm, words)
    n = len(words)
    log_p = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            for p in pieces[i]:
                keep = torch.ones(len(ids), dtype=torch.long)
                keep[p:] = 0                                   # their "future" mask, a no-op for a causal model
                if j != i:
                    keep[pieces[j]] = 0
                logits, _ = forward(lm, ids, keep)
                log_p[i, j] += float(torch.log_softmax(logits[p - 1].double(), -1)[ids[p]])
    return np.diag(log_p)[:, None] - log_p


def naive_single(lm, words, layer):
    """F[i, j] = mean over i's pieces of ||H(x)_p - H(x, j hidden by the attention mask)_p||, i > j."""
    ids, pieces = layout(lm, words)
    n = len(words)
    clean = forward(lm, ids)[1][layer]
    F = np.zeros((n, n))
    for j in range(n):
        keep = torch.ones(len(ids), dtype=torch.long)
        keep[pieces[j]] = 0
        hidden = forward(lm, ids, keep)[1][layer]
        for i in range(j + 1, n):
            F[i, j] = float(torch.linalg.vector_norm(clean[pieces[i]] - hidden[pieces[i]], dim=-1).mean())
    return F


def naive_pair(lm, words, layer):
    """F[i, j] = mean over i's pieces of ||H(x, i replaced)_p - H(x, i and j replaced)_p||, replaced by the start
    token (the input's first), i > j."""
    ids, pieces = layout(lm, words)
    n = len(words)

    def replaced(*hidden):
        x = ids.clone()
        for k in hidden:
            x[pieces[k]] = ids[0]
        return forward(lm, x)[1][layer]

    F = np.zeros((n, n))
    for i in range(n):
        base = replaced(i)
        for j in range(i):
            F[i, j] = float(torch.linalg.vector_norm(base[pieces[i]] - replaced(i, j)[pieces[i]], dim=-1).mean())
    return F


@pytest.mark.parametrize("name", CAUSAL)
def test_architecture_loads_as_causal_and_matches_naive_references(llm_zoo, name):
    lm = llm_zoo(name)
    assert lm.family is MODEL_FAMILIES["causal"] and lm.describe()["family"] == "causal"
    assert lm.describe()["tokenizer"]["mask_token"] is None
    words = SENTS[0]
    ids, pieces = layout(lm, words)
    assert max(len(p) for p in pieces) > 1, "a word of several pieces (the chain rule)"
    start = lm.tokenizer.bos_token_id if lm.tokenizer.bos_token_id is not None else lm.tokenizer.eos_token_id
    assert int(ids[0]) == start                                       # every input starts with a start token
    F = next(impacts(lm, [words], layers=[-1], metric="cpmi", batch_tokens=37))
    want = naive_cpmi(lm, words)
    scale = np.abs(want).max()
    assert scale > 1e-3 and np.allclose(np.triu(want), 0)               # a causal model: the lower triangle only
    np.testing.assert_allclose(F[0], want, rtol=RTOL, atol=RTOL * scale, err_msg=f"{name} cpmi")
    for probe, naive in (("single", naive_single), ("pair", naive_pair)):
        F = next(impacts(lm, [words], probe, layers=[1], metric="dist", batch_tokens=41))
        want = naive(lm, words, 1)
        scale = np.abs(want).max()
        assert scale > 1e-3
        np.testing.assert_allclose(F[0], want, rtol=RTOL, atol=RTOL * scale, err_msg=f"{name} {probe}")


def test_distance_reads_the_one_sided_states(llm_zoo):
    lm = llm_zoo("gpt2")
    F = next(impacts(lm, SENTS[:1], "distance", layers=[1], metric="l2"))[0]
    ids, pieces = layout(lm, SENTS[0])
    states = forward(lm, ids)[1][1]
    words = torch.stack([states[p].mean(0) for p in pieces])
    np.testing.assert_allclose(F, torch.cdist(words, words).numpy(), rtol=1e-6, atol=1e-9)


def test_batch_size_changes_nothing(llm_zoo):
    lm = llm_zoo("llama")
    for metric, probe in (("cpmi", "pair"), ("dist", "single"), ("dist", "pair")):
        runs = [list(impacts(lm, SENTS, probe, layers=[-1], metric=metric, batch_tokens=budget))
                for budget in (1, 23, 4096)]
        for other in runs[1:]:
            for a, b in zip(runs[0], other):
                np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_one_input_per_source_word(llm_zoo):
    """n inputs for n words (the clean one and one per word with a word after it), where Hoover et al.'s
    GPT-2 code runs n·P (one per source word and piece of the word predicted)."""
    lm = llm_zoo("gpt2")
    stats = ImpactStats()
    list(impacts(lm, SENTS, layers=[-1], metric="cpmi", stats=stats))
    assert stats.forward_sequences == sum(len(words) for words in SENTS)
    stats = ImpactStats()
    list(impacts(lm, SENTS, "single", layers=[-1], stats=stats))
    assert stats.forward_sequences == sum(len(words) for words in SENTS)


@pytest.mark.parametrize("probe, metric, why", [
    ("pair", "prob", "causal models take metric"),           # prob needs a mask token
    ("single", "prob", "causal models take metric"),
    ("distortion", "all", "causal models take probe"),
])
def test_what_a_causal_model_cannot_do_is_refused_in_one_line(llm_zoo, probe, metric, why):
    from pmask.perturb.probes.support import check_support

    lm = llm_zoo("gpt2")
    with pytest.raises(ModelError, match=why) as err:
        check_support(lm, probe, metric, subword="avg")
    assert "\n" not in str(err.value) and "gpt2" in str(err.value)


def test_log_probabilities_at_the_last_layer_only(llm_zoo):
    lm = llm_zoo("gpt2")
    with pytest.raises(ModelError, match="last layer"):
        next(impacts(lm, SENTS, layers=[1], metric="cpmi"))


def test_a_tokenizer_without_a_start_token_is_refused(llm_zoo, tmp_path):
    import json

    folder = tmp_path / "nostart"
    make_tiny_llm("gpt2", folder)
    config = json.loads((folder / "tokenizer_config.json").read_text())
    for key in ("bos_token", "eos_token", "unk_token"):
        config.pop(key, None)
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    with pytest.raises(ModelError, match="neither a beginning- nor an end-of-text token"):
        load_model(str(folder), device="cpu")


def test_the_store_layout_has_a_row_of_zeros_for_the_start_token(llm_zoo):
    """Stores keep the [CLS] layout: a causal model's start token sees no word, so its row and column are 0."""
    lm = llm_zoo("gpt2")
    for probe, metric in (("pair", "cpmi"), ("single", "dist"), ("pair", "dist")):
        plain = next(impacts(lm, SENTS[:1], probe, layers=[-1], metric=metric))
        stats = ImpactStats()
        stored = next(impacts(lm, SENTS[:1], probe, layers=[-1], metric=metric, include_cls=True, stats=stats))
        assert stored.shape[-1] == len(SENTS[0]) + 1 and not stored[:, 0].any() and not stored[:, :, 0].any()
        np.testing.assert_allclose(stored[:, 1:, 1:], plain, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", CAUSAL)
def test_sharing_the_clean_prefix_changes_no_number_and_computes_fewer_tokens(llm_zoo, name):
    """The fast path (the inputs of one sentence share the keys and values before their first hidden word) equals
    the model's own forward on every whole input (``fast_path=False``), the naive references' computation."""
    lm = llm_zoo(name)
    sentences = [["She", "walked", "home", "after", "the", "long", "meeting", "in", "town", "."]]
    for probe, metric, layers in (("pair", "cpmi", [-1]), ("single", "dist", [0, 1, 2])):
        fast, whole = ImpactStats(), ImpactStats()
        a = next(impacts(lm, sentences, probe, layers=layers, metric=metric, stats=fast))
        b = next(impacts(lm, sentences, probe, layers=layers, metric=metric, stats=whole, fast_path=False))
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10 * np.abs(b).max())
        assert fast.fast_path and not whole.fast_path
        assert fast.tokens == whole.tokens == whole.padded_tokens     # the same inputs ...
        assert fast.padded_tokens < 0.8 * whole.padded_tokens         # ... fewer tokens through the model


def test_documents_and_other_refusals_at_the_command_line(llm_zoo, tmp_path, capsys):
    """Documents of EDUs, metric prob and probe distortion on a causal model: one line, exit 1, nothing written."""
    from pathlib import Path

    from pmask.cli import main

    model = llm_zoo("gpt2").name
    data = Path(__file__).resolve().parents[2] / "data"
    runs = [(["parse", str(data / "scidtb"), "--model", model], "causal models take unit word, not edu"),
            (["parse", str(data / "mini.conllu"), "--model", model, "--tokenize", "echo"], "tokenize echo lays"),
            (["parse", str(data / "mini.conllu"), "--model", model, "--metric", "prob"], "causal models take metric"),
            (["parse", str(data / "mini.conllu"), "--model", model, "--probe", "distortion"],
             "causal models take probe")]
    for args, why in runs:
        out = tmp_path / ("out" if "scidtb" in args[1] else "out.txt" if "distortion" in args else "out.conllu")
        code = main([*args, "-q", "-o", str(out)])
        err = capsys.readouterr().err
        assert code == 1 and why in err and len(err.strip().splitlines()) == 1, err
        assert not out.exists()


# ---------------------------------------------------------------------------- both sides: the echo layouts

@pytest.mark.parametrize("name", ["gpt2", "llama-bbpe"])
def test_echo_attention_reads_word_i_of_the_second_copy_attending_to_word_j_of_the_first(llm_zoo, name):
    """``--tokenize echo``: ``start sentence \\n sentence``; F[l, h, i, j] = the mean over word i's pieces in the
    second copy of their attention to word j's pieces in the first copy (summed), every i != j: both sides."""
    lm = llm_zoo(name)
    words = SENTS[0]
    ids, pieces = layout(lm, words)                       # start + the words' pieces
    body = ids[1:].tolist()
    newline = lm.tokenizer.convert_tokens_to_ids("\u010a")   # the byte-level BPE's newline
    echo = torch.tensor([int(ids[0])] + body + [newline] + body)
    first = [[p for p in s] for s in pieces]                 # positions in the first copy (after the start)
    second = [[p + len(body) + 1 for p in s] for s in pieces]
    lm.model.set_attn_implementation("eager")
    try:
        with torch.no_grad():
            att = torch.stack(lm.model(input_ids=echo[None], output_attentions=True).attentions)[:, 0]
    finally:
        lm.model.set_attn_implementation("sdpa")
    want = torch.stack([torch.stack([att[:, :, r][:, :, :, c].sum(-1).mean(-1) for c in first], -1)
                        for r in second], -2).numpy()      # [L, H, n, n]
    np.fill_diagonal(want[0, 0], 0)
    for layer in range(want.shape[0]):
        for head in range(want.shape[1]):
            np.fill_diagonal(want[layer, head], 0)
    F = next(impacts(lm, [words], "attention", layers=[1, 2], tokenize="echo"))
    np.testing.assert_allclose(F, want, rtol=1e-7, atol=1e-12)
    assert np.triu(F[-1].mean(0), 1).max() > 1e-3           # a word attends to the words after it: both sides


def test_echo_distance_and_refusals(llm_zoo):
    from pmask.common.errors import SettingError

    lm = llm_zoo("gpt2")
    words = SENTS[1]
    ids, pieces = layout(lm, words)
    body = ids[1:].tolist()
    echo = torch.tensor([int(ids[0])] + body + [lm.tokenizer.convert_tokens_to_ids("\u010a")] + body)
    states = forward(lm, echo)[1][2]
    second = torch.stack([states[[p + len(body) + 1 for p in s]].mean(0) for s in pieces])
    F = next(impacts(lm, [words], "distance", layers=[2], metric="l2", tokenize="echo"))[0]
    np.testing.assert_allclose(F, torch.cdist(second, second).numpy(), rtol=1e-7, atol=1e-10)
    from pmask.perturb.engine.impact_settings import ImpactSettings

    for probe in ("pair", "single"):
        with pytest.raises(SettingError, match="lays the sentence out for probe attention or distance, not " + probe):
            ImpactSettings("dist", "avg", "echo-prompt", probe, 0).check()
