"""pmask's ``--probe distortion --decoder cky`` against the authors' code (Li & Lu, ACL 2023), in one run.

Usage (from the repository root, with pmask's environment; never run in CI):

    python benchmarks/distortion_anchor.py --model MODEL_DIR --layer 2 --max-words 10 \\
        [--anchor ANCHOR] --work RUN_DIR [--limit N] [--threads 1]

``--anchor`` holds the authors' checkout (``code/``, github.com/jxjessieli/contextual-distortion-parser
at commit 1555a43) and its own virtual environment (``venv/``: torch, transformers 4.x,
scikit-learn, nltk, tqdm). Their code is run unchanged except for one line, patched in the
anchor copy (``--patch`` does it): ``num_batches = int(len(data) / batch_size) + 1`` adds an
empty last batch, which crashes the tokenizer, when the number of inputs is a multiple of the
batch size; it becomes ``-(-len(data) // batch_size)``. Their scripts choose BERT by the substring
``bert-`` in the model name, so the model is linked under a name that holds it.

Steps: the PTB sample's selected sentences (pmask's reader: punctuation, traces and ``$``/``#``
removed, the WSJ10 filter) are written one tree per line, their input format; their
``compute_sub.py``, ``compute_dc.py``, ``compute_move.py`` (``--device cpu``), ``normalize_scores.py``
and ``parse_eval.py`` run in the anchor environment (timed); their pickled scores are converted to
``.npz`` there (pmask reads no pickle); then pmask computes the same charts (timed) and the
script prints the largest differences of the raw per-perturbation scores and of the normalised
chart, the number of differing trees (default and ``faithful`` CKY) and both sentence F1s.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PTB = "data/ptb-sample/combined"

CONVERT = r"""
import pickle, sys, numpy as np
out = {}
for name, path in zip(sys.argv[2::2], sys.argv[3::2]):
    with open(path, 'rb') as f:
        charts = pickle.load(f)
    for k, c in enumerate(charts):
        out[f'{name}/{k}'] = c.numpy()
np.savez(sys.argv[1], **out)
"""



def resolved_impact(probe, **given):
    """The impact settings a run of ``probe`` with ``given`` resolves to (no model's recorded defaults)."""
    from pmask.pipeline.request import Request, resolve

    return resolve(Request.build(model="a-model", probe=probe, **given)).impact

def patch(code: Path) -> None:
    """The one-line fix of the empty last batch, in every script of the anchor copy (idempotent)."""
    for script in ("compute_sub.py", "compute_dc.py", "compute_move.py"):
        path = code / "src" / script
        text = path.read_text()
        fixed = re.sub(r"int\(len\((\w+)\) / batch_size\) \+ 1", r"-(-len(\1) // batch_size)", text)
        if fixed != text:
            path.write_text(fixed)
            print(f"patched {path}: empty last batch")


def write_trees(sentences, path: Path) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for s in sentences:
            f.write(s.tree.pformat(margin=10**9) + "\n")


def run_authors(args, venv_python: str, gold: Path, model_link: Path) -> tuple[float, str]:
    src = args.anchor / "code" / "src"
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), MKL_NUM_THREADS=str(args.threads),
               TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1", PYTHONPATH=str(src))
    common = ["--model_name", str(model_link), "--device", "cpu", "--score_path", "run", "--batch_size",
              str(args.batch_size), "--layer", str(args.layer), "--treebank_path", str(gold)]
    started = time.perf_counter()
    for script in ("compute_sub.py", "compute_dc.py", "compute_move.py"):
        subprocess.run([venv_python, str(src / script), *common], cwd=args.work, env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.perf_counter() - started
    subprocess.run([venv_python, str(src / "normalize_scores.py"), "--layer", str(args.layer), "--score_path", "run"],
                   cwd=args.work, env=env, check=True, stderr=subprocess.DEVNULL)
    out = subprocess.run([venv_python, str(src / "parse_eval.py"),
                          "--score_path", f"normalized_scores/run_{args.layer}",
                          "--pred_tree_path", "run.txt", "--treebank_path", str(gold)],
                         cwd=args.work, env=env, check=True, capture_output=True, text=True).stdout
    scores = args.work / "scores"
    subprocess.run([venv_python, "-c", CONVERT, str(args.work / "theirs.npz"),
                    "sub", str(scores / f"sub_run_{args.layer}"), "dc", str(scores / f"dc_run_{args.layer}"),
                    "move", str(scores / f"move_run_{args.layer}"),
                    "norm", str(args.work / "normalized_scores" / f"run_{args.layer}")],
                   cwd=args.work, env=env, check=True)
    return seconds, out


def tiny_random_bert(path: Path, vocab: Path) -> Path:
    """A tiny random BERT with bert-base-uncased's vocabulary (2 layers, hidden 64, 2 heads, seed 0)."""
    if (path / "config.json").is_file():
        return path
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertTokenizer

    from pmask.perturb.testing import save_model

    path.mkdir(parents=True, exist_ok=True)
    (path / "vocab.txt").write_text(vocab.read_text(encoding="utf-8"), encoding="utf-8")
    tok = BertTokenizer.from_pretrained(str(path), do_lower_case=True, model_max_length=512)
    if len(tok) != 30522:
        raise RuntimeError(f"{path}: tokenizer with {len(tok)} entries, not bert-base-uncased's 30522")
    tok.save_pretrained(str(path))
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(tok), hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=256)
    save_model(BertForMaskedLM(config).eval(), path)
    return path


