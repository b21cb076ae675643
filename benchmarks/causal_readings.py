"""Which readings of a causal LM recover dependency syntax: SmolLM2-135M (or any causal LM folder) on UD
English PUD, every layer, each matrix decoded by undirected maximum spanning tree (``mst``) and Eisner
(``mst-projective``), scored by UUAS (pmask eval's, every word, punctuation in the tree, oriented to the gold
root) and by Hoover et al.'s UUAS (punctuation left out of the tree and the score), next to connect-adjacent.

Readings (F[i, j] = how word j bears on word i; the engine is :mod:`_causal_engine`):

- ``cpmi``: log p(word i) − log p(word i with word j perturbed), words by the chain rule over their pieces
  (Hoover et al.'s GPT-2 CPMI when the layout is ``plain`` and the perturbation ``hide``); one layer (the head).
- ``moved-avg``, ``moved-last``: how far word i's state moves at layer l when word j is perturbed (mean of its
  pieces' states, or its last piece's).
- ``distance-avg``, ``distance-last``: minus the distance between the clean states of words i and j (Kim et
  al.'s distance on a decoder; no perturbation).
- ``attention``: attention from word i to word j, mean of the heads, per layer (``--heads``: every head too).

Layouts: ``plain`` (begin token, sentence: word j only moves words after it), ``echo`` (the sentence twice,
perturbed in the first copy, read in the second: every word sees both sides), ``echo-both`` (perturbed in
both copies), ``prompt`` (echo inside Springer et al.'s "Rewrite the sentence" template), ``chat`` (echo as a
chat turn: "user / Repeat this sentence: ..." answered by the assistant; the first token should be
``<|im_start|>``, SmolLM2-Instruct's bos). Perturbations:
``hide`` (attention mask), ``delete``, ``replace`` (``--replace-token``).

Every sentence's raw figures are kept under ``--work`` (``<model>/<setting>/<index>.npz``; a rerun reuses
them), so that scoring other decoders or layers needs no model work. Example (the one-sided figures of
docs/llms.md are made this way)::

    python benchmarks/causal_readings.py --start 0 --limit 100 --layouts plain --kinds hide --work WORK
    python benchmarks/causal_readings.py --start 200 --limit 200 --layouts plain,echo --kinds hide,delete \\
        --work WORK --json dev.json
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _causal_engine import KINDS  # noqa: E402
from _causal_scores import READINGS, Scorer, matrices  # noqa: E402

PUD = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "ud" / "UD_English-PUD" / "en_pud-ud-test.conllu"
LAYOUTS = ("plain", "echo", "echo-both", "prompt", "chat")
TEMPLATES = {"prompt": ("Rewrite the sentence: ", "\nRewritten sentence: "),
             "chat": ("user\nRepeat this sentence: ", "<|im_end|>\n<|im_start|>assistant\n")}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conllu", type=Path, default=PUD)
    ap.add_argument("--start", type=int, default=0, help="first sentence (0-based)")
    ap.add_argument("--limit", type=int, default=20, help="how many sentences from --start")
    ap.add_argument("--model", type=Path, default=None, help="a causal LM folder (default: SmolLM2-135M, found or "
                                                             "installed by benchmarks/smollm2.py)")
    ap.add_argument("--cache", type=Path, default=None, help="smollm2.py's cache folder")
    ap.add_argument("--random", type=int, default=None, metavar="SEED", help="the random twin: same config, "
                                                                               "random weights (seed)")
    ap.add_argument("--tokenize", choices=("ptb", "text"), default="ptb",
                    help="ptb: word by word as Hoover et al.'s GPT-2 code; text: the running text, offsets")
    ap.add_argument("--bos", choices=("bos", "eos", "endoftext"), default="bos",
                    help="the first token: the tokenizer's bos (their code), its eos, or <|endoftext|>")
    ap.add_argument("--layouts", default="plain", help=f"comma-separated of {', '.join(LAYOUTS)}")
    ap.add_argument("--kinds", default="hide", help="comma-separated of hide, delete, replace, none (no "
                                                    "perturbation: the distance and attention readings only)")
    ap.add_argument("--replace-token", default="<|endoftext|>", help="the token of --kinds replace")
    ap.add_argument("--heads", action="store_true", help="also score every attention head")
    ap.add_argument("--dev", type=Path, nargs="+", default=None,
                    help="the --json of runs of the same settings on other sentences (merged; with --heads for the "
                         "ensembles): the table adds each reading's figure at the layer best there, and the sums of "
                         "its best 1, 3, 5 and 10 heads (raw and row-normalised attention; a dev setting of kind none "
                         "serves every kind)")
    ap.add_argument("--readings", default=",".join(READINGS), help="comma-separated of " + ", ".join(READINGS))
    ap.add_argument("--decoders", default="mst,mst-projective")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--chunk", type=int, default=8, help="sources per batch")
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--json", type=Path, default=None, help="write every figure here")
    ap.add_argument("--no-compute", action="store_true", help="score only what --work holds")
    args = ap.parse_args(argv)
    for name, allowed in (("layouts", LAYOUTS), ("kinds", KINDS), ("readings", READINGS),
                          ("decoders", ("mst", "mst-projective"))):
        values = getattr(args, name).split(",")
        bad = [v for v in values if v not in allowed]
        if bad:
            ap.error(f"--{name}: unknown {', '.join(bad)} (choose from {', '.join(allowed)})")
        setattr(args, name, values)
    if args.start < 0 or args.limit < 1:
        ap.error("--start must be >= 0 and --limit >= 1")
    return args


def sentences(args: argparse.Namespace) -> list[Any]:
    from pmask.corpora import read_corpus

    return read_corpus(args.conllu, limit=args.start + args.limit)[args.start:]


def model_name(args: argparse.Namespace) -> str:
    base = args.model.name if args.model else "smollm2-135m"
    return base + (f"-random{args.random}" if args.random is not None else "")


def load_model(args: argparse.Namespace) -> tuple[Any, Any]:
    import torch

    torch.set_num_threads(args.threads)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.model is None:
        from smollm2 import load

        model, tokenizer = load(args.cache)
    else:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32).eval()
        tokenizer = AutoTokenizer.from_pretrained(args.model)
    if args.random is not None:
        from smollm2 import random_twin

        model = random_twin(model, args.random)
    return model, tokenizer


def first_token(tokenizer: Any, which: str) -> int:
    if which == "endoftext":
        return int(tokenizer.convert_tokens_to_ids("<|endoftext|>"))
    token = tokenizer.bos_token_id if which == "bos" else tokenizer.eos_token_id
    return int(token)


def layout_of(tokenizer: Any, sentence: Any, name: str, args: argparse.Namespace) -> Any:
    from _causal_engine import echo, plain, ptb_body, text_body

    body, spans = ptb_body(tokenizer, sentence.words) if args.tokenize == "ptb" else text_body(tokenizer, sentence)
    bos = first_token(tokenizer, args.bos)
    if name == "plain":
        return plain(bos, body, spans)
    if name in TEMPLATES:
        before, between = (tokenizer(t, add_special_tokens=False).input_ids for t in TEMPLATES[name])
        return echo(bos, body, spans, before, between)
    return echo(bos, body, spans, [], tokenizer("\n", add_special_tokens=False).input_ids, both=name == "echo-both")


def setting(args: argparse.Namespace, layout: str, kind: str) -> str:
    extra = f"-{args.replace_token}" if kind == "replace" else ""
    return f"{args.tokenize}-{args.bos}-{layout}-{kind}{extra}".replace("/", "_").replace("|", "")


def compute(args: argparse.Namespace, sents: list[Any]) -> dict[str, float]:
    """Fill ``--work`` with every missing sentence's raw figures; returns seconds per setting."""
    from _causal_engine import attention, perturbed_runs
    from tqdm import tqdm

    root = args.work / model_name(args)
    todo = [(layout, kind) for layout in args.layouts for kind in args.kinds]
    missing = [(lk, k) for lk in todo for k in range(len(sents))
               if not (root / setting(args, *lk) / f"{args.start + k}.npz").is_file()]
    if not missing:
        return {}
    model, tokenizer = load_model(args)
    replace_id = int(tokenizer.convert_tokens_to_ids(args.replace_token))
    seconds: dict[str, float] = {}
    for (layout, kind), k in tqdm(missing, desc="sentences", leave=False):
        folder = root / setting(args, layout, kind)
        folder.mkdir(parents=True, exist_ok=True)
        lay = layout_of(tokenizer, sents[k], layout, args)
        began = time.perf_counter()
        runs = perturbed_runs(model, lay, kind, replace_id=replace_id, chunk=args.chunk)
        att = attention(model, lay).astype(np.float32)
        seconds[setting(args, layout, kind)] = seconds.get(setting(args, layout, kind), 0.0) + \
            time.perf_counter() - began
        arrays = {"logp": runs.logp, "logp_without": runs.logp_without, "attention": att,
                  "cost": np.array([runs.forwards, runs.tokens, len(lay.ids)]), "ids": np.array(lay.ids)}
        for pool in runs.moved:
            arrays[f"moved_{pool}"] = runs.moved[pool].astype(np.float32)
            arrays[f"distance_{pool}"] = runs.distance[pool].astype(np.float32)
        partial = folder / f"{args.start + k}.partial.npz"
        np.savez(partial, **arrays)
        partial.replace(folder / f"{args.start + k}.npz")
    return seconds


