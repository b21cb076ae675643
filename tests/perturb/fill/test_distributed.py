"""Distributed stores: torchrun ranks on CPU (gloo) write one store equal to a single process's,
survive a killed rank, and finish with --resume on another number of ranks; cost balancing."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from pmask.corpora import read_corpus
from pmask.perturb.store import ImpactStore
from pmask.perturb.store.plan import balance, sequence_cost
from pmask.perturb.store.state import store_state

from library_files import library_files

PUD = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "ud" / "UD_English-PUD" / "en_pud-ud-test.conllu"
needs_pud = pytest.mark.skipif(not PUD.is_file(), reason="shared PUD data not present")
N = 24
# Ranks pack other sentences into each forward batch than one process does, so float32 sums
# may round differently: equal within tolerance (measured differences are about 1e-6).
TOL = {"rtol": 1e-5, "atol": 1e-5}


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p), "HF_HUB_OFFLINE": "1",
            "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}


def _torchrun(nproc: int, *args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(nproc), *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=timeout)


def assert_same_store(path: Path, reference: Path) -> None:
    got, ref = ImpactStore.open(path), ImpactStore.open(reference)
    assert got.complete and got.indices == ref.indices and got.skipped == ref.skipped
    assert not list(path.glob("part-*")) and not list(path.glob(".*.tmp"))
    for a, b in zip(got, ref):
        assert (a.index, a.id, a.words, a.pieces) == (b.index, b.id, b.words, b.pieces)
        np.testing.assert_array_equal(a.input_ids, b.input_ids)
        np.testing.assert_allclose(a.cls_matrix, b.cls_matrix, **TOL)


def test_balance_by_cost_on_pud_lengths():
    lengths = [len(s.words) for s in read_corpus(PUD)] if PUD.is_file() else \
        [int(x) for x in np.random.default_rng(0).gamma(4.0, 5.5, 1000).clip(2, 90)]
    shares = balance(range(len(lengths)), lengths, 4)
    assert sorted(k for share in shares for k in share) == list(range(len(lengths)))
    assert all(share == sorted(share) for share in shares)
    loads = [sum(sequence_cost(lengths[k]) for k in share) for share in shares]
    assert max(loads) <= 1.10 * np.mean(loads)
    by_count = [sum(sequence_cost(n) for n in lengths[r::4]) for r in range(4)]   # what counting would give
    assert max(loads) - min(loads) < max(by_count) - min(by_count)
    assert balance([5], [3], 3) == [[5], [], []]


@pytest.fixture(scope="module")
def pud_model(tmp_path_factory):
    if not PUD.is_file():
        pytest.skip("shared PUD data not present")
    from pmask.perturb.testing import make_tiny_bert

    words = [w for s in read_corpus(PUD, limit=N) for w in s.words]
    return make_tiny_bert(tmp_path_factory.mktemp("pud_bert"), words=words)


@pytest.fixture(scope="module")
def single(pud_model, tmp_path_factory):
    """The store one process writes (the reference)."""
    import torch

    from pmask.cli import main

    out = tmp_path_factory.mktemp("single") / "store"
    threads = torch.get_num_threads()
    torch.set_num_threads(1)   # as each rank runs (torchrun sets OMP_NUM_THREADS=1); faster on a busy machine
    try:
        assert main(["impact", str(PUD), "--limit", str(N), "--model", str(pud_model), "-q", "-o", str(out)]) == 0
    finally:
        torch.set_num_threads(threads)
    return out


@needs_pud
def test_two_ranks_write_the_single_process_store(pud_model, single, tmp_path):
    out = tmp_path / "store"
    proc = _torchrun(2, "-m", "pmask", "impact", str(PUD), "--limit", str(N), "--model", str(pud_model),
                     "-o", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert_same_store(out, single)
    assert proc.stderr.count("24 computed, 0 reused") == 1                 # one summary (stderr), from rank 0
    assert "[rank 0/2]" in proc.stderr
    assert "impact (2 ranks)" not in proc.stderr and "\r" not in proc.stderr   # stderr is a pipe: no bar
    assert "[rank 1/2]" not in proc.stderr                                  # other ranks stay quiet
    store = ImpactStore.open(out)
    assert store.manifest["runs"][-1]["world_size"] == 2
    files = {s["file"] for s in store.manifest["shards"]}
    assert files == {p.name for p in out.glob("shard-*")} and len(files) == 2   # one shard per rank


KILLED_RUN = textwrap.dedent("""
    import os, signal, sys
    from pmask.corpora import read_corpus
    from pmask.perturb.models.load import load_model
    from pmask.perturb.fill.distributed import init_distributed
    from pmask.perturb.engine.impact_settings import ImpactSettings
    from pmask.perturb.fill.compute import FillRequest, compute_store
    from pmask.perturb.store import StoreWriter

    PAIR_DIST = ImpactSettings("dist", "avg", "words", "pair", 0)
    corpus, model_dir, out, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    info = init_distributed("cpu")
    add = StoreWriter.add
    def add_then_die(self, *args, **kwargs):
        add(self, *args, **kwargs)
        if info.rank == 1 and len(self._done) - len(self.manifest["sentences"]) == 5:
            os.kill(os.getpid(), signal.SIGKILL)     # two shards of 2 are finished, one sentence pending
    StoreWriter.add = add_then_die
    compute_store(load_model(model_dir, device="cpu"),
                  FillRequest(read_corpus(corpus, limit=n), out, impact=PAIR_DIST, shard_size=2, corpus_path=corpus,
                              progress=False))
