"""Tiny random masked LMs of many architectures, with tokenizers trained locally (no downloads).

``make_tiny_architecture(name, path)`` writes a 2-layer model (hidden size 32) of the architecture ``name``
(see :data:`ARCHITECTURES`; each belongs to a model family, :mod:`pmask.common.model_families`) plus a fast
tokenizer trained with the ``tokenizers`` library on a few hundred sentences of English PUD (or
:data:`pmask.perturb.testing.TINY_SENTENCES` where the shared data is absent): WordPiece (uncased or
cased), byte-level BPE (RoBERTa style, or ModernBERT style with the backend's prefix space off) or Unigram
(SentencePiece style). Used by the architecture tests and to reproduce the "Supported models" table of
the README.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pmask.perturb.testing import BERT_SPECIALS, TINY_SENTENCES, save_model, shared_dir

PUD_EN_IN_SHARED = Path("data") / "ud" / "UD_English-PUD" / "en_pud-ud-test.conllu"
UNIGRAM_SPECIALS = ["<pad>", "<unk>", "<s>", "</s>", "<mask>"]
MAX_POSITIONS = 128


@dataclass(frozen=True)
class Architecture:
    """How to build one architecture: transformers config/model class names, tokenizer kind, config extras."""

    config: str
    model: str
    tokenizer: str                      # wordpiece | wordpiece-cased | bbpe | bbpe-noprefix | unigram
    extra: dict[str, Any] = field(default_factory=dict)
    position_offset: int = 0            # RoBERTa-style position tables start after padding_idx


ARCHITECTURES: dict[str, Architecture] = {
    "bert": Architecture("BertConfig", "BertForMaskedLM", "wordpiece"),
    "bert-cased": Architecture("BertConfig", "BertForMaskedLM", "wordpiece-cased"),
    "roberta": Architecture("RobertaConfig", "RobertaForMaskedLM", "bbpe", {"type_vocab_size": 1}, 2),
    "xlm-roberta": Architecture("XLMRobertaConfig", "XLMRobertaForMaskedLM", "unigram", {"type_vocab_size": 1}, 2),
    "deberta-v2": Architecture("DebertaV2Config", "DebertaV2ForMaskedLM", "unigram",
                         {"relative_attention": True, "position_biased_input": False, "legacy": False,
                          "pos_att_type": ["p2c", "c2p"], "type_vocab_size": 0}),
    "electra": Architecture("ElectraConfig", "ElectraForMaskedLM", "wordpiece", {"embedding_size": 16}),
    "distilbert": Architecture("DistilBertConfig", "DistilBertForMaskedLM", "wordpiece"),
    "albert": Architecture("AlbertConfig", "AlbertForMaskedLM", "unigram", {"embedding_size": 16}),
    "modernbert": Architecture("ModernBertConfig", "ModernBertForMaskedLM", "bbpe-noprefix",
                         {"global_attn_every_n_layers": 1, "local_attention": 16}),
    "roformer": Architecture("RoFormerConfig", "RoFormerForMaskedLM", "wordpiece", {"embedding_size": 32}),
    "megatron-bert": Architecture("MegatronBertConfig", "MegatronBertForMaskedLM", "wordpiece"),
    "rembert": Architecture("RemBertConfig", "RemBertForMaskedLM", "unigram",
                      {"input_embedding_size": 16, "output_embedding_size": 16}),
    "convbert": Architecture("ConvBertConfig", "ConvBertForMaskedLM", "wordpiece", {"embedding_size": 32}),
}


def training_texts(limit: int = 300, corpus: str | Path | None = None) -> list[list[str]]:
    """Word lists of the first ``limit`` sentences of ``corpus`` (a CoNLL-U file; default: English PUD
    in the shared data folder, see :func:`pmask.perturb.testing.shared_dir`), or TINY_SENTENCES when
    no corpus is given and the shared data is absent (e.g. an installed package)."""
    from pmask.corpora import read_conllu

    if corpus is not None:
        return [list(sent.words) for sent in read_conllu(corpus, limit=limit)]
    shared = shared_dir()
    if shared is None or not (shared / PUD_EN_IN_SHARED).is_file():
        return [list(s) for s in TINY_SENTENCES]
    return [list(sent.words) for sent in read_conllu(shared / PUD_EN_IN_SHARED, limit=limit)]


def _wrap(backend: Any, specials: dict[str, str], template: tuple[str, str], **kwargs: Any) -> Any:
    """A transformers fast tokenizer around a ``tokenizers`` backend, adding ``template`` specials."""
    from tokenizers.processors import TemplateProcessing
    from transformers import PreTrainedTokenizerFast

    first, last = template
    backend.post_processor = TemplateProcessing(
        single=f"{first} $A {last}", pair=f"{first} $A {last} $B {last}",
        special_tokens=[(first, backend.token_to_id(first)), (last, backend.token_to_id(last))])
    return PreTrainedTokenizerFast(tokenizer_object=backend, model_max_length=MAX_POSITIONS, **specials, **kwargs)


def build_tokenizer(kind: str, path: Path, texts: list[list[str]], vocab_size: int = 600) -> Any:
    """Train a tokenizer of ``kind`` on ``texts`` and save it (transformers format) into ``path``."""
    from tokenizers import ByteLevelBPETokenizer, SentencePieceUnigramTokenizer
    from tokenizers.implementations import BertWordPieceTokenizer
    from transformers import BertTokenizer, RobertaTokenizer

    lines = [" ".join(w) for w in texts]
    if kind.startswith("wordpiece"):
        lower = kind == "wordpiece"
        wp = BertWordPieceTokenizer(lowercase=lower, strip_accents=lower)
        wp.train_from_iterator(lines, vocab_size=vocab_size, special_tokens=BERT_SPECIALS,  # type: ignore[arg-type]  # stub wants Iterator; any iterable works
                               show_progress=False)
        wp.save_model(str(path))
        tok = BertTokenizer.from_pretrained(str(path), do_lower_case=lower, model_max_length=MAX_POSITIONS)
    elif kind == "bbpe":
        bpe = ByteLevelBPETokenizer()
        bpe.train_from_iterator(lines, vocab_size=vocab_size,
                                special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"], show_progress=False)
        bpe.save_model(str(path))
        tok = RobertaTokenizer.from_pretrained(str(path), model_max_length=MAX_POSITIONS)
    elif kind == "bbpe-noprefix":   # ModernBERT: the wrapper says add_prefix_space, the backend does not
        bpe = ByteLevelBPETokenizer(add_prefix_space=False)
        bpe.train_from_iterator(lines, vocab_size=vocab_size, special_tokens=BERT_SPECIALS, show_progress=False)
        tok = _wrap(bpe._tokenizer, {"pad_token": "[PAD]", "unk_token": "[UNK]", "cls_token": "[CLS]",
                                     "sep_token": "[SEP]", "mask_token": "[MASK]"}, ("[CLS]", "[SEP]"),
                    add_prefix_space=True)
    elif kind == "unigram":
        uni = SentencePieceUnigramTokenizer()
        uni.train_from_iterator(lines, vocab_size=vocab_size, special_tokens=UNIGRAM_SPECIALS, unk_token="<unk>",
                                show_progress=False)
        specials = {"pad_token": "<pad>", "unk_token": "<unk>", "bos_token": "<s>", "eos_token": "</s>",
                    "cls_token": "<s>", "sep_token": "</s>", "mask_token": "<mask>"}
        tok = _wrap(uni._tokenizer, specials, ("<s>", "</s>"))
    else:
        raise ValueError(f"unknown tokenizer kind {kind!r}")
    tok.save_pretrained(str(path))
    return tok


def make_tiny_architecture(name: str, path: str | Path, texts: list[list[str]] | None = None, *, hidden: int = 32,
                     layers: int = 2, heads: int = 2, seed: int = 0, init_range: float = 0.2) -> Path:
    """Write a tiny random ``*ForMaskedLM`` of architecture ``name`` and its trained tokenizer to ``path``.

    Args:
        name: a key of :data:`ARCHITECTURES`.
        path: output directory (created).
        texts: tokenizer training sentences (default :func:`training_texts`).
        hidden, layers, heads: model size; the feed-forward size is 2 × hidden.
        seed: torch seed of the random weights.
        init_range: weight std (larger than the usual 0.02 so inputs give visibly different states).

    Returns:
        ``path``, loadable with ``pmask.perturb.models.load.load_model``.

    Example:
        >>> make_tiny_architecture("roberta", tmp / "roberta")        # doctest: +SKIP
    """
    import torch
    import transformers

    arch = ARCHITECTURES[name]
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    tok = build_tokenizer(arch.tokenizer, path, texts if texts is not None else training_texts())
    common = dict(vocab_size=len(tok), hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                  intermediate_size=2 * hidden, max_position_embeddings=MAX_POSITIONS + arch.position_offset,
                  pad_token_id=tok.pad_token_id, initializer_range=init_range)
    if name == "distilbert":
        common = dict(vocab_size=len(tok), dim=hidden, n_layers=layers, n_heads=heads, hidden_dim=2 * hidden,
                      max_position_embeddings=MAX_POSITIONS, pad_token_id=tok.pad_token_id,
                      initializer_range=init_range)
    for special, fallback in (("bos", "cls"), ("eos", "sep"), ("cls", "cls"), ("sep", "sep"), ("mask", "mask")):
        token_id = getattr(tok, f"{special}_token_id", None)
        token_id = token_id if token_id is not None else getattr(tok, f"{fallback}_token_id", None)
        if token_id is not None:
            common[f"{special}_token_id"] = token_id
    config = getattr(transformers, arch.config)(**common, **arch.extra)
    torch.manual_seed(seed)
    model = getattr(transformers, arch.model)(config).eval()
    save_model(model, path)
    return path