def raw(args: argparse.Namespace, layout: str, kind: str, count: int) -> Iterator[dict[str, np.ndarray]]:
    folder = args.work / model_name(args) / setting(args, layout, kind)
    for k in range(count):
        path = folder / f"{args.start + k}.npz"
        if not path.is_file():
            raise SystemExit(f"{path}: not computed (run without --no-compute)")
        with np.load(path) as data:
            yield dict(data)


def ensembles(dev: dict[str, Any] | None, key: str, decoder: str) -> dict[str, list[tuple[int, int]]]:
    """The best 1, 3, 5 and 10 heads of setting ``key`` on the dev run (by Hoover UUAS, ``decoder``), raw
    (``heads-topK``) and row-normalised (``rownorm-heads-topK``)."""
    if dev is None or key not in dev["settings"]:
        return {}
    out = {}
    for prefix in ("", "rownorm-"):
        ranked = sorted(((fig[decoder][layer]["hoover"], int(layer), int(name[len(prefix) + 4:]))
                         for name, fig in dev["settings"][key]["readings"].items()
                         if name.startswith(prefix + "head") and decoder in fig for layer in fig[decoder]),
                        reverse=True)
        for k in (1, 3, 5, 10):
            if len(ranked) >= k:
                out[f"{prefix}heads-top{k}"] = [(layer, h) for _, layer, h in ranked[:k]]
    return out