""")


@needs_pud
def test_killed_rank_then_resume_on_three_ranks(pud_model, single, tmp_path):
    out = tmp_path / "store"
    script = tmp_path / "killed_run.py"
    script.write_text(KILLED_RUN, encoding="utf-8")
    proc = _torchrun(2, str(script), str(PUD), str(pud_model), str(out), str(N))
    assert proc.returncode != 0
    parts = sorted(p.name for p in out.glob("part-*.json"))
    assert "part-00001.json" in parts                      # the killed rank's finished shards are recorded
    partial = ImpactStore.open(out)
    assert not partial.complete and len(partial) == 0      # rank 0 never merged: the manifest lists nothing yet
    state = store_state(out)                                # readers say where the finished sentences are
    assert state.held == 0 and state.unmerged >= 5 and "which --resume merges" in state.refusal()
    # damage one finished shard of each rank: a truncated file and a flipped byte
    shards = sorted(out.glob("shard-*.safetensors"))
    assert len(shards) >= 3
    shards[0].write_bytes(shards[0].read_bytes()[:-7])
    data = bytearray(shards[1].read_bytes())
    data[-5] ^= 0xFF
    shards[1].write_bytes(bytes(data))
    proc = _torchrun(3, "-m", "pmask", "impact", str(PUD), "--limit", str(N), "--model", str(pud_model),
                     "-o", str(out), "--resume", "--shard-seconds", "0")   # now one sentence per shard
    assert proc.returncode == 0, proc.stderr[-3000:]
    computed, reused = (int(x) for x in re.search(r"(\d+) computed, (\d+) reused", proc.stderr).groups())
    assert computed + reused == N and 4 <= computed < N    # only what was missing or damaged
    assert "partial or corrupt shard" in proc.stderr
    assert_same_store(out, single)
    assert ImpactStore.open(out).manifest["runs"][-1]["world_size"] == 3
    assert {s["n_sentences"] for s in ImpactStore.open(out).manifest["shards"]} == {1, 2}   # shards of both runs


def test_rank_info_from_arguments_or_torchrun_environment(monkeypatch):
    from pmask.common.errors import PmaskError
    from pmask.perturb.fill.distributed import RankInfo, rank_info

    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(var, raising=False)
    assert rank_info() == RankInfo(0, 1, 0) and not rank_info().distributed     # plain python: one process
    monkeypatch.setenv("RANK", "5")
    monkeypatch.setenv("WORLD_SIZE", "8")
    monkeypatch.setenv("LOCAL_RANK", "1")
    info = rank_info()
    assert (info.rank, info.world_size, info.local_rank, info.is_main, str(info)) == (5, 8, 1, False, "rank 5/8")
    assert rank_info(rank=0, world_size=1) == RankInfo(0, 1, 0)                 # explicit values win
    with pytest.raises(PmaskError, match="give both rank and world_size"):
        rank_info(rank=1)
    with pytest.raises(PmaskError, match="outside 0..1"):
        rank_info(rank=2, world_size=2)
    monkeypatch.setenv("WORLD_SIZE", "two")
    with pytest.raises(PmaskError, match="WORLD_SIZE='two' is not an integer"):
        rank_info()


def test_the_main_rank_question_has_one_torch_free_answer():
    """``is_main_rank`` is the one answer to "am I rank 0?" (bench and the store fill ask it), and
    asking it, or importing the module, loads no torch."""
    code = ("import sys; from pmask.perturb.fill.distributed import is_main_rank; "
            "print(is_main_rank(), 'torch' in sys.modules)")
    env = {k: v for k, v in _env().items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert out.split() == ["True", "False"]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**env, "RANK": "1"},
                         check=True).stdout
    assert out.split() == ["False", "False"]
    for path in library_files():   # no other module reads torchrun's RANK
        if path.name != "distributed.py":
            assert 'environ.get("RANK"' not in path.read_text(encoding="utf-8"), path
