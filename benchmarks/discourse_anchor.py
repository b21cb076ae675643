"""pmask's discourse probe under ``--faithful`` against Wu et al.'s own outputs (SciDTB, their ``discourse/`` code).

Usage (from the repository root, with pmask's environment; never run in CI):

    python benchmarks/discourse_anchor.py --model pmask-tiny-en --anchor ANCHOR \\
        [--split test] [--limit N] [--threads 2] [--out figures.json]

``--anchor`` holds ``models/<model>/`` and ``out/<model>-fixedmask/`` as ``tools/discourse_authors.py``
writes them (their code run unchanged with ``--fix-attention-mask``: their segment ids passed as
``token_type_ids``, the attention of their pinned transformers 2.5.1): ``matrices.npz`` (their full
(n+1)x(n+1) matrix per file name), ``trees-<decoder>.json`` and ``summary.json`` (their scores and
whole-process seconds). The script computes pmask's matrices on the same documents, the EDU texts
as their reader leaves them (:func:`pmask.corpora.scidtb.authors_documents`), decodes them with
pmask's faithful discourse decoders (the code ``pmask parse --faithful`` runs) and prints:

- the largest absolute and relative matrix difference (documents matched by file name);
- per decoder, the documents whose trees differ from theirs (node 0's own entry and the dropped last
  EDU aside), pmask's UAS / UUAS (every gold arc; the dropped EDU wrong) next to theirs, and their
  ``distance_evaluation`` table computed on pmask's trees next to the one they printed;
- the unpatched line: their decoders' figures on all-zero matrices (what their code gives under
  transformers 5, where the segment ids land in ``attention_mask``: no position attends to any other,
  every F[i][j] is exactly 0), 44.76 / 50.57 Eisner and 7.22 CLE on SciDTB test;
- sequences and seconds: pmask's U(U+1)/2 inputs against their (n+1)², and both times (theirs from
  their own run's summary: same machine, another time; the machine is shared, so times are noisy).
"""
from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch

from pmask.corpora import read_corpus
from pmask.corpora.scidtb import authors_documents
from pmask.eval.scores.dependency_score import DependencyScore
from pmask.perturb.engine.runner import ImpactStats, impact_matrices
from pmask.perturb.models.load import load_model
from pmask.trees.registry import DecodeInput, decode

ROOT = Path(__file__).resolve().parents[1]
DECODERS = {"eisner": "eisner", "cle": "cle", "right-chain": "right_chain", "left-chain": "left_chain"}
# node 0's own entry in their trees: (0, -1) Eisner and left chain, (0, 0) CLE, (0, 1) right chain
NODE0 = {"eisner": -1, "cle": 0, "right-chain": 1, "left-chain": -1}


def their_tree(heads: np.ndarray, decoder: str) -> list[tuple[int, int]]:
    """pmask's faithful heads (last EDU NO_HEAD) as their list of (dependent, head), node 0 included."""
    return [(0, NODE0[decoder])] + [(k, int(h)) for k, h in enumerate(heads[:-1], start=1)]


def their_scores(trees: list[list[tuple[int, int]]], golds: list[list[tuple[int, int]]]) -> dict:
    """Their ``evaluation`` and ``distance_evaluation``, from the issue's description: gold arcs of
    EDUs 1..n; UAS = |gold ∩ pred| / total, UUAS = |(gold ∪ reversed gold) ∩ pred| / total; arcs by
    |dep − head| − 1 (< 6), node 0 and arcs into ROOT skipped, pairs by position (the last EDU falls off)."""
    correct = undirected = total = 0
    right, wrong = defaultdict(int), defaultdict(int)
    for tree, gold in zip(trees, golds):
        arcs = gold[1:]
        both = set(arcs) | {(h, d) for d, h in arcs}
        correct += len(set(arcs) & set(tree))
        undirected += len(both & set(tree))
        total += len(arcs)
        for i, (p, g) in enumerate(zip(tree, gold)):
            if i == 0 or g[1] == 0:
                continue
            (right if p == g else wrong)[abs(g[1] - g[0]) - 1] += 1
    table = [{"distance": k, "accuracy": round(100 * right[k] / (right[k] + wrong[k]), 3),
              "count": right[k] + wrong[k]} for k in sorted(wrong) if k < 6]
    return {"uas": correct / total, "uuas": undirected / total, "correct": correct, "total": total,
            "distance_table": table}


