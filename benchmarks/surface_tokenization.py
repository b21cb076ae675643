"""How much does surface tokenisation (``--tokenize text``) change the model input, per language?

Trains an mBERT-like WordPiece and an XLM-R-like Unigram vocabulary on all 20 PUD texts, then,
for every word of every PUD treebank, compares the pieces it gets when each word is tokenised
separately (``words``) with the pieces of its group in the running text (``text``).
Reports per language: the share of words whose pieces change, and the share of words left
without a piece of their own (merged with the previous word; multiword-token parts excluded).

    python benchmarks/surface_tokenization.py --vocab-size 50000 [--limit 1000]
"""
from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path

from pmask.corpora import read_corpus
from pmask.eval.studies.bench.treebanks import language_of
from pmask.perturb.alignment import align_sentence, surface_layout
from pmask.perturb.models.load import load_tokenizer
from pmask.perturb.testing.multilingual import KINDS, pud_texts, train_vocabulary

UD = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "ud"


def compare(tok, sentences) -> tuple[int, int, int, int]:
    """(words, words whose pieces change, words merged into another word's group by a straddling piece,
    tokens the engine runs for these sentences in ``text`` mode: (n(n+1)/2 + 1) x pieces per sentence)."""
    words = changed = merged = tokens = 0
    for sent in sentences:
        per_word = align_sentence(tok, sent, "words")
        text = align_sentence(tok, sent, "text", warn=False)
        n = len(sent.words)
        tokens += (n * (n + 1) // 2 + 1) * len(text)
        in_mwt = {k for u in surface_layout(sent).units if len(u) > 1 for k in u}
        for k in range(len(sent.words)):
            words += 1
            a = [per_word.input_ids[p] for p in per_word.pieces(k)]
            b = [text.input_ids[p] for p in text.pieces(k)]
            changed += a != b
            merged += k not in in_mwt and text.word_index[text.pieces(k)[0]] != k
    return words, changed, merged, tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocab-size", type=int, default=50000)
    parser.add_argument("--limit", type=int, default=None, help="sentences per treebank to compare")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    texts = pud_texts(UD)
    files = sorted(UD.glob("UD_*-PUD/*.conllu"))
    table: dict[str, dict[str, tuple[int, int, int, int]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind in KINDS:
            t0 = time.perf_counter()
            train_vocabulary(texts, Path(tmp) / kind, kind=kind, vocab_size=args.vocab_size)
            tok = load_tokenizer(str(Path(tmp) / kind))
            print(f"{kind}: {len(tok)} pieces, trained in {time.perf_counter() - t0:.0f} s")
            for path in files:
                sents = read_corpus(path, "conllu", limit=args.limit)
                table.setdefault(language_of(path, sents), {})[kind] = compare(tok, sents)
    print("\n| language | words | " + " | ".join(f"{k}: pieces change | {k}: no own piece" for k in KINDS) + " |")
    print("|---|---:|" + "---:|---:|" * len(KINDS))
    for lang, by_kind in table.items():
        n = by_kind[KINDS[0]][0]
        cells = " | ".join(f"{100 * c / n:.1f} % | {100 * m / n:.1f} %" for _, c, m, _ in (by_kind[k] for k in KINDS))
        print(f"| {lang} | {n} | {cells} |")
    for kind in KINDS:
        print(f"{kind}: {sum(v[kind][3] for v in table.values()):,} forward tokens for every sentence (text mode)")


if __name__ == "__main__":
    main()
