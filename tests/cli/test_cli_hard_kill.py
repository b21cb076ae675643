"""Issue 27, item 4: a real ``pmask impact`` killed with SIGKILL (nothing is flushed) keeps every shard
it closed, and --resume computes only the rest; ``--shard-seconds`` bounds the work a kill can lose."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from pmask.cli import main
from pmask.common.errors import StoreError
from pmask.perturb.store import ImpactStore, read_manifest
from pmask.perturb.store.lock import WRITER_NOTE

N = 40


def _stored(path: Path) -> int:
    try:
        return sum(1 for e in read_manifest(path)["sentences"] if "skipped" not in e)
    except StoreError:   # not written yet
        return 0


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p), "HF_HUB_OFFLINE": "1",
            "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}


def test_sigkill_keeps_closed_shards_and_resume_computes_only_the_rest(tmp_path, tiny_bert_dir, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("".join(" ".join(["the", "cat", "sat", "on", "a", "mat"][(k + j) % 6] for j in range(10))
                              + "\n" for k in range(N)), encoding="utf-8")
    out = tmp_path / "st"
    impact = ["impact", str(corpus), "--model", str(tiny_bert_dir), "--batch-tokens", "256", "-q", "-o", str(out)]
    # --shard-seconds 0: every sentence is saved as soon as it is finished
    proc = subprocess.Popen([sys.executable, "-m", "pmask", *impact, "--shard-seconds", "0"], env=_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    try:
        while _stored(out) < 2:
            assert proc.poll() is None, f"pmask impact ended before it was killed: {proc.stderr.read()[-2000:]}"
            assert time.monotonic() < deadline, "no shard was saved in time"
            time.sleep(0.01)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stderr.close()
    kept = _stored(out)
    assert 2 <= kept < N and (out / WRITER_NOTE).is_file()        # the kill left its writer's note behind
    assert main(["info", str(out), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["state"] == "interrupted" and info["sentences"]["stored"] == kept and info["shards"] == kept

    assert main([*(a for a in impact if a != "-q"), "--resume"]) == 0
    summary = capsys.readouterr().err                              # the summary is a message (stderr)
    assert f"{N - kept} computed, {kept} reused" in summary         # only what the kill lost
    assert main(["impact", str(corpus), "--model", str(tiny_bert_dir), "-q", "-o", str(tmp_path / "ref")]) == 0
    capsys.readouterr()
    a, b = ImpactStore.open(out), ImpactStore.open(tmp_path / "ref")
    assert a.complete and a.indices == b.indices == list(range(N)) and not (out / WRITER_NOTE).exists()
    for x, y in zip(a, b):
        assert x.words == y.words and x.pieces == y.pieces
        np.testing.assert_allclose(x.cls_matrix, y.cls_matrix, rtol=1e-5, atol=1e-5)   # other batches: rounding


def test_shard_seconds_is_checked_and_recorded(tmp_path, tiny_bert_dir, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat\na mat\n", encoding="utf-8")
    args = ["impact", str(corpus), "--model", str(tiny_bert_dir), "-q", "-o", str(tmp_path / "st")]
    assert main([*args, "--shard-seconds", "-1"]) == 2
    assert re.search(r"--shard-seconds: must be 0 or more seconds, not -1", capsys.readouterr().err)
    assert main([*args, "--shard-seconds", "0.5"]) == 0
    run = read_manifest(tmp_path / "st")["runs"][-1]
    assert run["shard_seconds"] == 0.5 and run["shard_size"] == 64
