"""The cost line's time against the real time, on a quiet and on a loaded machine (issue 47 item 5).

Each condition runs ``pmask parse CORPUS --model MODEL --limit N -o OUT`` as a whole process ``--runs`` times:

* ``quiet``: nothing added (other users of the machine are what they are: the load average is printed);
* ``loaded``: ``--busy N`` processes that spin on a core each (default: one per core), started ``--settle``
  seconds before the first run (the load average that the line names lags by about a minute).

Per run it prints the time the cost line estimated (read from the command's standard error), the real wall
time, their ratio, the CPU time of the run (user and system: what the run needs whatever the load; on an
idle machine its wall time lies between that over the cores and that), the load the line named (``busy now:
load …``, or ``-``) and the 1-minute load average when the run began. Per condition it also times this
machine's matrix-multiply rate at the model's sizes in-process, two ways: the cost line's (one thread's best
CPU time, times the engine's threads) and the old line's (the median wall time of numpy products, which
swung with the load). The line's time is the idle machine's: on a quiet machine real / estimate should be
near 1 (a factor of about 2 either way), on a loaded one above 1, with the load named, and the estimate
about the same in both.

Usage::

    python benchmarks/cost_estimate.py [--corpus PATH] [--model NAME] [--limit 20] [--runs 2]
                                       [--busy N] [--settle 60] [--pmask "python -m pmask"]

``--pmask`` is the command that runs pmask (default: this interpreter with ``-m pmask``; the pmask measured is
the one it imports: set PYTHONPATH to measure another checkout).
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PUD = ROOT / ".." / "shared" / "data" / "ud" / "UD_English-PUD" / "en_pud-ud-test.conllu"
#: What a busy process carries on its command line (so that it can be told from others).
MARKER = "pmask-cost-estimate-busy"
ESTIMATE = re.compile(r"to compute: .*?, about (?P<time>(?:\d+ (?:h|min|s) ?)+) on this machine when idle"
                      r"(?: \(busy now: load (?P<load>[\d.]+) on (?P<cores>\d+) cores?)?")


def seconds_of(text: str) -> float:
    """``'2 h 40 min'`` -> 9600.0, ``'3 min 20 s'`` -> 200.0 (the cost line's durations)."""
    units = {"h": 3600, "min": 60, "s": 1}
    return float(sum(int(n) * units[u] for n, u in re.findall(r"(\d+) (h|min|s)", text)))


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def start_busy(count: int) -> list[subprocess.Popen]:
    """``count`` processes that spin until stopped."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass", MARKER]) for _ in range(count)]


def stop(processes: list[subprocess.Popen]) -> None:
    for p in processes:
        p.terminate()
    for p in processes:
        p.wait()


def rates(d: int, ff: int, products: int = 9) -> tuple[float, float]:
    """GFLOP/s at the model's sizes, two ways: the cost line's (one thread's best CPU time, times the engine's
    threads: the idle machine's) and the old one's (the median wall time of ``products`` numpy products of 2048
    rows, which swung with the load)."""
    from pmask.perturb.probes.cost import BATCH_ROWS, engine_threads, matmul_rate

    rng = np.random.default_rng(0)
    a, b = rng.random((BATCH_ROWS, d), dtype=np.float32), rng.random((d, ff), dtype=np.float32)
    a @ b
    times = []
    for _ in range(products):
        began = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - began)
    return matmul_rate(d, ff) * engine_threads() / 1e9, 2 * BATCH_ROWS * d * ff / statistics.median(times) / 1e9


def one_run(command: list[str], corpus: Path, model: str, limit: int, out: Path) -> dict:
    """Run ``pmask parse`` once; its estimate (seconds), the load its line named, real seconds and the load before."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)   # the spinning children are reaped only at the end
    began = time.perf_counter()
    done = subprocess.run([*command, "parse", str(corpus), "--model", model, "--limit", str(limit), "-o", str(out)],
                          capture_output=True, text=True)
    real = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if done.returncode != 0:
        raise SystemExit(f"pmask parse failed ({done.returncode}):\n{done.stderr}")
    found = ESTIMATE.search(done.stderr)
    if found is None:
        raise SystemExit(f"no cost line in pmask's standard error:\n{done.stderr}")
    named = f"{found['load']} on {found['cores']}" if found["load"] else "-"
    return {"estimate": seconds_of(found["time"]), "real": real, "cpu": cpu, "named": named, "load": load}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", type=Path, default=PUD if PUD.is_file() else ROOT / "tests" / "data" / "mini.conllu")
    p.add_argument("--model", default="pmask-tiny-en")
    p.add_argument("--limit", type=int, default=20)
    p.add_argument("--runs", type=int, default=2, help="runs per condition")
    p.add_argument("--busy", type=int, default=cores(), help="spinning processes of the loaded condition")
    p.add_argument("--settle", type=float, default=60.0, help="seconds between starting them and the first run")
    p.add_argument("--pmask", default=f"{shlex.quote(sys.executable)} -m pmask", help="the command that runs pmask")
    args = p.parse_args()
    from pmask.perturb.probes.cost import counting_parts

    _, config = counting_parts(args.model)
    d = int(getattr(config, "hidden_size", 768))
    ff = int(getattr(config, "intermediate_size", 4 * d))
    command = shlex.split(args.pmask)
    print(f"# pmask parse {args.corpus.name} --limit {args.limit} --model {args.model}: the cost line's time against "
          f"the real one ({cores()} cores, {args.busy} busy processes when loaded)\n")
    print("| condition | run | load average before | estimate s | real s | real / estimate | CPU s of the run "
          "| load named by the line | rate now GFLOP/s | old rate GFLOP/s |")
    print("|---|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for condition, busy in (("quiet", 0), ("loaded", args.busy)):
            processes = start_busy(busy)
            try:
                if busy:
                    time.sleep(args.settle)
                now, before = rates(d, ff)
                for run in range(1, args.runs + 1):
                    r = one_run(command, args.corpus, args.model, args.limit, Path(tmp) / "out.conllu")
                    print(f"| {condition} | {run} | {r['load']:.1f} | {r['estimate']:.0f} | {r['real']:.1f} | "
                          f"{r['real'] / max(r['estimate'], 1e-9):.2f} | {r['cpu']:.1f} | {r['named']} | {now:.1f} | "
                          f"{before:.1f} |",
                          flush=True)
            finally:
                stop(processes)


if __name__ == "__main__":
    main()
