"""What each probe costs: sequences, tokens and seconds on the first N PUD sentences, and the ratio to pair.

A bert-base-sized model with random weights (``make_random_bert_base``: the real bert-base-uncased
vocabulary and configuration, 12 layers × 12 heads, hidden size 768), float32, every layer (1..12,
what ``bench`` computes), include_cls layout (what stores hold). Sentences are read once; each probe
runs them through ``pmask.perturb.probes.probe_matrices`` and the engine's own counters
(``ImpactStats``) give the sequences and tokens. The expected costs per sentence of n words are
1 + n + n(n-1)/2 sequences (pair), n + 1 (single) and 1 (attention, distance); the table compares
the measured seconds with the measured sequences and tokens, so it shows how close the cheaper
probes get to their sequence count (each probe is checked and warmed up on one sentence first, untimed).
Prints a Markdown table and one JSON line. Not a test: figures
depend on the machine and its load (printed with them).

    python benchmarks/probe_speed.py                 # 50 sentences, 2 threads
    python benchmarks/probe_speed.py 10 --probes pair,single,attention,distance,distance:jsd
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import time

from pmask.corpora import read_corpus
from pmask.perturb.engine.stats import ImpactStats
from pmask.perturb.models.load import load_model
from pmask.perturb.probes import probe_matrices, sequences_per_sentence
from pmask.perturb.probes.support import check_support

from _bert_base import PUD, add_model_args, bert_base


def resolved_impact(probe, **given):
    """The impact settings a run of ``probe`` with ``given`` resolves to (no model's recorded defaults)."""
    from pmask.pipeline.request import Request, resolve

    return resolve(Request.build(model="a-model", probe=probe, **given)).impact

def run_probe(lm, sentences, probe: str, metric: str | None, layers) -> dict:
    check_support(lm, probe, metric, layers)          # load-time checks (attention weights verified) not timed
    list(probe_matrices(lm, sentences[:1], resolved_impact(probe, metric=metric), layers=layers,
                        include_cls=True))   # warm-up
    stats = ImpactStats()
    t0 = time.perf_counter()
    for _ in probe_matrices(lm, sentences, resolved_impact(probe, metric=metric), layers=layers, include_cls=True,
                            stats=stats):
        pass
    seconds = time.perf_counter() - t0
    return {"probe": probe + (f":{metric}" if metric else ""), "sentences": stats.sentences,
            "sequences": stats.forward_sequences, "expected_sequences": sum(sequences_per_sentence(probe, len(w))
                                                                            for w in sentences),
            "tokens": stats.tokens, "seconds": round(seconds, 2), "fast_path": stats.fast_path}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sentences", type=int, nargs="?", default=50)
    parser.add_argument("--probes", default="pair,single,attention,distance",
                        help="comma-separated PROBE or PROBE:METRIC (default: pair,single,attention,distance)")
    parser.add_argument("--layers", default="all", help="'all' (default) or comma-separated layers")
    add_model_args(parser)
    args = parser.parse_args()
    model_dir = bert_base(args)
    lm = load_model(str(model_dir), device="cpu", dtype="float32")
    layers = "all" if args.layers == "all" else [int(k) for k in args.layers.split(",")]
    sentences = [s.words for s in read_corpus(PUD, limit=args.sentences)]
    load = os.getloadavg()
    rows = []
    for item in args.probes.split(","):
        probe, _, metric = item.strip().partition(":")
        rows.append(run_probe(lm, sentences, probe, metric or None, layers))
    pair = next((r for r in rows if r["probe"] == "pair"), rows[0])
    print(f"{len(sentences)} PUD sentences, {sum(map(len, sentences))} words, bert-base-sized random model, float32, "
          f"layers {args.layers}, {args.threads} threads, {platform.processor() or platform.machine()}; "
          f"load average before {load[0]:.2f}, after {os.getloadavg()[0]:.2f}")
    print("| probe | sequences | expected | tokens | seconds | tokens/s | seconds vs pair | sequences vs pair |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        rate = r["tokens"] / r["seconds"] if r["seconds"] else 0.0
        print(f"| {r['probe']} | {r['sequences']} | {r['expected_sequences']} | {r['tokens']} | {r['seconds']:.2f} | "
              f"{rate:.0f} | {r['seconds'] / pair['seconds']:.4f} | {r['sequences'] / pair['sequences']:.4f} |")
    print(json.dumps({"rows": rows, "threads": args.threads, "load_before": load[0],
                      "load_after": os.getloadavg()[0]}))


if __name__ == "__main__":
    main()
