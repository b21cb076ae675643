"""Decoding speed on 1000 PUD-sized sentences with random impact matrices.

Lengths are the real PUD sentence lengths (word lines with integer ids, counted here) when
``../shared/data/ud/UD_English-PUD/en_pud-ud-test.conllu`` exists, else uniform 5..59.
Usage: ``python benchmarks/decode_speed.py [--sentences 1000] [--seed 0] [--networkx 100]``.
Prints one row per decoder: total seconds, ms per sentence (the last row times Eisner five times on
one 60-word sentence; about 10 ms each on a laptop core, and it should stay well under 50 ms).
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from pmask.trees import chu_liu_edmonds, dependency_scores, eisner, faithful_cle, faithful_eisner, mart

PUD = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "ud" / "UD_English-PUD" / "en_pud-ud-test.conllu"


def pud_lengths(path: Path) -> list[int]:
    """Words per sentence: lines whose first column is a plain integer id (no ranges, no empty nodes)."""
    lengths, count = [], 0
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                if count:
                    lengths.append(count)
                count = 0
            elif not line.startswith("#") and line.split("\t", 1)[0].isdigit():
                count += 1
    if count:
        lengths.append(count)
    return lengths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--networkx", type=int, default=100, help="sentences for the networkx CLE backend (0 = skip)")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    if PUD.exists():
        lengths = pud_lengths(PUD)[: args.sentences]
        source = f"PUD lengths ({PUD.name})"
    else:
        lengths = rng.integers(5, 60, size=args.sentences).tolist()
        source = "uniform 5..59 (PUD file not found)"
    Fs = [rng.gamma(2.0, size=(n, n)) for n in lengths]
    for F in Fs:
        np.fill_diagonal(F, 0.0)
    F_cls = []
    for F in Fs:
        G = np.zeros((len(F) + 1, len(F) + 1))
        G[1:, 1:] = F
        G[0, 1:] = rng.gamma(2.0, size=len(F))
        F_cls.append(G)
    scores = [dependency_scores(F) for F in Fs]
    roots = [int(rng.integers(1, n + 1)) for n in lengths]
    words = [[f"w{i}" for i in range(n)] for n in lengths]
    k = min(args.networkx, len(lengths))
    jobs = [
        ("eisner (single root)", lambda i: eisner(scores[i]), len(lengths)),
        ("eisner (given root)", lambda i: eisner(scores[i], root=roots[i]), len(lengths)),
        ("chu_liu_edmonds (single root)", lambda i: chu_liu_edmonds(scores[i]), len(lengths)),
        ("mart (three-way)", lambda i: mart(Fs[i], words[i]), len(lengths)),
        ("mart (binary)", lambda i: mart(Fs[i], words[i], "binary"), len(lengths)),
        ("faithful_eisner", lambda i: faithful_eisner(F_cls[i], roots[i]), len(lengths)),
        ("faithful_cle", lambda i: faithful_cle(F_cls[i], roots[i]), len(lengths)),
    ]
    if k:
        jobs.append((f"chu_liu_edmonds networkx ({k} sents)",
                     lambda i: chu_liu_edmonds(scores[i], backend="networkx"), k))
    sixty = np.random.default_rng(args.seed).random((61, 61))  # one 60-word sentence, as in the old test
    jobs.append(("eisner (one 60-word sentence, x5)", lambda i: eisner(sixty), 5))
    print(f"{len(lengths)} sentences, {source}: mean length {np.mean(lengths):.1f}, max {max(lengths)}")
    print(f"{'decoder':40s} {'total s':>9s} {'ms/sent':>9s}")
    for name, fn, count in jobs:
        t = time.perf_counter()
        for i in range(count):
            fn(i)
        total = time.perf_counter() - t
        print(f"{name:40s} {total:9.2f} {1000 * total / count:9.2f}")


if __name__ == "__main__":
    main()