def run(args: argparse.Namespace) -> dict:
    anchor = Path(args.anchor)
    theirs_dir = anchor / "out" / f"{args.model}-fixedmask"
    summary = json.loads((theirs_dir / "summary.json").read_text())
    matrices = np.load(theirs_dir / "matrices.npz")
    docs = read_corpus(Path(args.data) / args.split / "gold", limit=args.limit)
    torch.set_num_threads(args.threads)
    lm = load_model(str(anchor / "models" / args.model), device="cpu", dtype="float32")
    stats = ImpactStats()
    started = time.perf_counter()
    F_all = [F[0] for F in impact_matrices(lm, authors_documents(docs), layers=[-1], include_cls=True, stats=stats,
                                           progress=True, metric="dist", subword="avg", tokenize="words")]
    seconds = time.perf_counter() - started
    diff = [(float(np.abs(F - matrices[d.meta["file_name"]]).max()), float(np.abs(matrices[d.meta["file_name"]]).max()),
             d.id) for d, F in zip(docs, F_all)]
    out: dict = {"model": args.model, "documents": len(docs), "pmask_sequences": stats.forward_sequences,
                 "their_inputs": sum((len(d) + 1) ** 2 for d in docs), "pmask_seconds": round(seconds, 1),
                 "their_seconds": round(summary["timings_s"]["matrix"], 1),
                 "max_abs_diff": max(a for a, _, _ in diff), "max_rel_diff": max(a / m for a, m, _ in diff if m),
                 "decoders": {}}
    golds = [[(0, -1)] + [(k, h) for k, h in enumerate(d.heads, start=1)] for d in docs]
    for name, key in DECODERS.items():
        trees_theirs = json.loads((theirs_dir / f"trees-{key}.json").read_text())
        score, ours, differ = DependencyScore(), [], []
        for d, F in zip(docs, F_all):
            heads = decode(name, DecodeInput(words=d.words, F=F[1:, 1:], F_cls=F, root=d.root, faithful=True,
                                             discourse=True, where=d.where()))
            score.add(heads, d.heads, sent_id=d.id)
            ours.append(their_tree(heads, name))
            if [tuple(a) for a in trees_theirs[d.meta["file_name"]]][1:] != ours[-1][1:]:
                differ.append(d.id)
        mine = their_scores(ours, golds)
        reported = summary["decoders"][key]
        out["decoders"][name] = {
            "differing_trees": differ, "pmask_uas": round(score.uas, 2), "pmask_uuas": round(score.uuas, 2),
            "their_scoring_on_pmask_trees": {"uas": round(100 * mine["uas"], 2), "uuas": round(100 * mine["uuas"], 2)},
            "their_reported": {"uas": round(100 * reported["uas"], 2), "uuas": round(100 * reported["uuas"], 2)},
            "distance_table_equal": mine["distance_table"] == reported.get("distance_table") if args.limit is None
            else None}
    out["zeros"] = zero_figures(docs)
    return out


def zero_figures(docs: list) -> dict:
    """Their decoders on all-zero matrices (the unpatched run under transformers 5)."""
    figures = {}
    for name in ("eisner", "cle"):
        score = DependencyScore()
        for d in docs:
            zeros = np.zeros((len(d) + 1,) * 2)
            score.add(decode(name, DecodeInput(words=d.words, F=zeros[1:, 1:], F_cls=zeros, root=d.root, faithful=True,
                                               discourse=True, where=d.where())), d.heads)
        figures[name] = {"uas": round(score.uas, 2), "uuas": round(score.uuas, 2)}
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="pmask-tiny-en",
                        help="a folder of ANCHOR/models (pmask-tiny-en, tiny-random)")
    parser.add_argument("--anchor", required=True, help="models/ and out/ of tools/discourse_authors.py's runs")
    parser.add_argument("--data", default=str(ROOT / ".." / "shared" / "data" / "scidtb"))
    parser.add_argument("--split", default="test")
    parser.add_argument("--limit", type=int, default=None, help="the first N documents (sorted by name)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", default=None, help="also write the figures here (JSON)")
    args = parser.parse_args()
    out = run(args)
    print(f"{args.model}, SciDTB {args.split}, {out['documents']} documents: pmask {out['pmask_sequences']:,} "
          f"sequences in {out['pmask_seconds']} s; their code {out['their_inputs']:,} inputs "
          f"({out['their_seconds']} s in their own run)")
    print(f"matrices: max |pmask - theirs| = {out['max_abs_diff']:.2e} (relative {out['max_rel_diff']:.2e})")
    for name, d in out["decoders"].items():
        print(f"{name:12s} pmask UAS/UUAS {d['pmask_uas']:.2f} / {d['pmask_uuas']:.2f}; their scoring on pmask's "
              f"trees {d['their_scoring_on_pmask_trees']['uas']:.2f} / {d['their_scoring_on_pmask_trees']['uuas']:.2f};"
              f" theirs {d['their_reported']['uas']:.2f} / {d['their_reported']['uuas']:.2f}; "
              f"{len(d['differing_trees'])} trees differ; distance table equal: {d['distance_table_equal']}")
    z = out["zeros"]
    print(f"all-zero matrices (their code under transformers 5): Eisner {z['eisner']['uas']:.2f} / "
          f"{z['eisner']['uuas']:.2f}, CLE {z['cle']['uas']:.2f}")
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
