"""Tiny random XLNet, BART, XLM and GPT-2 models (and a GPT-2-small-sized one) to compare CPMI with the authors' code.

Not part of pmask: a helper of ``benchmarks/cpmi_equality.py`` and ``benchmarks/cpmi_speed.py``. It imports
only torch, transformers and ``tokenizers`` (no pmask), so it runs under the authors' environment
(transformers 4.27, see ``tools/cpmi_authors.py``) as well as pmask's; run it under the OLDEST transformers
that is to read the folders, since newer versions read older files but not the other way round (4.27 saves
``pytorch_model.bin``, which transformers 5 still reads). Each folder holds a seeded random model, saved with
``save_pretrained``, and a tokenizer trained here on the given sentences (no hub):

- ``gpt2``: byte-level BPE, ``<|endoftext|>`` the only special token (GPT2Tokenizer's files);
- ``bart``: byte-level BPE with ``<s> <pad> </s> <unk> <mask>`` (BartTokenizer's files);
- ``xlnet``: a SentencePiece unigram model with XLNet's specials (needs ``sentencepiece``; the fast
  ``tokenizer.json`` is written too, so that an environment without ``sentencepiece`` reads it);
- ``xlm``: BPE with ``</w>`` word ends on lower-cased words and XLM's ``<special0..9>`` (XLMTokenizer's
  files; reading them needs ``sacremoses``);
- ``gpt2-small``: GPT2Config() (GPT-2 small: 12 layers, hidden 768, 50257 token ids) with a byte-level BPE
  trained on the sentences (its ids are a subset of the embedding table), for speed measurements.

    python tools/tiny_cpmi_models.py OUTDIR --conllu en_pud-ud-test.conllu [--families gpt2,bart,xlnet,xlm]

writes ``OUTDIR/<family>``, the tokenizers trained on every sentence of the CoNLL-U file (``--limit N``: the
first N). ``xlm`` and ``xlnet`` need ``sacremoses`` and ``sentencepiece`` (+ ``protobuf``) where it runs.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

FAMILIES = ("gpt2", "bart", "xlnet", "xlm", "gpt2-small")
XLNET_SPECIALS = ["<unk>", "<s>", "</s>", "<cls>", "<sep>", "<pad>", "<mask>", "<eod>", "<eop>"]
XLM_SPECIALS = ["<s>", "</s>", "<pad>", "<unk>"] + [f"<special{i}>" for i in range(10)]
BART_SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]


def read_words(conllu: Path, limit: int) -> list[list[str]]:
    """FORM columns of the first ``limit`` sentences (multi-word tokens and empty nodes skipped)."""
    sentences, words = [], []
    for line in conllu.read_text(encoding="utf-8").splitlines() + [""]:
        if line and not line.startswith("#"):
            cols = line.split("\t")
            if cols[0].isdigit():
                words.append(cols[1])
        elif not line and words:
            sentences.append(words)
            words = []
            if len(sentences) == limit:
                break
    return sentences


def _byte_bpe(folder: Path, lines: list[str], vocab_size: int, specials: list[str]) -> None:
    from tokenizers import ByteLevelBPETokenizer

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(lines, vocab_size=vocab_size, min_frequency=1, special_tokens=specials,
                            show_progress=False)
    bpe.save_model(str(folder))      # vocab.json + merges.txt


def _xlnet_tokenizer(folder: Path, lines: list[str], vocab_size: int):
    import sentencepiece as spm
    from transformers import XLNetTokenizer, XLNetTokenizerFast

    corpus = folder / "train.txt"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(corpus), model_prefix=str(folder / "spiece"), vocab_size=vocab_size, model_type="unigram",
        character_coverage=1.0, unk_id=0, bos_id=1, eos_id=2, pad_id=5, hard_vocab_limit=False,
        user_defined_symbols=["<cls>", "<sep>", "<mask>", "<eod>", "<eop>"], minloglevel=2)
    corpus.unlink()
    (folder / "spiece.vocab").unlink()
    slow = XLNetTokenizer(str(folder / "spiece.model"))
    slow.save_pretrained(str(folder))
    fast = XLNetTokenizerFast.from_pretrained(str(folder))
    fast.save_pretrained(str(folder))
    return fast


def _xlm_tokenizer(folder: Path, lines: list[str], vocab_size: int):
    from sacremoses import MosesTokenizer
    from tokenizers import CharBPETokenizer
    from transformers import XLMTokenizer

    moses = MosesTokenizer(lang="en")     # trained on what XLMTokenizer feeds its BPE: Moses tokens, lower-cased
    texts = [moses.tokenize(line, return_str=True, escape=False).lower() for line in lines]
    bpe = CharBPETokenizer(suffix="</w>", lowercase=True, split_on_whitespace_only=True)
    bpe.train_from_iterator(texts, vocab_size=vocab_size, min_frequency=1, special_tokens=XLM_SPECIALS,
                            suffix="</w>", show_progress=False)
    bpe.save_model(str(folder))
    merges = folder / "merges.txt"
    merges.write_text("".join(line + "\n" for line in merges.read_text(encoding="utf-8").splitlines()
                              if line and not line.startswith("#")), encoding="utf-8")
    tok = XLMTokenizer(str(folder / "vocab.json"), str(merges))
    tok.save_pretrained(str(folder))
    return tok


def make(family: str, folder: Path, texts: list[list[str]], seed: int = 0, init_range: float = 0.2,
         vocab_size: int = 1000) -> Path:
    """Write the tiny random ``family`` model and its tokenizer (about ``vocab_size`` entries, trained on ``texts``)
    into ``folder`` (created); returns it. With all of English PUD and 1000 entries, ``n't`` is tokenised
    as the authors' ``n't`` surgery expects (GPT-2/BART ``Ġn 't``, XLM ``n</w> 't</w>``), so it is exercised;
    XLNet's SentencePiece model gets at most 600 entries, with which ``n't`` is ``▁ n ' t``, its surgery's split."""
    import torch
    import transformers as tf

    folder.mkdir(parents=True, exist_ok=True)
    lines = [" ".join(words) for words in texts]
    small = dict(n_embd=32, n_layer=2, n_head=2)
    if family in ("gpt2", "gpt2-small"):
        _byte_bpe(folder, lines, 4000 if family == "gpt2-small" else vocab_size, ["<|endoftext|>"])
        tok = tf.GPT2Tokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"))
        eos = tok.convert_tokens_to_ids("<|endoftext|>")
        if family == "gpt2":
            config = tf.GPT2Config(vocab_size=len(tok), n_positions=512, bos_token_id=eos, eos_token_id=eos,
                                   initializer_range=init_range, **small)
        else:
            config = tf.GPT2Config(bos_token_id=eos, eos_token_id=eos)
        model = tf.GPT2LMHeadModel
    elif family == "bart":
        _byte_bpe(folder, lines, vocab_size, BART_SPECIALS)
        tok = tf.BartTokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"))
        config = tf.BartConfig(vocab_size=len(tok), d_model=32, encoder_layers=2, decoder_layers=2,
                               encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64,
                               decoder_ffn_dim=64, max_position_embeddings=512, init_std=init_range,
                               pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id,
                               eos_token_id=tok.eos_token_id, decoder_start_token_id=tok.eos_token_id,
                               forced_eos_token_id=tok.eos_token_id)
        model = tf.BartForConditionalGeneration
    elif family == "xlnet":
        tok = _xlnet_tokenizer(folder, lines, min(vocab_size, 600))
        config = tf.XLNetConfig(vocab_size=len(tok), d_model=32, n_layer=2, n_head=2, d_inner=64,
                                initializer_range=init_range, pad_token_id=tok.pad_token_id,
                                bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
        model = tf.XLNetLMHeadModel
    elif family == "xlm":
        tok = _xlm_tokenizer(folder, lines, vocab_size)
        config = tf.XLMConfig(vocab_size=len(tok), emb_dim=32, n_layers=2, n_heads=2, max_position_embeddings=512,
                              init_std=init_range, embed_init_std=init_range, n_langs=1, use_lang_emb=False,
                              pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id,
                              mask_token_id=tok.mask_token_id, unk_index=tok.unk_token_id,
                              pad_index=tok.pad_token_id, eos_index=tok.sep_token_id)
        model = tf.XLMWithLMHeadModel
    else:
        raise SystemExit(f"unknown family {family!r}: one of {', '.join(FAMILIES)}")
    tok.save_pretrained(str(folder))
    torch.manual_seed(seed)
    model(config).eval().save_pretrained(str(folder))
    (folder / "made-by.json").write_text(json.dumps({"family": family, "seed": seed, "transformers": tf.__version__,
                                                     "sentences": len(texts)}) + "\n", encoding="utf-8")
    return folder


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--conllu", type=Path, required=True, help="sentences to train the tokenizers on")
    ap.add_argument("--limit", type=int, default=0, help="first N sentences (0: all)")
    ap.add_argument("--vocab-size", type=int, default=1000)
    ap.add_argument("--families", default="gpt2,bart,xlnet,xlm", help=f"comma-separated, of {', '.join(FAMILIES)}")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    texts = read_words(args.conllu, args.limit or -1)
    for family in args.families.split(","):
        print(make(family, args.outdir / family, texts, seed=args.seed, vocab_size=args.vocab_size))


if __name__ == "__main__":
    main()
