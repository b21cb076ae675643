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
import os
import time
from pathlib import Path

import torch

from pmask.corpora import read_corpus
from pmask.perturb import impact_matrices, load_model
from pmask.perturb.testing import make_random_bert_base

PUD = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "ud" / "UD_English-PUD" / "en_pud-ud-test.conllu"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sentences", type=int, nargs="?", default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--model-dir", type=Path, default=Path("/tmp/pmask-bert-base-random"))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if not (args.model_dir / "config.json").is_file():
        make_random_bert_base(args.model_dir)
    t0 = time.perf_counter()
    lm = load_model(str(args.model_dir), device="cpu")
    load_s = time.perf_counter() - t0
    words = [s.words for s in read_corpus(PUD, limit=args.sentences)]
    t0 = time.perf_counter()
    list(impact_matrices(lm, words, layers=[-1]))
    print(json.dumps({"sentences": len(words), "load_s": round(load_s, 2),
                      "engine_s": round(time.perf_counter() - t0, 2), "threads": args.threads}))


if __name__ == "__main__":
    main()
