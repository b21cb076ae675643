"""Tiny random multilingual masked LMs whose vocabularies are trained here (no downloads).

``train_vocabulary`` trains an mBERT-style WordPiece (cased, CJK characters split, accents
kept) or an XLM-R-style SentencePiece Unigram tokenizer on some texts (e.g. the 20 PUD
treebanks) and saves it as a Hugging Face fast tokenizer; ``make_tiny_multilingual`` adds a
small randomly initialised BERT or XLM-R masked LM, loadable by ``pmask.perturb.models.load.load_model``.
Used by the tests, by ``pmask bench``'s acceptance run and for the README figure.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

from pmask.perturb.testing import save_model

WORDPIECE_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
UNIGRAM_SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
KINDS = ("wordpiece", "unigram")


def pud_texts(root: str | Path, limit: int | None = None) -> list[str]:
    """The ``# text`` lines of every ``UD_*-PUD/*.conllu`` under ``root`` (first ``limit`` per file)."""
    out: list[str] = []
    for path in sorted(Path(root).glob("UD_*-PUD/*.conllu")):
        texts = [line[len("# text = "):] for line in path.read_text(encoding="utf-8").splitlines()
                 if line.startswith("# text = ")]
        out.extend(texts[:limit] if limit else texts)
    return out


def train_vocabulary(texts: Iterable[str], path: str | Path, *, kind: str = "wordpiece", vocab_size: int = 8000,
                     max_length: int = 512):
    """Train a ``kind`` tokenizer on ``texts``, save it to ``path`` and return it (a fast tokenizer).

    Args:
        texts: training sentences (running text).
        path: output directory (created).
        kind: ``"wordpiece"`` (mBERT-like) or ``"unigram"`` (XLM-R-like).
        vocab_size: target vocabulary size.
        max_length: the tokenizer's ``model_max_length``.

    Returns:
        A ``transformers`` fast tokenizer, also saved in ``path``.

    Example:
        >>> tok = train_vocabulary(["Hallo Welt"], "/tmp/tok", vocab_size=60)   # doctest: +SKIP
    """
    from tokenizers import SentencePieceUnigramTokenizer
    from tokenizers.implementations import BertWordPieceTokenizer
    from tokenizers.processors import TemplateProcessing
    from transformers import BertTokenizerFast, PreTrainedTokenizerFast  # type: ignore[attr-defined]  # 5.x: a lazy alias

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    texts = list(texts)
    if kind == "wordpiece":
        wp = BertWordPieceTokenizer(clean_text=True, handle_chinese_chars=True, strip_accents=False, lowercase=False)
        wp.train_from_iterator(texts, vocab_size=vocab_size, min_frequency=1, special_tokens=WORDPIECE_SPECIALS,  # type: ignore[arg-type]  # stub wants Iterator; any iterable works
                               show_progress=False)
        wp.save_model(str(path))
        tok = BertTokenizerFast(str(path / "vocab.txt"), do_lower_case=False, strip_accents=False,
                                tokenize_chinese_chars=True, model_max_length=max_length)
    elif kind == "unigram":
        sp = SentencePieceUnigramTokenizer()
        sp.train_from_iterator(texts, vocab_size=vocab_size, special_tokens=UNIGRAM_SPECIALS, unk_token="<unk>",
                               show_progress=False)
        sp.post_processor = TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
                                               special_tokens=[("<s>", 0), ("</s>", 2)])
        tok = PreTrainedTokenizerFast(tokenizer_object=sp._tokenizer, bos_token="<s>", eos_token="</s>",
                                      unk_token="<unk>", pad_token="<pad>", mask_token="<mask>", cls_token="<s>",
                                      sep_token="</s>", model_max_length=max_length)
    else:
        raise ValueError(f"unknown vocabulary kind {kind!r} (choose from {', '.join(KINDS)})")
    tok.save_pretrained(str(path))
    return tok


def make_tiny_multilingual(path: str | Path, texts: Iterable[str], *, kind: str = "wordpiece",
                           vocab_size: int = 2000, hidden: int = 32, layers: int = 3, heads: int = 2,
                           max_positions: int = 256, seed: int = 0, init_range: float = 0.5) -> Path:
    """Write a tiny random BERT (``kind="wordpiece"``) or XLM-R (``"unigram"``) masked LM to ``path``.

    The vocabulary is trained on ``texts`` (see :func:`train_vocabulary`); the model accepts at most
    ``max_positions`` tokens. Returns ``path``.
    """
    import torch
    from transformers import BertConfig, BertForMaskedLM, XLMRobertaConfig, XLMRobertaForMaskedLM

    path = Path(path)
    tok = train_vocabulary(texts, path, kind=kind, vocab_size=vocab_size, max_length=max_positions)
    common = dict(vocab_size=len(tok), hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                  intermediate_size=4 * hidden, initializer_range=init_range, pad_token_id=tok.pad_token_id)
    torch.manual_seed(seed)
    model: BertForMaskedLM | XLMRobertaForMaskedLM
    if kind == "wordpiece":
        model = BertForMaskedLM(BertConfig(max_position_embeddings=max_positions, **common))
    else:
        model = XLMRobertaForMaskedLM(XLMRobertaConfig(max_position_embeddings=max_positions + 2, type_vocab_size=1,
                                                       bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                                                       **common))
    save_model(model.eval(), path)
    return path
