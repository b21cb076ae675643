"""Tiny random language models beyond the masked LMs, with tokenizers trained locally (no downloads).

``make_tiny_llm(name, path)`` writes a 2-layer model (hidden size 32) of the architecture ``name`` (see
:data:`LLM_ARCHITECTURES`): the decoder-only LLMs transformers loads from GGUF files (Llama, Qwen2,
Mistral, Phi-3, GPT-2, GPT-NeoX, Gemma, ...) and the other families of Hoover et al.'s CPMI code (XLNet,
BART, XLM). Its tokenizer is trained with the ``tokenizers`` library on the sentences of
:func:`pmask.perturb.testing.zoo.training_texts`:

- ``bbpe-gpt2``: byte-level BPE whose only special token is ``<|endoftext|>`` (beginning, end and unknown),
  adding nothing around a text, as GPT-2's;
- ``spm-llama``: SentencePiece-style BPE (``▁`` word starts) with ``<unk>``, ``<s>``, ``</s>``, adding ``<s>``
  in front of a text, as Llama-2's and Mistral's;
- ``bbpe-bart``: RoBERTa's byte-level BPE with ``<mask>`` (BART), ``spm-xlnet``: Unigram with XLNet's
  specials, adding ``<sep> <cls>`` at the end; ``bpe-xlm``: lower-cased BPE with XLM's ``</w>`` word ends,
  ``</s>`` on both ends and ``<special1>`` as the mask token.

Used by the architecture tests (``tests/perturb/encoders/``) and the GGUF writer of
:mod:`pmask.perturb.testing.gguf_writer`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pmask.perturb.testing import save_model
from pmask.perturb.testing.zoo import MAX_POSITIONS, training_texts

ENDOFTEXT = "<|endoftext|>"


@dataclass(frozen=True)
class Architecture:
    """How to build one tiny model: transformers config and model class names, tokenizer kind, config extras."""

    config: str
    model: str
    tokenizer: str
    extra: dict[str, Any] = field(default_factory=dict)
    sizes: str = "llama"     # which names the config uses for its sizes (see ``_sizes``)


#: Architecture name -> how to build it. The causal ones first (in the order of the README's table).
LLM_ARCHITECTURES: dict[str, Architecture] = {
    "llama": Architecture("LlamaConfig", "LlamaForCausalLM", "spm-llama", {"num_key_value_heads": 2}),
    "llama-bbpe": Architecture("LlamaConfig", "LlamaForCausalLM", "bbpe-gpt2", {"num_key_value_heads": 2}),
    "qwen2": Architecture("Qwen2Config", "Qwen2ForCausalLM", "bbpe-gpt2", {"num_key_value_heads": 2}),
    "mistral": Architecture("MistralConfig", "MistralForCausalLM", "spm-llama",
                            {"num_key_value_heads": 2, "sliding_window": None}),
    "phi3": Architecture("Phi3Config", "Phi3ForCausalLM", "spm-llama", {"num_key_value_heads": 2}),
    "gpt2": Architecture("GPT2Config", "GPT2LMHeadModel", "bbpe-gpt2", sizes="gpt2"),
    "gpt-neox": Architecture("GPTNeoXConfig", "GPTNeoXForCausalLM", "bbpe-gpt2", {"rotary_pct": 0.5}),
    "gemma": Architecture("GemmaConfig", "GemmaForCausalLM", "spm-llama", {"num_key_value_heads": 1, "head_dim": 8}),
    "qwen3": Architecture("Qwen3Config", "Qwen3ForCausalLM", "bbpe-gpt2", {"num_key_value_heads": 2, "head_dim": 8}),
    "xlnet": Architecture("XLNetConfig", "XLNetLMHeadModel", "spm-xlnet", sizes="xlnet"),
    "bart": Architecture("BartConfig", "BartForConditionalGeneration", "bbpe-bart", sizes="bart"),
    "xlm": Architecture("XLMConfig", "XLMWithLMHeadModel", "bpe-xlm", sizes="xlm"),
}


def _wrap(backend: Any, specials: dict[str, str], *, first: str | None = None, last: tuple[str, ...] = (),
          **kwargs: Any) -> Any:
    """A transformers fast tokenizer around ``backend``, adding ``first`` before and ``last`` after a text."""
    from tokenizers.processors import TemplateProcessing
    from transformers import PreTrainedTokenizerFast

    if first or last:
        around = ([first] if first else []) + list(last)
        single = " ".join(([first] if first else []) + ["$A"] + list(last))
        pair = single + " " + " ".join(["$B"] + list(last))
        backend.post_processor = TemplateProcessing(single=single, pair=pair,
                                                    special_tokens=[(t, backend.token_to_id(t)) for t in around])
    return PreTrainedTokenizerFast(tokenizer_object=backend, model_max_length=MAX_POSITIONS, **specials, **kwargs)


def build_llm_tokenizer(kind: str, path: Path, texts: list[list[str]], vocab_size: int = 500) -> Any:
    """Train a tokenizer of ``kind`` (see the module docstring) on ``texts`` and save it into ``path``."""
    from tokenizers import (
        ByteLevelBPETokenizer,
        CharBPETokenizer,
        SentencePieceBPETokenizer,
        SentencePieceUnigramTokenizer,
    )

    lines = [" ".join(w) for w in texts]
    if kind == "bbpe-gpt2":
        bpe = ByteLevelBPETokenizer()
        bpe.train_from_iterator(lines, vocab_size=vocab_size, special_tokens=[ENDOFTEXT], show_progress=False)
        tok = _wrap(bpe._tokenizer, {"bos_token": ENDOFTEXT, "eos_token": ENDOFTEXT, "unk_token": ENDOFTEXT})
    elif kind == "bbpe-bart":
        bpe = ByteLevelBPETokenizer()
        bpe.train_from_iterator(lines, vocab_size=vocab_size,
                                special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"], show_progress=False)
        tok = _wrap(bpe._tokenizer, {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>",
                                     "pad_token": "<pad>", "cls_token": "<s>", "sep_token": "</s>",
                                     "mask_token": "<mask>"}, first="<s>", last=("</s>",))
    elif kind == "spm-llama":
        spm = SentencePieceBPETokenizer()
        spm.train_from_iterator(lines, vocab_size=vocab_size, special_tokens=["<unk>", "<s>", "</s>"],
                                show_progress=False)
        tok = _wrap(spm._tokenizer, {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}, first="<s>")
    elif kind == "spm-xlnet":
        uni = SentencePieceUnigramTokenizer()
        specials = ["<unk>", "<s>", "</s>", "<cls>", "<sep>", "<pad>", "<mask>"]
        uni.train_from_iterator(lines, vocab_size=vocab_size, special_tokens=specials, unk_token="<unk>",
                                show_progress=False)
        tok = _wrap(uni._tokenizer, {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>",
                                     "pad_token": "<pad>", "cls_token": "<cls>", "sep_token": "<sep>",
                                     "mask_token": "<mask>"}, last=("<sep>", "<cls>"))
    elif kind == "bpe-xlm":
        bpe = CharBPETokenizer(lowercase=True, suffix="</w>")
        specials = ["<s>", "</s>", "<pad>", "<unk>", "<special0>", "<special1>"]
        bpe.train_from_iterator(lines, vocab_size=vocab_size, special_tokens=specials, suffix="</w>",
                                show_progress=False)
        tok = _wrap(bpe._tokenizer, {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>",
                                     "pad_token": "<pad>", "cls_token": "</s>", "sep_token": "</s>",
                                     "mask_token": "<special1>"}, first="</s>", last=("</s>",))
    else:
        raise ValueError(f"unknown tokenizer kind {kind!r}")
    tok.save_pretrained(str(path))
    return tok


def _sizes(arch: Architecture, tok: Any, hidden: int, layers: int, heads: int) -> dict[str, Any]:
    """The config's size and special-token arguments under the names its class uses."""
    ids = {f"{name}_token_id": getattr(tok, f"{name}_token_id") for name in ("bos", "eos")
           if getattr(tok, f"{name}_token_id", None) is not None}
    ids["pad_token_id"] = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    vocab = len(tok)
    if arch.sizes == "gpt2":
        return dict(vocab_size=vocab, n_embd=hidden, n_layer=layers, n_head=heads, n_positions=MAX_POSITIONS, **ids)
    if arch.sizes == "xlnet":
        return dict(vocab_size=vocab, d_model=hidden, n_layer=layers, n_head=heads, d_inner=2 * hidden, **ids)
    if arch.sizes == "bart":
        return dict(vocab_size=vocab, d_model=hidden, encoder_layers=layers, decoder_layers=layers,
                    encoder_attention_heads=heads, decoder_attention_heads=heads, encoder_ffn_dim=2 * hidden,
                    decoder_ffn_dim=2 * hidden, max_position_embeddings=MAX_POSITIONS,
                    decoder_start_token_id=tok.eos_token_id, forced_eos_token_id=None, **ids)
    if arch.sizes == "xlm":
        return dict(vocab_size=vocab, emb_dim=hidden, n_layers=layers, n_heads=heads,
                    max_position_embeddings=MAX_POSITIONS, mask_token_id=tok.mask_token_id,
                    unk_index=tok.unk_token_id, pad_index=tok.pad_token_id, eos_index=tok.eos_token_id,
                    bos_index=tok.bos_token_id, **ids)
    return dict(vocab_size=vocab, hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                intermediate_size=2 * hidden, max_position_embeddings=MAX_POSITIONS, **ids)


