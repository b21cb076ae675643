"""CPMI next to the other probes on one model and treebank, scored as Hoover et al. score CPMI (UUAS over
non-punctuation words, :mod:`pmask.eval.scores.hoover_uuas`), for the table in docs/cpmi.md and the model card.

Every matrix is computed once into a resumable store under ``--work`` (rerunning reuses them):
CPMI as ``--faithful --metric cpmi`` (tokenisation ``words-ptb``, ``--context 30``), and at the
last layer the pair probe with ``prob`` and ``dist``, single masking (``dist``), attention (mean
head) and distance (``l2``). CPMI is decoded with ``mst-projective`` and ``mst`` on ``sum``,
with and without ``--absolute``; each other matrix with pmask's default (Eisner, gold root) and
with Hoover et al.'s ``mst-projective`` on ``sum`` (punctuation left out, as for CPMI). Baselines:
connect-adjacent (consecutive non-punctuation words: the ``connect-adjacent`` decoder) and a random
projective tree (``mst-projective`` on a uniform random matrix, their ``random proj``). Example (prints a
Markdown table):

    python benchmarks/cpmi_figures.py --limit 200 --work /tmp/cpmi-figures
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from pmask.corpora.corpus_spec import CorpusSpec
from pmask.eval.scores.hoover_uuas import HooverUuas, corpus_uuas, sentence_uuas
from pmask.perturb.engine.impact_settings import ImpactSettings
from pmask.perturb.fill.model_spec import ModelSpec
from pmask.perturb.fill.stores import build_store
from pmask.perturb.source import ImpactSource
from pmask.pipeline.request import Request, resolve
from pmask.trees.registry import DecodeInput, decode

PUD = "../shared/data/ud/UD_English-PUD/en_pud-ud-test.conllu"
#: store name -> (impact settings, whether the CPMI decodings apply)
MATRICES = {
    "cpmi": (ImpactSettings("cpmi", "sum", "words-ptb", "pair", 30), True),
    "pair-prob": (ImpactSettings("prob", "avg", "words", "pair", 0), False),
    "pair-dist": (ImpactSettings("dist", "avg", "words", "pair", 0), False),
    "single": (ImpactSettings("dist", "avg", "words", "single", 0), False),
    "attention": (ImpactSettings("weight", "avg", "words", "attention", 0), False),
    "distance": (ImpactSettings("l2", "avg", "words", "distance", 0), False),
}


def _row(name: str, scores: list[HooverUuas]) -> str:
    pooled, mean = corpus_uuas(scores)
    return f"| {name} | {100 * pooled:.2f} | {100 * mean:.2f} |"


def _decodings(cpmi: bool) -> list[tuple[str, str, str, bool, bool]]:
    """(label, decoder, symmetrize, absolute, faithful) for one matrix."""
    if cpmi:
        return [(f"{d} sum{' abs' if a else ''}", d, "sum", a, True)
                for d in ("mst-projective", "mst") for a in (False, True)]
    return [("eisner, gold root", "eisner", "none", False, False), ("mst-projective sum", "mst-projective", "sum",
                                                                    False, True)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="default: the bundled pmask-tiny-en")
    ap.add_argument("--conllu", default=PUD)
    ap.add_argument("--limit", type=int, default=200)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--work", type=Path, required=True)
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    corpus = CorpusSpec(Path(args.conllu), "auto", limit=args.limit)
    print("| matrix, decoding | UUAS pooled | UUAS sentence mean |\n|---|---:|---:|")
    sentences = corpus.read()
    for name, (impact, cpmi) in MATRICES.items():
        store = args.work / name
        spec = resolve(Request(ModelSpec(args.model, impact=impact, threads=args.threads))).model
        build_store(corpus, spec, store, layers=[-1],
                    resume=store.exists(), progress=False)
        impacts = list(ImpactSource.open(CorpusSpec(store), progress=False).impacts(-1))
        for label, decoder, mode, absolute, faithful in _decodings(cpmi):
            scores = []
            for s, imp in zip(sentences, impacts):
                x = DecodeInput(words=s.words, F=imp.F, root=s.root, faithful=faithful, symmetrize=mode,
                                absolute=absolute, keep=[u != "PUNCT" for u in s.upos],
                                distance=bool(getattr(imp, "distance", False)))
                scores.append(sentence_uuas(decode(decoder, x), s.heads, s.upos))
            print(_row(f"{name}, {label}", scores))
    adjacent, random = [], []
    rng = np.random.default_rng(0)
    for s in sentences:
        keep = [u != "PUNCT" for u in s.upos]
        adjacent.append(sentence_uuas(decode("connect-adjacent", DecodeInput(words=s.words, keep=keep)), s.heads,
                                      s.upos))
        x = DecodeInput(words=s.words, F=rng.random((len(s.words),) * 2), faithful=True, keep=keep)
        random.append(sentence_uuas(decode("mst-projective", x), s.heads, s.upos))
    print(_row("connect-adjacent", adjacent))
    print(_row("random projective", random))


if __name__ == "__main__":
    main()
