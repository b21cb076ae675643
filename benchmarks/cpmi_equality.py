"""pmask's CPMI (``--faithful --metric cpmi``) against Hoover et al.'s code, head for head, and their relative cost.

Runs ``tools/cpmi_authors.py`` under the authors' environment (see its docstring) unless
``--authors JSON`` gives its output, computes the same sentences with pmask (float32, batched,
tokenisation ``words-ptb``, ``--context`` = their ``--pad``), then compares:

- the matrices (largest absolute difference, and relative to the largest value);
- the trees: for absolute value or not × symmetrisation sum/triu/tril/none × projective
  (``mst-projective``) or not (``mst``), the undirected edges between non-punctuation words,
  sentence by sentence;
- their UUAS (pooled and per-sentence mean, :mod:`pmask.eval.scores.hoover_uuas`) from pmask's trees
  against their own counts.

Prints one table and exits 1 on any difference beyond ``--atol``. Example:

    python benchmarks/cpmi_equality.py --model models/pmask-tiny-en --n 100 --pad 0 \\
        --authors-python ANCHOR/venv/bin/python --authors-repo ANCHOR/src

ANCHOR (the authors' environment and code, made as ``tools/cpmi_authors.py`` says) defaults to
``../anchors/cpmi`` beside the checkout (as the data is ``../shared``); ``--conllu`` to UD English
PUD under ``../shared/data``.

Every family of theirs: ``--family bert|xlm|bart|xlnet|gpt2`` picks their class (default: from the model's
``config.json``, as ``tools/cpmi_authors.py`` does); tiny random models of each are made by
``tools/tiny_cpmi_models.py``. ``--reference`` also computes the tests' naive float64 reference of their
reading (``tests/cpmi_reference.py``, one model call per input, run here under pmask's transformers) on the
same sentences and prints its largest difference to their matrices and how many of their inputs it rebuilt
token for token. ``--max-words W`` keeps the first N sentences of at most W words, ``--index I,J,..`` the
sentences at those positions of the file (both sides; context still comes from the file's neighbours).
Where pmask cannot read the family yet (it refuses the model), the pmask side is reported in one line
and the rest is still compared:

    python benchmarks/cpmi_equality.py --model TINY/gpt2 --n 6 --max-words 10 --reference
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

from pmask.common.errors import PmaskError
from pmask.corpora import read_corpus
from pmask.eval.scores.hoover_uuas import corpus_uuas, predicted_edges, sentence_uuas
from pmask.perturb.alignment import ptb_align
from pmask.perturb.engine.impact_settings import ImpactSettings
from pmask.perturb.engine.stats import ImpactStats
from pmask.perturb.fill.compute import iter_impacts
from pmask.perturb.models.load import load_model
from pmask.trees.eisner import eisner_core
from pmask.trees.registry import DecodeInput, decode
from pmask.trees.undirected import ROOT_SCORE, max_spanning_tree, symmetrize

ROOT = Path(__file__).resolve().parents[1]
PUD = ROOT.parent / "shared" / "data" / "ud" / "UD_English-PUD" / "en_pud-ud-test.conllu"
ANCHOR = ROOT.parent / "anchors" / "cpmi"   # the authors' venv/ and src/, beside the checkout
KINDS = {"projective": "mst-projective", "nonproj": "mst"}
MODES = ("sum", "triu", "tril", "none")


def authors(args: argparse.Namespace) -> dict:
    if args.authors:
        return json.loads(Path(args.authors).read_text())
    tag = f"{args.family or 'auto'}-n{args.n}-pad{args.pad}" + (f"-w{args.max_words}" if args.max_words else "")
    tag += f"-i{args.index.replace(',', '_')}" if args.index else ""
    out = Path(args.workdir) / f"authors-{Path(args.model).name}-{tag}.json"
    cmd = [args.authors_python, str(Path(__file__).resolve().parents[1] / "tools" / "cpmi_authors.py"),
           "--repo", args.authors_repo, "--model", str(Path(args.model).resolve()), "--conllu", args.conllu,
           "--n", str(args.n), "--pad", str(args.pad), "--threads", str(args.threads), "-o", str(out)]
    if args.family:
        cmd += ["--family", args.family]
    if args.max_words:
        cmd += ["--max-words", str(args.max_words)]
    if args.index:
        cmd += ["--index", args.index]
    if args.head_at_target:
        cmd.append("--head-at-target")
    subprocess.run(cmd, check=True)
    return json.loads(out.read_text())


def chosen_sentences(args: argparse.Namespace) -> list:
    """The sentences both sides read: the first ``--n``, of at most ``--max-words`` words if given, or ``--index``."""
    if args.index:
        every = read_corpus(args.conllu)
        return [every[int(i)] for i in args.index.split(",")]
    if not args.max_words:
        return read_corpus(args.conllu, limit=args.n)
    return [s for s in read_corpus(args.conllu) if len(s.words) <= args.max_words][:args.n]


def reference(args: argparse.Namespace, family: str, theirs: dict) -> tuple[float, int]:
    """The tests' naive reference (float64) on their sentences: its largest |difference| to their matrices
    and how many of their inputs (token ids, piece positions) it rebuilt exactly."""
    sys.path.insert(0, str(ROOT / "tests"))
    from cpmi_reference import authors_layout, authors_log_p, cpmi_from_log_p, reference_model

    tokenizer, model = reference_model(family, args.model)
    worst, same = 0.0, 0
    for t in theirs["sentences"]:
        layout = authors_layout(family, tokenizer, t["words"], *t.get("context", ([], [])))
        same += t.get("layout") == {"input_ids": layout.input_ids, "spans": [list(s) for s in layout.spans]}
        F = cpmi_from_log_p(authors_log_p(family, model, layout, getattr(tokenizer, "mask_token_id", None)))
        worst = max(worst, float(np.abs(F - np.asarray(t["matrix"])).max()))
    return worst, same


def pmask_matrices(args: argparse.Namespace, sentences: list) -> tuple[list[np.ndarray], float, ImpactStats, int]:
    """pmask's matrices, seconds, counters, and the sequences their scheme runs (n x pieces per sentence)."""
    torch.set_num_threads(args.threads)
    lm = load_model(args.model, dtype="float32")
    impact = ImpactSettings("cpmi", "sum", "words-ptb", "pair", args.pad)
    stats = ImpactStats()
    t0 = time.perf_counter()
    out = [F[0] for _, F in iter_impacts(lm, sentences, layers=[-1], impact=impact, progress=False, stats=stats)]
    seconds = time.perf_counter() - t0
    theirs = sum(len(s.words) * sum(len(ptb_align(lm.tokenizer, s.words).pieces(k)) for k in range(len(s.words)))
                 for s in sentences)
    return out, seconds, stats, theirs


