"""Which decoding of a discourse store comes nearest the left-chain baseline (issue 37's moonshot).

Usage (from the repository root; a store of a SciDTB split made by ``pmask impact``):

    pmask impact ../shared/data/scidtb/dev/gold --model pmask-tiny-en --layers all -o dev-store
    python benchmarks/discourse_settings.py dev-store --gold ../shared/data/scidtb/dev/gold [--prior 4]

For every stored layer (from 1), decoder (``--decoders``, default eisner and cle) and view of F it
prints the UAS with the gold root (the clean default's scoring: every EDU counts), then the chain
baselines. The views of F:

- ``raw``: F as stored, ``F[i][j]`` = impact of EDU j on EDU i, read as the score of "j heads i";
- ``columns``: each column divided by its sum, ``F[i][j] / sum_k F[k][j]``. A long EDU, masked, moves
  every other EDU's state more than a short one does (more masked pieces), so raw columns mostly
  rank EDUs by length; dividing by the column keeps only whom EDU j moves most.

``--prior L`` adds a row per layer and decoder where ``L`` times the mean off-diagonal score is
added to "the previous EDU heads i": how much of a chain-biased tree is the prior's, not the probe's
(with a large ``L`` every decoder returns the best projective chain compatible with the gold root).
Choose a setting on dev, then report it on test.
"""
from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import numpy as np

from pmask.common.units import unit_entry
from pmask.corpora import read_corpus
from pmask.corpora.sentence import Sentence
from pmask.perturb.store.reader import ImpactStore
from pmask.trees.registry import DecodeInput, decode

VIEWS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "raw": lambda F: F,
    "columns": lambda F: F / np.maximum(F.sum(axis=0, keepdims=True), 1e-12),
}


def with_prior(F: np.ndarray, weight: float) -> np.ndarray:
    """``F`` plus ``weight`` times its mean off-diagonal entry on "the previous unit heads i" (F[i][i-1])."""
    n = F.shape[0]
    off = F[~np.eye(n, dtype=bool)]
    G = F.copy()
    G[np.arange(1, n), np.arange(n - 1)] += weight * (off.mean() if off.size else 1.0)
    return G


def uas(docs: list[tuple[Sentence, np.ndarray | None]], decoder: str) -> float:
    """UAS (percent, every unit with a gold head counted; -1 gold heads counted wrong) with the gold root."""
    correct = total = 0
    for doc, F in docs:
        x = DecodeInput(words=list(doc.words), F=F, root=doc.root, where=doc.where(),
                        discourse=unit_entry(doc.unit).discourse)
        heads = np.asarray(decode(decoder, x))
        gold = np.asarray(doc.heads)
        correct += int(((heads == gold) & (gold >= 0)).sum())
        total += len(gold)
    return 100.0 * correct / total


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("store", type=Path, help="a complete store of a SciDTB split (pmask impact)")
    ap.add_argument("--gold", type=Path, required=True, help="the split's gold .dep folder")
    ap.add_argument("--decoders", default="eisner,cle", help="comma-separated (default: eisner,cle)")
    ap.add_argument("--prior", type=float, default=None, help="also decode with this chain prior (see above)")
    args = ap.parse_args(argv)
    store = ImpactStore.open(args.store)
    gold = {s.id: s for s in read_corpus(args.gold)}
    stored = [(gold[imp.id], imp) for imp in store]
    layers = [k for k in stored[0][1].layers if k > 0]
    print(f"{len(stored)} documents, {sum(len(d.words) for d, _ in stored)} EDUs; UAS with the gold root")
    print("| layer | decoder | F | UAS |\n| ---: | --- | --- | ---: |")
    for layer in layers:
        for decoder in args.decoders.split(","):
            for name, view in VIEWS.items():
                docs = [(d, view(imp.layer(layer).astype(np.float64))) for d, imp in stored]
                print(f"| {layer} | {decoder} | {name} | {uas(docs, decoder):.2f} |")
                if args.prior is not None:
                    docs = [(d, with_prior(F, args.prior)) for d, F in docs]
                    print(f"| {layer} | {decoder} | {name} + prior {args.prior:g} | {uas(docs, decoder):.2f} |")
    for baseline in ("left-chain", "right-chain"):
        print(f"| | {baseline} | | {uas([(d, None) for d, _ in stored], baseline):.2f} |")


if __name__ == "__main__":
    main()
