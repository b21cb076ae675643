"""Start-up cost of ``pmask parse`` on one sentence, and of ``pmask --help`` and ``import pmask``.

Two whole processes, run in turn (A B A B ...) so that a machine whose speed drifts slows both:

* A: ``pmask parse ONE.conllu -o OUT.conllu -q`` (the bundled model pmask-tiny-en; pair probe, metric
  prob, eisner, gold root);
* B: the same model work done directly (``--baseline``, below): import torch and transformers, load
  the bundled model's folder with the classes pmask loads it with (AutoConfig, AutoTokenizer,
  AutoModelForMaskedLM), tokenize the sentence's words and run one forward pass with hidden states.

A - B is what pmask adds to the model work: its own imports and checks, the impacts (12 + 132 masked
rows), decoding and writing. Printed: medians of wall and CPU seconds (the CPU time of the child
process, from the operating system), the median of A - B and of A / B taken pair by pair; then
``pmask --help`` and ``python -c "import pmask"``: median wall seconds and modules loaded (and which
heavy libraries among them).

ONE.conllu is sentence n01002042 of UD English PUD ("The new spending is fueled by Clinton's large bank
account.", 12 words) when ``../shared/data`` holds it, else the first sentence of
``tests/data/mini.conllu``. The pmask measured is the one ``import pmask`` finds (set PYTHONPATH to
measure another checkout); both sides run with the same environment.

Usage::

    python benchmarks/startup.py [-n 9] [--threads N] [--pycache DIR]

``--threads N`` sets OMP_NUM_THREADS=N for both sides (torch's default is one thread per core; on a
shared machine fewer threads are steadier, but the impacts are bit-identical only at equal thread
counts). ``--pycache DIR`` compiles bytecode once into DIR (PYTHONPYCACHEPREFIX, an unmeasured run per
command fills it) for both sides, as an installed wheel would have it; without it the environment
decides (under PYTHONDONTWRITEBYTECODE=1 an editable install compiles pmask's modules on every run).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PUD = ROOT / ".." / "shared" / "data" / "ud" / "UD_English-PUD" / "en_pud-ud-test.conllu"
SENTENCE = "n01002042"
HEAVY = ("torch", "transformers", "nltk", "scipy", "matplotlib", "numpy")


def one_sentence(folder: Path) -> Path:
    """ONE.conllu in ``folder``: the PUD sentence (module docstring), else mini.conllu's first."""
    source, wanted = (PUD, f"# sent_id = {SENTENCE}") if PUD.is_file() else (ROOT / "tests/data/mini.conllu", None)
    blocks = source.read_text(encoding="utf-8").split("\n\n")
    block = next(b for b in blocks if wanted is None or wanted in b.splitlines())
    path = folder / "ONE.conllu"
    path.write_text(block.strip("\n") + "\n\n", encoding="utf-8")
    return path


def words_of(conllu: Path) -> list[str]:
    """The word forms of a one-sentence CoNLL-U file (integer ids only: no ranges, no empty nodes)."""
    rows = [line.split("\t") for line in conllu.read_text(encoding="utf-8").splitlines()]
    return [row[1] for row in rows if len(row) == 10 and row[0].isdigit()]


def baseline(model: str, conllu: str) -> None:
    """B: the model work of A done directly with torch and transformers."""
    import torch
    from transformers import AutoConfig, AutoModelForMaskedLM, AutoTokenizer

    config = AutoConfig.from_pretrained(model)
    tokenizer = AutoTokenizer.from_pretrained(model)
    net = AutoModelForMaskedLM.from_pretrained(model, config=config).eval()
    batch = tokenizer(words_of(Path(conllu)), is_split_into_words=True, return_tensors="pt")
    with torch.inference_mode():
        net(**batch, output_hidden_states=True)


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, from the OS's accounting of the finished child) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{proc.stderr}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def modules_loaded(code: str, env: dict[str, str]) -> dict[str, int]:
    """Modules in sys.modules after ``code`` (all, and per heavy library), in a fresh interpreter."""
    report = ("\nimport json, sys\ntop = [m.split('.')[0] for m in sys.modules]\n"
              f"print(json.dumps({{'all': len(top), **{{h: top.count(h) for h in {HEAVY!r}}}}}), file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code + report], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(proc.stderr)
    return json.loads(proc.stderr.strip().splitlines()[-1])


def environment(args: argparse.Namespace) -> dict[str, str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    if args.threads:
        env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(args.threads)
    if args.pycache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(Path(args.pycache).resolve())
    return env


def median_line(label: str, values: list[float]) -> str:
    return f"{label:<34} {statistics.median(values):8.3f}   ({min(values):.3f} - {max(values):.3f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=9, help="pairs (and runs of each of the small commands)")
    parser.add_argument("--threads", type=int, default=None, help="OMP_NUM_THREADS for both sides")
    parser.add_argument("--pycache", default=None, help="PYTHONPYCACHEPREFIX for both sides (bytecode cached)")
    parser.add_argument("--baseline", nargs=2, metavar=("MODEL", "CONLLU"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.baseline:
        return baseline(*args.baseline)
    env = environment(args)
    pmask = shutil.which("pmask", path=str(Path(sys.executable).parent)) or "pmask"
    where = subprocess.run([sys.executable, "-c", "import pmask; print(pmask.__file__)"], env=env,
                           capture_output=True, text=True, check=True).stdout.strip()
    model = Path(where).parent / "models" / "pmask-tiny-en"
    with tempfile.TemporaryDirectory() as tmp:
        conllu = one_sentence(Path(tmp))
        a = [pmask, "parse", str(conllu), "-o", str(Path(tmp) / "OUT.conllu"), "-q"]
        b = [sys.executable, str(Path(__file__).resolve()), "--baseline", str(model), str(conllu)]
        timed(a, env), timed(b, env)   # warm-up (and bytecode, with --pycache): not counted
        pairs = [(timed(a, env), timed(b, env)) for _ in range(args.n)]
        words = len(words_of(conllu))
    print(f"pmask: {where}; {words} words; threads {env.get('OMP_NUM_THREADS', 'default')}; "
          f"bytecode {'cached in ' + env['PYTHONPYCACHEPREFIX'] if args.pycache else 'as the environment has it'}; "
          f"{args.n} pairs; median (min - max)")
    for k, what in enumerate(("wall", "cpu")):
        print(median_line(f"A pmask parse {what} s", [p[0][k] for p in pairs]))
        print(median_line(f"B baseline {what} s", [p[1][k] for p in pairs]))
        print(median_line(f"A - B {what} s", [p[0][k] - p[1][k] for p in pairs]))
        print(median_line(f"A / B {what}", [p[0][k] / p[1][k] for p in pairs]))
    for label, command, code in (
            ("pmask --help", [pmask, "--help"], "from pmask.cli import main\nmain(['--help'])"),
            ("python -c 'import pmask'", [sys.executable, "-c", "import pmask"], "import pmask"),
            ("python -c pass", [sys.executable, "-c", "pass"], "pass")):
        timed(command, env)
        walls = [timed(command, env)[0] for _ in range(args.n)]
        counts = modules_loaded(code, env)
        heavy = ", ".join(f"{h} {counts[h]}" for h in HEAVY if counts[h])
        print(median_line(f"{label} wall s", walls) + f"   modules {counts['all']}" + (f" ({heavy})" if heavy else ""))


if __name__ == "__main__":
    main()