def _score_gap(mine: np.ndarray, theirs: np.ndarray, keep: list[bool], projective: bool) -> float:
    """How much worse pmask's tree (decoded from ``mine``) scores than their tree under ``theirs``
    (symmetrized matrices): 0 for the same tree, tiny for a near-tie that float rounding decided."""
    if not projective:
        def weight(M: np.ndarray) -> float:
            pair = np.maximum(M, M.T)
            return float(sum(pair[a, b] for a, b in max_spanning_tree(M, keep)))
        best = weight(theirs)
        pair = np.maximum(theirs, theirs.T)
        return best - float(sum(pair[a, b] for a, b in max_spanning_tree(mine, keep)))
    index = np.flatnonzero(keep)

    def scores(M: np.ndarray) -> np.ndarray:
        out = np.zeros((len(index) + 1,) * 2)
        out[1:, 1:] = M[np.ix_(index, index)]
        out[0, :] = ROOT_SCORE
        return out

    def total(heads: list[int], S: np.ndarray) -> float:
        return float(sum(S[h, d] for d, h in enumerate(heads) if d))

    S = scores(theirs)
    return (total(eisner_core(S, single_root=False).tolist(), S)
            - total(eisner_core(scores(mine), single_root=False).tolist(), S))


def compare(args: argparse.Namespace) -> int:
    sentences = chosen_sentences(args)
    theirs = authors(args)
    family = theirs.get("family", args.family or "bert")
    print(f"model {args.model} (their {theirs.get('class', 'BERT')}), {len(sentences)} sentences, context {args.pad}")
    failures = 0
    scale = max(float(np.abs(np.asarray(t["matrix"])).max()) for t in theirs["sentences"])
    if args.reference:
        ref_worst, same = reference(args, family, theirs)
        print(f"reference (tests/cpmi_reference.py, float64): largest |difference| to theirs {ref_worst:.3g} "
              f"(largest |CPMI| {scale:.3g}); their input rebuilt in {same}/{len(theirs['sentences'])} sentences")
        rebuilt = "layout" not in theirs["sentences"][0] or same == len(theirs["sentences"])
        failures += int(ref_worst > args.atol) + int(not rebuilt)
    try:
        mine, seconds, stats, their_sequences = pmask_matrices(args, sentences)
    except PmaskError as error:
        print(f"pmask: {error}")
        return failures
    if "sequences" in theirs["sentences"][0]:
        their_sequences = sum(t["sequences"] for t in theirs["sentences"])
    worst = max(float(np.abs(a - np.asarray(t["matrix"])).max()) for a, t in zip(mine, theirs["sentences"]))
    scale = max(float(np.abs(a).max()) for a in mine)
    print(f"pmask: largest |difference| {worst:.3g} (largest |CPMI| {scale:.3g})")
    print(f"sequences per sentence: pmask {stats.forward_sequences / len(sentences):.1f}, "
          f"theirs {their_sequences / len(sentences):.1f}")
    kind = "head at target" if theirs.get("head_at_target") else "unpatched"
    print(f"pmask: {seconds:.2f} s, {stats.forward_sequences} sequences; theirs: {theirs['matrix_seconds']:.2f} s "
          f"({kind}) -> {theirs['matrix_seconds'] / seconds:.1f}x")
    failures += int(worst > args.atol)
    if "plain" not in theirs["sentences"][0]:
        return failures
    print("| absolute | decoder | symmetrize | trees equal | largest score gap | pmask UUAS pooled / mean | "
          "theirs pooled / mean |")
    print("|---|---|---|---:|---:|---:|---:|")
    for absolute in (False, True):
        key = "abs" if absolute else "plain"
        for kind, decoder in KINDS.items():
            for mode in MODES:
                equal, mine_scores, their_common, their_gold, their_values, gap = 0, [], 0, 0, [], 0.0
                for s, F, t in zip(sentences, mine, theirs["sentences"]):
                    heads = decode(decoder, DecodeInput(words=s.words, F=F, root=None, faithful=True,
                                                        keep=[u != "PUNCT" for u in s.upos], symmetrize=mode,
                                                        absolute=absolute))
                    theirs_edges = {tuple(sorted(e)) for e in t[key][kind]["edges"][mode]}
                    if predicted_edges(heads, s.upos) == theirs_edges:
                        equal += 1
                    else:
                        keep = [u != "PUNCT" for u in s.upos]
                        gap = max(gap, _score_gap(symmetrize(F, mode, absolute),
                                                  symmetrize(np.asarray(t["matrix"]), mode, absolute), keep,
                                                  kind == "projective"))
                    mine_scores.append(sentence_uuas(heads, s.heads, s.upos))
                    their_common += t[key][kind]["n_common"][mode]
                    their_gold += t[key]["number_edges"]
                    if t[key][kind]["uuas"][mode] is not None:
                        their_values.append(t[key][kind]["uuas"][mode])
                pooled, mean = corpus_uuas(mine_scores)
                their_pooled, their_mean = their_common / their_gold, float(np.mean(their_values))
                same = equal == len(sentences) and abs(pooled - their_pooled) < 1e-12 and abs(mean - their_mean) < 1e-12
                failures += not same
                print(f"| {absolute} | {decoder} | {mode} | {equal}/{len(sentences)} | {gap:.2g} | "
                      f"{pooled:.4f} / {mean:.4f} | "
                      f"{their_pooled:.4f} / {their_mean:.4f} |")
    return failures


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--conllu", default=str(PUD))
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--pad", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--atol", type=float, default=1e-3)
    ap.add_argument("--authors", default=None, help="a JSON written by tools/cpmi_authors.py")
    ap.add_argument("--authors-python", default=str(ANCHOR / "venv" / "bin" / "python"))
    ap.add_argument("--authors-repo", default=str(ANCHOR / "src"))
    ap.add_argument("--head-at-target", action="store_true", help="their code with the MLM head at the read only")
    ap.add_argument("--family", choices=["bert", "xlm", "bart", "xlnet", "gpt2"], default=None,
                    help="their class (default: from the model's config.json)")
    ap.add_argument("--max-words", type=int, default=0, help="only sentences of at most this many words")
    ap.add_argument("--index", default="", help="these sentences (0-based positions in the file, comma-separated) "
                                                 "instead of --n and --max-words")
    ap.add_argument("--reference", action="store_true",
                    help="also the tests' naive float64 reference (tests/cpmi_reference.py) against their matrices")
    ap.add_argument("--workdir", default=".")
    args = ap.parse_args()
    failures = compare(args)
    print("equal" if not failures else f"{failures} differences", file=sys.stderr)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
