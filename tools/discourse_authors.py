"""Run Wu et al.'s discourse probe (github.com/LividWo/Perturbed-Masking) on SciDTB, for comparison with pmask.

Not part of pmask and never run in CI; it does not import pmask. It runs under the authors' own
environment (their code uses ``BertModel``/``BertTokenizer`` of transformers 2.x-4.x), e.g. a
virtual environment made with

    python3 -m venv ANCHOR/venv
    ANCHOR/venv/bin/pip install torch==2.13.0      # the local CPU wheel, first and pinned
    ANCHOR/venv/bin/pip install torch==2.13.0 transformers==4.27.4 "numpy<2" tqdm safetensors
    git --git-dir=<mirror of LividWo/Perturbed-Masking> archive HEAD | tar -x -C ANCHOR/code

and is run with that venv's python::

    python tools/discourse_authors.py --repo ANCHOR/code --model MODEL_DIR \\
        --data ../shared/data/scidtb/test/gold -o OUT_DIR

MODEL_DIR is a local BERT folder that ``BertModel`` and the slow ``BertTokenizer`` load (so it
needs ``vocab.txt``). Each step runs in its own python process (this script calling itself with
``--step``), timed by wall clock as a whole process:

1. ``matrix``: their ``discourse.get_matrix_for_dis_probe.get_dis_matrix`` (metric ``dist``, last
   layer, CPU), called as their ``__main__`` does, except that the model and tokenizer are loaded
   from MODEL_DIR instead of ``bert-base-uncased`` (``from_pretrained(MODEL_DIR,
   output_hidden_states=True)`` and ``from_pretrained(MODEL_DIR, do_lower_case=True)``). A forward
   pre-hook (which changes nothing) counts the model's inputs and pieces. Writes their pickle.
2. ``parse`` (once per decoder: eisner, cle, right_chain, left_chain): their module
   ``discourse.dis_parsing`` run unchanged as ``__main__`` (``runpy``) with ``--matrix PICKLE
   --decoder D --root gold``; it prints their ``evaluation`` and ``distance_evaluation``.

The orchestrating process then converts their pickle (inside this venv) into OUT_DIR:
``matrices.npz`` (each document's full matrix before their cut, float64, keyed by file name: their
code reads ``os.listdir`` order, recorded here), ``gold.json`` (``{file: [[id, parent], ...]}``,
node 0 included as ``[0, -1]``), ``trees-<decoder>.json`` (``{file: [[dependent, head], ...]}`` as
their decoder returns it, node 0 included), ``stdout-<step>.txt`` (their raw printouts) and
``summary.json`` (UAS/UUAS and the distance table per decoder as printed, inputs and pieces,
timings). ``--fix-attention-mask`` is a deliberate deviation, for comparison only: their call
``model(tokens, segments)`` passes the all-zero segment ids as ``attention_mask`` (the second
positional argument of ``BertModel.forward``); with it, they are passed as ``token_type_ids`` and
the attention mask is left at its default (all ones). Why it matters: under transformers 2.5.1
(their requirements) an all-zero mask adds -10000 to every score, which softmax ignores (normal
attention, which ``--fix-attention-mask`` reproduces to ~2e-4 relative); under 4.27.4 it adds
``finfo.min`` (uniform attention); under 5.x (sdpa) no position attends to any other and every
matrix is exactly 0 (see ``docs/discourse.md``).
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import runpy
import subprocess
import sys
import time
from pathlib import Path

DECODERS = ("eisner", "cle", "right_chain", "left_chain")
PICKLE = "bert-dist-SciDTB-last.pkl"  # their args.output_file.format('bert', 'dist', 'SciDTB', 'last')


def _step_matrix(args: argparse.Namespace) -> None:
    import torch
    from transformers import BertModel, BertTokenizer

    if args.threads:
        torch.set_num_threads(args.threads)
    sys.path.insert(0, str(args.repo))
    from discourse.get_matrix_for_dis_probe import get_dis_matrix  # theirs, from --repo

    work = args.output / "work"
    their = argparse.Namespace(model_type="bert", layers="12", data_split="SciDTB", dataset=args.data,
                               output_dir=str(work) + "/", metric="dist", cuda=False, probe="discourse")
    their.output_file = their.output_dir + "/{}-{}-{}-{}.pkl"
    os.makedirs(their.output_dir, exist_ok=True)
    model = BertModel.from_pretrained(str(args.model), output_hidden_states=True)
    tokenizer = BertTokenizer.from_pretrained(str(args.model), do_lower_case=True)
    shapes: list[list[int]] = []
    model.register_forward_pre_hook(lambda module, inputs: shapes.append(list(inputs[0].shape)))
    if args.fix_attention_mask:
        forward = model.forward
        model.forward = lambda input_ids, segments: forward(input_ids=input_ids, token_type_ids=segments)
    print(their)
    files = os.listdir(args.data)  # the order their Corpus reads (same directory, same process)
    get_dis_matrix(their, model, tokenizer)
    (work / "matrix-meta.json").write_text(json.dumps({
        "files": files, "batch_shapes": shapes, "torch_threads": torch.get_num_threads(),
        "torch": torch.__version__, "transformers": __import__("transformers").__version__,
        "fix_attention_mask": args.fix_attention_mask}))


def _step_parse(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(args.repo))
    sys.argv = ["dis_parsing.py", "--matrix", str(args.output / "work" / PICKLE), "--decoder", args.decoder,
                "--root", "gold"]
    namespace = runpy.run_module("discourse.dis_parsing", run_name="__main__")  # theirs, unchanged
    trees = [[[int(d), int(h)] for d, h in tree] for tree in namespace["trees"]]
    (args.output / "work" / f"trees-{args.decoder}.json").write_text(json.dumps(trees))


def _run_step(args: argparse.Namespace, name: str, extra: list[str]) -> float:
    cmd = [sys.executable, __file__, "--repo", str(args.repo), "--model", str(args.model), "--data", args.data,
           "-o", str(args.output), "--threads", str(args.threads), *extra]
    if args.fix_attention_mask:
        cmd.append("--fix-attention-mask")
    started = time.perf_counter()
    with open(args.output / f"stdout-{name}.txt", "w") as out, open(args.output / f"stderr-{name}.txt", "w") as err:
        rc = subprocess.run(cmd, stdout=out, stderr=err, env={**os.environ, "HF_HUB_OFFLINE": "1"}).returncode
    seconds = time.perf_counter() - started
    if rc:
        sys.exit(f"step {name} failed (rc {rc}): see {args.output}/stderr-{name}.txt")
    print(f"{name}: {seconds:.1f} s", file=sys.stderr)
    return seconds


def _scores(text: str) -> dict:
    """Their printouts: evaluation's three lines, then distance_evaluation's table and overall accuracy."""
    lines = text.strip().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("UAS, UUAS:"))
    uas, uuas = map(float, lines[at].split(":")[1].split())
    correct, total = map(float, lines[at + 1].split()[-2:])
    table = []
    for line in lines[at + 3:-1]:
        distance, accuracy, count = line.split("\t")
        table.append({"distance": int(distance), "accuracy": float(accuracy), "count": int(count)})
    return {"uas": uas, "uuas": uuas, "correct": correct, "total": total,
            "remove_root_acc": float(lines[at + 2].split(":")[1]), "distance_table": table,
            "distance_overall": float(lines[-1])}


def _orchestrate(args: argparse.Namespace) -> None:
    import numpy as np

    args.output.mkdir(parents=True, exist_ok=True)
    timings = {"matrix": _run_step(args, "matrix", ["--step", "matrix"])}
    work = args.output / "work"
    meta = json.loads((work / "matrix-meta.json").read_text())
    with open(work / PICKLE, "rb") as f:
        results = pickle.load(f)
    files = meta["files"]
    if len(files) != len(results):
        sys.exit(f"{len(files)} files but {len(results)} matrices")
    np.savez_compressed(args.output / "matrices.npz",
                        **{name: np.asarray(matrix, dtype=np.float64) for name, (_, matrix) in zip(files, results)})
    gold = {name: [[int(edu["id"]), int(edu["parent"])] for edu in tree] for name, (tree, _) in zip(files, results)}
    (args.output / "gold.json").write_text(json.dumps(gold))
    summary = {"model": str(args.model), "data": args.data, "repo": str(args.repo),
               "fix_attention_mask": args.fix_attention_mask, "files_in_order": files,
               "documents": len(files), "inputs": sum(s[0] for s in meta["batch_shapes"]),
               "forward_calls": len(meta["batch_shapes"]),
               "pieces_per_input_max": max(s[1] for s in meta["batch_shapes"]),
               "pieces_total": sum(s[0] * s[1] for s in meta["batch_shapes"]),
               "torch": meta["torch"], "transformers": meta["transformers"], "torch_threads": meta["torch_threads"],
               "decoders": {}, "timings_s": timings}
    summary["pieces_per_input_mean"] = summary["pieces_total"] / summary["inputs"]
    per_doc, k = [], 0  # one forward call per node i of a document, of shape [nodes, pieces of the document]
    for tree, _ in results:
        per_doc.append(meta["batch_shapes"][k][1])
        k += len(tree)
    summary["pieces_per_document_mean"] = sum(per_doc) / len(per_doc)
    summary["pieces_per_document_max"] = max(per_doc)
    for decoder in DECODERS:
        timings[decoder] = _run_step(args, decoder, ["--step", "parse", "--decoder", decoder])
        trees = json.loads((work / f"trees-{decoder}.json").read_text())
        (args.output / f"trees-{decoder}.json").write_text(json.dumps(dict(zip(files, trees))))
        summary["decoders"][decoder] = _scores((args.output / f"stdout-{decoder}.txt").read_text())
    (args.output / "summary.json").write_text(json.dumps(summary, indent=1))
    for decoder, s in summary["decoders"].items():
        print(f"{decoder}: UAS {100 * s['uas']:.2f} UUAS {100 * s['uuas']:.2f}", file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, required=True, help="their checkout (with discourse/ and dependency/)")
    ap.add_argument("--model", type=Path, required=True, help="a local BERT folder with vocab.txt")
    ap.add_argument("--data", required=True, help="a SciDTB gold folder (e.g. .../scidtb/test/gold)")
    ap.add_argument("-o", "--output", type=Path, required=True)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    ap.add_argument("--fix-attention-mask", action="store_true", help="deviation: segments as token_type_ids")
    ap.add_argument("--step", choices=["matrix", "parse"], help=argparse.SUPPRESS)
    ap.add_argument("--decoder", choices=DECODERS, help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.repo, args.model, args.output = args.repo.resolve(), args.model.resolve(), args.output.resolve()
    args.data = str(Path(args.data).resolve()) + "/"  # their Corpus opens file_dir + file
    if args.step == "matrix":
        _step_matrix(args)
    elif args.step == "parse":
        _step_parse(args)
    else:
        _orchestrate(args)


if __name__ == "__main__":
    main()