def merged(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Several --json results as one: every setting's readings and decoders, later files adding to earlier ones."""
    out: dict[str, Any] = {"settings": {}}
    for run in runs:
        for key, figures in run["settings"].items():
            readings = out["settings"].setdefault(key, {"readings": {}})["readings"]
            for name, by_decoder in figures["readings"].items():
                readings.setdefault(name, {}).update(by_decoder)
    return out


def score(args: argparse.Namespace, sents: list[Any]) -> dict[str, Any]:
    """Every reading x layer x decoder of every computed setting, and the baselines."""
    out: dict[str, Any] = {"model": model_name(args), "sentences": [args.start, args.start + len(sents)],
                           "settings": {}, "baselines": Scorer(sents).baselines()}
    dev = merged([json.loads(path.read_text(encoding="utf-8")) for path in args.dev]) if args.dev else None
    for layout in args.layouts:
        for kind in args.kinds:
            # the attention and distance readings do not depend on the perturbation: a dev run of kind none serves
            dev_key = setting(args, layout, kind)
            if dev is not None and dev_key not in dev["settings"]:
                dev_key = setting(args, layout, "none")
            chosen = ensembles(dev, dev_key, args.decoders[0])
            scorer = Scorer(sents)
            cost = np.zeros(3)
            for k, data in enumerate(raw(args, layout, kind, len(sents))):
                cost += data["cost"]
                for name, layer, W in matrices(data, args.readings, args.heads, kind != "none", chosen):
                    scorer.add(k, name, layer, W, args.decoders)
            figures = scorer.figures()
            figures["ensembles"] = chosen
            if dev is not None and dev_key in dev["settings"]:
                figures["dev_layer"] = {name: {d: max(layers, key=lambda layer: layers[layer]["hoover"])
                                               for d, layers in by_decoder.items()}
                                        for name, by_decoder in dev["settings"][dev_key]["readings"].items()}
            figures["cost"] = {"forwards_per_sentence": cost[0] / len(sents), "tokens_per_sentence": cost[1] /
                               len(sents), "input_tokens_per_sentence": cost[2] / len(sents)}
            out["settings"][setting(args, layout, kind)] = figures
    return out


def table(result: dict[str, Any], heads: bool = False) -> str:
    """Per setting and reading: best layer (Hoover UUAS), last layer and, with a dev run, the layer best there;
    each decoder; baselines first. Single heads only with ``heads``."""
    lines = [f"model {result['model']}, sentences {result['sentences'][0]}..{result['sentences'][1] - 1}",
             "| setting | reading | decoder | best layer | Hoover UUAS | UUAS | last layer Hoover UUAS | UUAS | "
             "dev layer | Hoover UUAS | UUAS |", "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, fig in result["baselines"].items():
        lines.append(f"| baseline | {name} | | | {fig['hoover']:.2f} | {fig['uuas']:.2f} | | | | | |")
    for key, figures in result["settings"].items():
        for reading, by_decoder in figures["readings"].items():
            if "head" in reading and "top" not in reading and not heads:
                continue
            for decoder, layers in by_decoder.items():
                best = max(layers, key=lambda layer: layers[layer]["hoover"])
                b, e = layers[best], layers[max(layers, key=int)]
                row = (f"| {key} | {reading} | {decoder} | {best} | {b['hoover']:.2f} | {b['uuas']:.2f} | "
                       f"{e['hoover']:.2f} | {e['uuas']:.2f} |")
                chosen = figures.get("dev_layer", {}).get(reading, {}).get(decoder)
                if chosen in layers:
                    row += f" {chosen} | {layers[chosen]['hoover']:.2f} | {layers[chosen]['uuas']:.2f} |"
                lines.append(row + ("" if chosen in layers else " | | |"))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    sents = sentences(args)
    if not args.no_compute:
        seconds = compute(args, sents)
        for key, s in seconds.items():
            print(f"{key}: {s:.1f} s of model work")
    result = score(args, sents)
    print(table(result, args.heads))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
