"""Tiny, locally built masked language models for tests and benchmarks (no downloads).

``make_tiny_bert`` / ``make_tiny_roberta`` write a randomly initialised (seeded) model plus a
fast tokenizer into a directory that ``AutoTokenizer.from_pretrained`` /
``pmask.perturb.models.load.load_model`` can load offline; they need no data file. ``make_random_bert_base``
writes a model with the bert-base-uncased configuration and real vocabulary but random weights
(for speed benchmarks): the vocabulary file is an argument, by default found in the project's
shared data folder (:func:`shared_dir`), which only a source checkout has beside it.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Sequence

from pmask.common.errors import PmaskError
from pmask.common.files import read_json

# A few PUD-like sentences; every word is covered by the tiny BERT vocabulary, and the words
# in SPLIT_WORDS are deliberately absent from it so they tokenise into several ``##`` pieces.
TINY_SENTENCES: list[list[str]] = [
    ["What", "if", "Google", "morphed", "into", "GoogleOS", "?"],
    ["The", "new", "spending", "is", "fueled", "by", "Clinton", "'s", "large", "bank", "account", "."],
    ["He", "said", "the", "decision", "was", "unbelievable", "."],
    ["Those", "stories", "were", "reported", "in", "newspapers", "across", "the", "country", "."],
    ["She", "walked", "home", "."],
]
# words absent from the vocabulary (they split into pieces) -> their pieces
SPLIT_WORDS: dict[str, list[str]] = {
    "morphed": ["morph", "##ed"],
    "googleos": ["google", "##os"],
    "spending": ["spend", "##ing"],
    "fueled": ["fuel", "##ed"],
    "unbelievable": ["un", "##believ", "##able"],
    "reported": ["report", "##ed"],
    "newspapers": ["news", "##paper", "##s"],
    "walked": ["walk", "##ed"],
    "stories": ["stor", "##ies"],
}
BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
ROBERTA_SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
#: Where bert-base-uncased's vocabulary lies inside the shared data folder.
BERT_BASE_VOCAB_IN_SHARED = Path("models") / "bert-base-uncased-vocab" / "vocab.txt"
_PACKAGE_ROOT = Path(__file__).resolve().parents[2]


def shared_dir() -> Path | None:
    """The project's shared data folder: ``$PMASK_SHARED`` when set, else ``../shared`` beside a
    source checkout (the repository root, which holds ``pyproject.toml``); None for an installed
    package, which has no such neighbour."""
    if os.environ.get("PMASK_SHARED"):
        return Path(os.environ["PMASK_SHARED"])
    if (_PACKAGE_ROOT / "pyproject.toml").is_file():
        return _PACKAGE_ROOT.parent / "shared"
    return None


def shared_file(relative: str | Path, what: str, argument: str) -> Path:
    """``relative`` inside :func:`shared_dir`, or a one-line :class:`PmaskError` saying how to provide it.

    Args:
        relative: the path inside the shared folder.
        what: what the file is, for the message ("bert-base-uncased's vocabulary").
        argument: the argument that takes the file instead.
    """
    base = shared_dir()
    path = base / relative if base is not None else None
    if path is None or not path.is_file():
        where = f"not found at {path}" if path is not None else "not found (an installed pmask has no ../shared)"
        raise PmaskError(f"{what} {where}: pass {argument}=PATH, or set PMASK_SHARED to the shared data folder")
    return path


#: The shared folder found at import (None for an installed package without ``PMASK_SHARED``).
SHARED = shared_dir()


def save_model(model: Any, path: str | Path) -> None:
    """``model.save_pretrained(path)`` without transformers' progress bar (noise in logs and notebooks)."""
    from transformers.utils import logging as hf_logging

    shown = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        model.save_pretrained(str(path))
    finally:
        if shown:
            hf_logging.enable_progress_bar()


def _bert_vocab(words: Iterable[str] | None) -> list[str]:
    base: list[str] = []
    for sent in TINY_SENTENCES:
        for w in sent:
            w = w.lower()
            base.extend(SPLIT_WORDS.get(w, [w]))
    for w in words or ():
        w = w.lower()
        base.extend(SPLIT_WORDS.get(w, [w]))
    base.extend(["'", "s", "##s", "##ing", "##ed", "##ly", "##er"])
    vocab = list(BERT_SPECIALS)
    seen = set(vocab)
    for piece in base:
        if piece not in seen:
            seen.add(piece)
            vocab.append(piece)
    return vocab


