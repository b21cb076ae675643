"""Writing a tiny GGUF file offline, from a transformers model folder (tests of GGUF loading; needs ``gguf``).

:func:`write_gguf` turns a Llama or Qwen2 folder of :func:`pmask.perturb.testing.llm_zoo.make_tiny_llm`
(``llama-bbpe``, ``qwen2``: byte-level BPE tokenizers) into a ``.gguf`` file as llama.cpp's converter lays
one out: the metadata under llama.cpp's key names, the byte-level vocabulary and merges as tokenizer
metadata, each weight under its GGUF name (``gguf.get_tensor_name_map``), Llama's query and key rows
permuted for llama.cpp's rotary layout, and the matrices stored as float32 or quantised (``Q8_0``) with the
``gguf`` package's own quantiser. Loading it back through transformers must give the original model (up to
the quantisation), which is what the GGUF tests check.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

#: Architectures the writer handles: transformers model_type -> GGUF architecture name.
GGUF_ARCH = {"llama": "llama", "qwen2": "qwen2"}


def _permute(weights: np.ndarray, n_head: int) -> np.ndarray:
    """llama.cpp's row order for a query or key matrix (rotary halves interleaved per head)."""
    return (weights.reshape(n_head, 2, weights.shape[0] // n_head // 2, *weights.shape[1:])
            .swapaxes(1, 2).reshape(weights.shape))


def _tokenizer_metadata(writer: Any, folder: Path) -> None:
    """The byte-level BPE vocabulary, merges and special tokens of the folder's ``tokenizer.json``."""
    import gguf

    spec = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    vocab: dict[str, int] = spec["model"]["vocab"]
    added = {t["content"]: t["id"] for t in spec.get("added_tokens", [])}
    size = max([*vocab.values(), *added.values()]) + 1
    tokens = [""] * size
    for token, index in {**vocab, **added}.items():
        tokens[index] = token
    merges = [m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]]
    types = [gguf.TokenType.CONTROL if t in added else gguf.TokenType.NORMAL for t in tokens]
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    writer.add_bos_token_id(int(config["bos_token_id"]))
    writer.add_eos_token_id(int(config["eos_token_id"]))
    writer.add_add_bos_token(False)


def write_gguf(folder: str | Path, path: str | Path, quantisation: str = "F32", *, name: str = "tiny") -> Path:
    """Write the model in ``folder`` as a GGUF file at ``path``.

    Args:
        folder: a Llama or Qwen2 model folder with a byte-level BPE ``tokenizer.json`` (``make_tiny_llm``).
        path: the ``.gguf`` file to write.
        quantisation: ``F32`` (every tensor as float32) or ``Q8_0`` (the matrices quantised, the norms float32).
        name: the file's ``general.name``.

    Returns:
        ``path``.
    """
    import gguf
    from safetensors.numpy import load_file

    folder, path = Path(folder), Path(path)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    arch = GGUF_ARCH[config["model_type"]]
    blocks = int(config["num_hidden_layers"])
    qtype = {"F32": gguf.GGMLQuantizationType.F32, "Q8_0": gguf.GGMLQuantizationType.Q8_0}[quantisation]
    writer = gguf.GGUFWriter(str(path), arch)
    writer.add_name(name)
    writer.add_block_count(blocks)
    writer.add_context_length(int(config["max_position_embeddings"]))
    writer.add_embedding_length(int(config["hidden_size"]))
    writer.add_feed_forward_length(int(config["intermediate_size"]))
    heads, kv_heads = int(config["num_attention_heads"]), int(config["num_key_value_heads"])
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_layer_norm_rms_eps(float(config["rms_norm_eps"]))
    theta = config.get("rope_theta") or (config.get("rope_parameters") or {}).get("rope_theta", 10000.0)
    writer.add_rope_freq_base(float(theta))
    writer.add_rope_dimension_count(int(config["hidden_size"]) // heads)
    writer.add_vocab_size(int(config["vocab_size"]))
    writer.add_file_type(gguf.LlamaFileType.ALL_F32 if quantisation == "F32" else gguf.LlamaFileType.MOSTLY_Q8_0)
    _tokenizer_metadata(writer, folder)
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH[arch.upper()], blocks)
    weights = load_file(str(folder / "model.safetensors"))
    if config.get("tie_word_embeddings"):
        weights.pop("lm_head.weight", None)
    for hf_name, tensor in weights.items():
        gguf_name = names.get_name(hf_name, try_suffixes=(".weight", ".bias"))
        if gguf_name is None:
            raise ValueError(f"no GGUF name for weight {hf_name!r}")
        data = tensor.astype(np.float32)
        if arch == "llama" and hf_name.endswith(("q_proj.weight", "k_proj.weight")):
            data = _permute(data, heads if "q_proj" in hf_name else kv_heads)
        if qtype != gguf.GGMLQuantizationType.F32 and data.ndim == 2:
            writer.add_tensor(gguf_name, gguf.quants.quantize(data, qtype), raw_dtype=qtype)
        else:
            writer.add_tensor(gguf_name, data)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
