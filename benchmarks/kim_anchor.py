"""pmask's ``--probe distance --decoder distance-split --faithful`` against Kim et al. 2020's code, head for head.

Usage (from the repository root, with pmask's environment; never run in CI):

    python benchmarks/kim_anchor.py --model MODEL_DIR --max-words 10 --bias 1.5 \\
        [--anchor ANCHOR] --work RUN_DIR [--limit N]

``--anchor`` holds the authors' checkout (github.com/galsang/trees_from_transformers at commit a820f34)
and a virtual environment ``venv/`` (torch, transformers 4.x, nltk, tqdm; their pins, transformers
2.2.0 and torch 1.3.1, do not install on current Python). Their ``run.py`` is patched in the anchor
copy (``patch`` below, idempotent) in three places only: ``from transformers import *`` names the
classes it uses (the wildcard import needs every vision dependency of transformers 4.x), the
hard-coded hub model list becomes the model named by ``KIM_MODEL``, and every sentence's distances
and predicted spans are appended to ``KIM_DUMP`` (JSON lines). Their ``Dataset`` compares
lower-cased pieces with the words as written, which fails on any capital letter with an uncased
tokenizer, so the PTB lines are lower-cased for an uncased model (the model input is the same:
the tokenizer lower-cases anyway).

Compared for every layer and measure (``cos``, ``l1``, ``l2``; ``jsd`` and ``hellinger`` of every head and
their ``avg_`` means over heads): the adjacent-word distances (their ``syn_dists``, after pooling)
and the trees of their ``parser`` with the bias λ against pmask's ``distance-split``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PTB = "data/ptb-sample/combined"

PATCH_MODELS = ("MODELS = [(BertModel, BertTokenizer, BertConfig, os.environ['KIM_MODEL'])]  # pmask anchor patch\n"
                "_ORIGINAL_MODELS = [")
PATCH_DUMP = ("                measure.scores[m].update(pred_spans, gold_spans, gold_tags)\n"
              "                DUMP.setdefault(m, (syn_dists[m].tolist(), pred_spans))  # pmask anchor patch\n")



def resolved_impact(probe, **given):
    """The impact settings a run of ``probe`` with ``given`` resolves to (no model's recorded defaults)."""
    from pmask.pipeline.request import Request, resolve

    return resolve(Request.build(model="a-model", probe=probe, **given)).impact

def patch(code: Path) -> None:
    path = code / "run.py"
    text = path.read_text()
    if "pmask anchor patch" in text:
        return
    text = text.replace("MODELS = [", PATCH_MODELS, 1)
    text = text.replace("            for m, d in syn_dists.items():\n",
                        "            DUMP = {}\n            for m, d in syn_dists.items():\n", 1)
    text = text.replace("                measure.scores[m].update(pred_spans, gold_spans, gold_tags)\n", PATCH_DUMP, 1)
    marker = "                measure.scores[m].update(pred_spans, gold_spans, gold_tags)\n"
    at = text.index(marker) + len(marker) + len(PATCH_DUMP) - len(marker)
    text = (text[:at] + "            with open(os.environ['KIM_DUMP'], 'a') as _f:  # pmask anchor patch\n"
            "                _f.write(json.dumps({'words': raw_tokens, 'dists': DUMP}) + '\\n')\n" + text[at:])
    text = text.replace("import argparse\n", "import argparse\nimport json\n", 1)
    text = text.replace("from transformers import *\n",    # its wildcard import needs every vision dependency today
                        "from transformers import (BertModel, BertTokenizer, BertConfig, GPT2Model, GPT2Tokenizer, "
                        "GPT2Config, RobertaModel, RobertaTokenizer, RobertaConfig, XLNetModel, XLNetTokenizer, "
                        "XLNetConfig)  # pmask anchor patch\n", 1)
    path.write_text(text)
    print(f"patched {path}: model from KIM_MODEL, per-sentence dump to KIM_DUMP")


def slow_model_dir(model: Path, into: Path) -> None:
    """``into``: the model's files, plus the ``vocab.txt`` their slow ``BertTokenizer`` needs when the model
    ships only a fast ``tokenizer.json`` (its WordPiece vocabulary in id order)."""
    into.mkdir(parents=True, exist_ok=True)
    for f in model.iterdir():
        target = into / f.name
        if not target.exists():
            target.symlink_to(f)
    if not (into / "vocab.txt").exists():
        vocab = json.loads((model / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
        (into / "vocab.txt").write_text("".join(t + "\n" for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])),
                                        encoding="utf-8")


def spans_of(tree) -> set[tuple[int, int]]:
    from pmask.corpora.brackets import spans

    return {(a, b - 1) for a, b in spans(tree) if b - a >= 2}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, type=Path, help="a BERT folder, or 'tiny-random' (as distortion_anchor)")
    ap.add_argument("--max-words", type=int, default=None)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--bias", type=float, default=0.0)
    ap.add_argument("--anchor", type=Path, default=ROOT.parent / "anchors" / "kim",
                    help="the authors' checkout and venv (default: ../anchors/kim beside the checkout)")
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--shared", type=Path, default=Path(os.environ.get("PMASK_SHARED", ROOT.parent / "shared")))
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT.parent))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    os.environ["HF_HUB_OFFLINE"] = "1"
    import torch

    from pmask.corpora import read_corpus
    from pmask.perturb.models.load import load_model
    from pmask.perturb.probes import probe_matrices
    from pmask.trees.distance_split import adjacent_distances, distance_split

    from distortion_anchor import tiny_random_bert

    torch.set_num_threads(args.threads)
    args.work.mkdir(parents=True, exist_ok=True)
    patch(args.anchor)
    if str(args.model) == "tiny-random":
        from pmask.perturb.testing import BERT_BASE_VOCAB_IN_SHARED

        args.model = tiny_random_bert(args.work / "tiny-random", args.shared / BERT_BASE_VOCAB_IN_SHARED)
    sentences = [s for s in read_corpus(args.shared / PTB, max_words=args.max_words, limit=args.limit)
                 if len(s.words) >= 2]                                   # their run.py skips shorter ones
    lm = load_model(str(args.model), device="cpu", dtype="float32", threads=args.threads)
    lower = bool(getattr(lm.tokenizer, "do_lower_case", False)) or lm.tokenizer("A")["input_ids"] == \
        lm.tokenizer("a")["input_ids"]
    gold = args.work / "ptb.txt"
    gold.write_text("".join((s.tree.pformat(margin=10**9).lower() if lower else s.tree.pformat(margin=10**9)) + "\n"
                            for s in sentences))
    link = args.work / "bert-anchor"             # their group_indices reads the model family from the name
    slow_model_dir(args.model.resolve(), link)
    dump = args.work / "dump.jsonl"
    dump.unlink(missing_ok=True)
    env = dict(os.environ, KIM_MODEL="bert-anchor", KIM_DUMP=str(dump), OMP_NUM_THREADS=str(args.threads),
               PYTHONPATH=str(args.anchor), CUDA_VISIBLE_DEVICES="")
    started = time.perf_counter()
    subprocess.run([str(args.anchor / "venv" / "bin" / "python"), str(args.anchor / "run.py"), "--data-path", str(gold),
                    "--result-path", str(args.work / "outputs"), "--lm-cache-path", str(args.work / "cache"),
                    "--bias", str(args.bias), "--gpu", "-1"], cwd=args.work, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds_theirs = time.perf_counter() - started
    theirs = [json.loads(line) for line in dump.read_text().splitlines()]
    assert len(theirs) == len(sentences), (len(theirs), len(sentences))

    L = lm.num_layers
    started = time.perf_counter()
    words = [s.words for s in sentences]
    ours = {m: list(probe_matrices(lm, words, resolved_impact("distance", metric=m, tokenize="bare"), layers="all"))
            for m in ("cossim", "l1", "l2", "jsd", "hellinger")}
    seconds_ours = time.perf_counter() - started
    names = {"cos": "cossim", "l1": "l1", "l2": "l2", "jsd": "jsd", "hellinger": "hellinger",
             "avg_jsd": "jsd", "avg_hellinger": "hellinger"}
    worst: dict[str, float] = {}
    differ: dict[str, int] = {}
    trees = 0
    for k, (s, their) in enumerate(zip(sentences, theirs)):
        for m, (dists, pred) in their["dists"].items():
            F = ours[names[m]][k]                            # [L, n, n] or [L, H, n, n]
            if m in ("jsd", "hellinger"):
                F = F.reshape(-1, *F.shape[-2:])             # layer-major over heads, as their view(-1, ...)
            elif m.startswith("avg_"):
                F = F.mean(axis=1, dtype=np.float64)
            for i, (d_theirs, spans_theirs) in enumerate(zip(dists, pred)):
                d = adjacent_distances(F[i], distance=True)
                scale = max(np.abs(d_theirs).max(), 1e-30)
                worst[m] = max(worst.get(m, 0.0), float(np.abs(d - np.asarray(d_theirs)).max() / scale))
                tree = distance_split(list(s.words), d, bias=args.bias)
                want = {tuple(x) for x in spans_theirs}
                differ[m] = differ.get(m, 0) + (spans_of(tree) != want)
                trees += 1
    print(json.dumps({"model": str(args.model), "sentences": len(sentences), "max_words": args.max_words,
                      "limit": args.limit, "bias": args.bias, "layers": L, "trees_compared": trees,
                      "max_relative_difference": worst, "trees_differing": differ,
                      "seconds": {"theirs (every measure, one process)": round(seconds_theirs, 1),
                                  "pmask (five probe runs)": round(seconds_ours, 1)}}, indent=1))


if __name__ == "__main__":
    main()