def make_tiny_llm(name: str, path: str | Path, texts: list[list[str]] | None = None, *, hidden: int = 32,
                  layers: int = 2, heads: int = 4, seed: int = 0, init_range: float = 0.2) -> Path:
    """Write a tiny random model of architecture ``name`` and its trained tokenizer to ``path``.

    Args:
        name: a key of :data:`LLM_ARCHITECTURES`.
        path: output directory (created).
        texts: tokenizer training sentences (default :func:`pmask.perturb.testing.zoo.training_texts`).
        hidden, layers, heads: model size; the feed-forward size is 2 × hidden.
        seed: torch seed of the random weights.
        init_range: weight std (larger than the usual 0.02 so that inputs give visibly different states).

    Returns:
        ``path``, loadable with ``pmask.perturb.models.load.load_model``.

    Example:
        >>> make_tiny_llm("gpt2", tmp / "gpt2")        # doctest: +SKIP
    """
    import torch
    import transformers

    arch = LLM_ARCHITECTURES[name]
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    tok = build_llm_tokenizer(arch.tokenizer, path, texts if texts is not None else training_texts())
    sizes = _sizes(arch, tok, hidden, layers, heads)
    config = getattr(transformers, arch.config)(**sizes, initializer_range=init_range, **arch.extra)
    if arch.sizes == "xlm":
        config.init_std = init_range
    torch.manual_seed(seed)
    model = getattr(transformers, arch.model)(config).eval()
    save_model(model, path)
    return path