def their_spans(line: str, n: int) -> set[tuple[int, int]]:
    """Their predicted spans (inclusive ends) as [l, r) spans of ≥ 2 words, the whole sentence included."""
    return {(a, b + 1) for a, b in ast.literal_eval(line) if b > a} | ({(0, n)} if n > 1 else set())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, type=Path,
                    help="a BERT folder, or 'tiny-random' (made in --work: bert-base-uncased's vocabulary, 2 layers)")
    ap.add_argument("--layer", type=int, default=2)
    ap.add_argument("--max-words", type=int, default=None)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--anchor", type=Path, default=ROOT.parent / "anchors" / "distortion",
                    help="the authors' checkout and venv (default: ../anchors/distortion beside the checkout)")
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--shared", type=Path, default=Path(os.environ.get("PMASK_SHARED", ROOT.parent / "shared")))
    ap.add_argument("--skip-authors", action="store_true", help="reuse the authors' results in --work")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT.parent))
    os.environ["HF_HUB_OFFLINE"] = "1"
    import torch

    from pmask.corpora import read_corpus
    from pmask.eval.scores.bracket_score import BracketScore
    from pmask.perturb.models.load import load_model
    from pmask.perturb.probes import probe_matrices
    from pmask.perturb.probes.distortion import sequences
    from pmask.trees.cky import cky, cky_spans, normalise_by_length

    torch.set_num_threads(args.threads)
    args.work.mkdir(parents=True, exist_ok=True)
    patch(args.anchor / "code")
    if str(args.model) == "tiny-random":
        from pmask.perturb.testing import BERT_BASE_VOCAB_IN_SHARED

        args.model = tiny_random_bert(args.work / "tiny-random", args.shared / BERT_BASE_VOCAB_IN_SHARED)
    sentences = read_corpus(args.shared / PTB, max_words=args.max_words, limit=args.limit)
    gold = args.work / "gold.txt"
    write_trees(sentences, gold)
    model_link = args.work / "model-bert-"
    if model_link.is_symlink():
        model_link.unlink()
    model_link.symlink_to(args.model.resolve())
    if not args.skip_authors:
        seconds_theirs, report = run_authors(args, str(args.anchor / "venv" / "bin" / "python"), gold, model_link)
        (args.work / "their_report.txt").write_text(report)
        (args.work / "their_seconds.txt").write_text(f"{seconds_theirs}\n")
    report = (args.work / "their_report.txt").read_text()
    seconds_theirs = float((args.work / "their_seconds.txt").read_text())
    theirs = np.load(args.work / "theirs.npz")
    their_lines = (args.work / "pred_spans" / "run.txt").read_text().splitlines()
    their_f1 = float(re.search(r"sentence F1:\s+(\S+)", report).group(1)) * 100

    lm = load_model(str(args.model), device="cpu", dtype="float32", threads=args.threads)
    words = [s.words for s in sentences]
    started = time.perf_counter()
    charts = {"all": [c[0] for c in probe_matrices(lm, words, resolved_impact("distortion", metric="all"),
                                                   layers=[args.layer])]}
    seconds_ours = time.perf_counter() - started
    for metric in ("sub", "dc", "move"):
        charts[metric] = [c[0] for c in probe_matrices(lm, words, resolved_impact("distortion", metric=metric),
                                                       layers=[args.layer])]

    worst: dict[str, float] = {}
    for metric in ("sub", "dc", "move"):
        worst[metric] = max(float(np.abs(ours - theirs[f"{metric}/{k}"]).max()
                                  / max(np.abs(theirs[f"{metric}/{k}"]).max(), 1e-30))
                            for k, ours in enumerate(charts[metric]))
    worst["normalised"] = max(float(np.abs(normalise_by_length(ours) - theirs[f"norm/{k}"]).max())
                              for k, ours in enumerate(charts["all"]))
    differ = {"default": 0, "faithful": 0}
    scores = {"default": BracketScore(), "faithful": BracketScore()}
    for k, (s, chart) in enumerate(zip(sentences, charts["all"])):
        want = their_spans(their_lines[k], len(s.words))
        for mode in differ:
            got = set(cky_spans(normalise_by_length(chart), faithful=mode == "faithful"))
            differ[mode] += got != want
            scores[mode].add(cky(chart, s.words, faithful=mode == "faithful"), s.tree, s.id)
    n_seq = sum(sequences(len(w)) for w in words)
    their_seq = sum(2 * len(w) * (len(w) + 1) + 3 for w in words)
    print(json.dumps({
        "model": str(args.model), "layer": args.layer, "sentences": len(sentences), "max_words": args.max_words,
        "limit": args.limit, "max_relative_difference": worst,
        "trees_differing": differ, "sentence_f1": {"theirs": their_f1, "pmask": scores["default"].f1_sentence,
                                                   "pmask_faithful": scores["faithful"].f1_sentence},
        "sequences": {"pmask": n_seq, "theirs": their_seq},
        "seconds": {"theirs": round(seconds_theirs, 1), "pmask": round(seconds_ours, 1),
                    "speed-up": round(seconds_theirs / seconds_ours, 2)},
        "threads": args.threads}, indent=1))


if __name__ == "__main__":
    main()