def make_tiny_bert(path: str | Path, words: Sequence[str] | None = None, *, hidden: int = 32,
                   layers: int = 3, heads: int = 2, seed: int = 0, max_positions: int = 64,
                   init_range: float = 0.5, mlm_head: bool = True) -> Path:
    """Write a tiny random BertForMaskedLM + fast WordPiece tokenizer (lower-casing) to ``path``.

    With ``mlm_head=False`` only its encoder is saved, as a ``BertModel`` (an encoder-only
    checkpoint like sentence-transformers' models, with the same encoder weights for a given seed).

    The vocabulary is the specials, the words of ``TINY_SENTENCES`` (with ``SPLIT_WORDS`` replaced
    by their pieces), the extra ``words`` (lower-cased) and a few suffix pieces. The model accepts
    at most ``max_positions`` tokens including [CLS]/[SEP]. Weights are drawn with std
    ``init_range`` (larger than BERT's 0.02 so that states and MLM probabilities differ visibly
    between inputs). Returns ``path``.
    """
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertTokenizer

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    vocab = _bert_vocab(words)
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tok = BertTokenizer.from_pretrained(str(path), do_lower_case=True, model_max_length=max_positions)
    if len(tok) != len(vocab):
        raise RuntimeError(f"tiny BERT tokenizer has {len(tok)} entries, expected {len(vocab)}")
    tok.save_pretrained(str(path))
    config = BertConfig(vocab_size=len(vocab), hidden_size=hidden, num_hidden_layers=layers,
                        num_attention_heads=heads, intermediate_size=4 * hidden,
                        max_position_embeddings=max_positions, pad_token_id=0, initializer_range=init_range)
    torch.manual_seed(seed)
    model = BertForMaskedLM(config).eval()
    save_model(model if mlm_head else model.bert, path)
    return path


def make_tiny_roberta(path: str | Path, words: Sequence[str] | None = None, *, hidden: int = 32,
                      layers: int = 3, heads: int = 2, seed: int = 0, max_positions: int = 64,
                      vocab_size: int = 370, init_range: float = 0.5) -> Path:
    """Write a tiny random RobertaForMaskedLM + byte-level BPE tokenizer to ``path``.

    The BPE merges are trained locally (``tokenizers``) on ``TINY_SENTENCES`` plus ``words``
    with a small ``vocab_size`` so that many words split into several pieces. The model accepts
    at most ``max_positions`` tokens including <s>/</s> (position table is 2 larger, RoBERTa style).
    """
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import RobertaConfig, RobertaForMaskedLM, RobertaTokenizer

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    texts = [" ".join(s) for s in TINY_SENTENCES] + [" ".join(words or [])]
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(texts, vocab_size=vocab_size, min_frequency=1,
                            special_tokens=ROBERTA_SPECIALS, show_progress=False)
    bpe.save_model(str(path))  # vocab.json + merges.txt
    tok = RobertaTokenizer.from_pretrained(str(path), model_max_length=max_positions)
    tok.save_pretrained(str(path))
    n_vocab = len(read_json(path / "vocab.json", missing="raise"))
    config = RobertaConfig(vocab_size=max(n_vocab, len(tok)), hidden_size=hidden, num_hidden_layers=layers,
                           num_attention_heads=heads, intermediate_size=4 * hidden,
                           max_position_embeddings=max_positions + 2, pad_token_id=tok.pad_token_id,
                           bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, type_vocab_size=1,
                           initializer_range=init_range)
    torch.manual_seed(seed)
    save_model(RobertaForMaskedLM(config).eval(), path)
    return path


def make_random_bert_base(path: str | Path, vocab_file: str | Path | None = None, *, seed: int = 0,
                          save_weights: bool = True) -> Path:
    """Write a bert-base-uncased-sized (``BertConfig()`` defaults) random BertForMaskedLM to ``path``.

    Uses the real bert-base-uncased ``vocab_file`` (default: the one in :func:`shared_dir`; a
    one-line PmaskError says how to give it when it is not there). With ``save_weights=False``
    only the config and tokenizer are written (load it with ``load_model("random:" + path)``),
    which is much faster.
    """
    if vocab_file is None:
        vocab_file = shared_file(BERT_BASE_VOCAB_IN_SHARED, "bert-base-uncased's vocabulary", "vocab_file")
    elif not Path(vocab_file).is_file():
        raise PmaskError(f"{vocab_file}: no such vocabulary file")
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertTokenizer

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    (path / "vocab.txt").write_text(Path(vocab_file).read_text(encoding="utf-8"), encoding="utf-8")
    tok = BertTokenizer.from_pretrained(str(path), do_lower_case=True, model_max_length=512)
    tok.save_pretrained(str(path))
    config = BertConfig(vocab_size=len(tok))
    if save_weights:
        torch.manual_seed(seed)
        save_model(BertForMaskedLM(config).eval(), path)
    else:
        config.save_pretrained(str(path))
    return path
