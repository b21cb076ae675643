"""Time model loading and the impact engine on the first N PUD sentences with a random
bert-base-sized model (last layer, float32, CPU). Prints one JSON line.

To compare two versions of pmask on the same machine, run it once under each, e.g. with an
older checkout exported by ``git archive`` into OLD/pmask::

    python benchmarks/engine_time.py 4                      # this checkout
    PYTHONPATH=OLD python benchmarks/engine_time.py 4       # the older one
"""
from __future__ import annotations

import argparse
import json
import time

from pmask.corpora import read_corpus
from pmask.perturb.engine.runner import impact_matrices
from pmask.perturb.models.load import load_model

from _bert_base import PUD, add_model_args, bert_base


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sentences", type=int, nargs="?", default=4)
    add_model_args(parser)
    args = parser.parse_args()
    model_dir = bert_base(args)
    t0 = time.perf_counter()
    lm = load_model(str(model_dir), device="cpu")
    load_s = time.perf_counter() - t0
    words = [s.words for s in read_corpus(PUD, limit=args.sentences)]
    t0 = time.perf_counter()
    list(impact_matrices(lm, words, layers=[-1], metric="dist", subword="avg", tokenize="words"))
    print(json.dumps({"sentences": len(words), "load_s": round(load_s, 2),
                      "engine_s": round(time.perf_counter() - t0, 2), "threads": args.threads}))


if __name__ == "__main__":
    main()
