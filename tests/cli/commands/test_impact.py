"""Issue 27, item 4: a real ``pmask impact`` killed with SIGKILL (nothing is flushed) keeps every shard
it closed, and --resume computes only the rest; ``--shard-seconds`` bounds the work a kill can lose.

Issue 33, item 3: the bound holds inside one sentence too (a long sentence, a big model: one sentence
spans many shard-seconds): the sentence under way is kept between batches and --resume continues it."""
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
import pytest

from pmask.cli import main
from pmask.common.errors import StoreError
from pmask.perturb.store import ImpactStore, read_manifest
from pmask.perturb.store.lock import WRITER_NOTE

from test_cli import SMALL

N = 40


def _stored(path: Path) -> int:
    try:
        return sum(1 for e in read_manifest(path)["sentences"] if "skipped" not in e)
    except StoreError:   # not written yet
        return 0


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p), "HF_HUB_OFFLINE": "1",
            "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}


@pytest.fixture()
def threads():
    """``--threads 1`` in this process too (the killed runs' OMP_NUM_THREADS=1), restored afterwards."""
    import torch

    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def test_sigkill_keeps_closed_shards_and_resume_computes_only_the_rest(tmp_path, tiny_bert_dir, capsys, threads):
    corpus = tmp_path / "c.txt"
    corpus.write_text("".join(" ".join(["the", "cat", "sat", "on", "a", "mat"][(k + j) % 6] for j in range(10))
                              + "\n" for k in range(N)), encoding="utf-8")
    out = tmp_path / "st"
    impact = ["impact", str(corpus), "--model", str(tiny_bert_dir), "--batch-tokens", "256", "--threads", "1", "-q",
              "-o", str(out)]
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
    assert main([*impact[:-1], str(tmp_path / "ref")]) == 0         # uninterrupted, the same settings
    capsys.readouterr()
    a, b = ImpactStore.open(out), ImpactStore.open(tmp_path / "ref")
    assert a.complete and a.indices == b.indices == list(range(N)) and not (out / WRITER_NOTE).exists()
    for x, y in zip(a, b):   # the resumed run batched as the uninterrupted one did: the same numbers (issue 39)
        assert x.words == y.words and x.pieces == y.pieces
        np.testing.assert_array_equal(x.cls_matrix, y.cls_matrix)


def test_shard_seconds_is_checked_and_recorded(tmp_path, tiny_bert_dir, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat\na mat\n", encoding="utf-8")
    args = ["impact", str(corpus), "--model", str(tiny_bert_dir), "-q", "-o", str(tmp_path / "st")]
    assert main([*args, "--shard-seconds", "-1"]) == 2
    assert re.search(r"--shard-seconds: must be 0 or more seconds, not -1", capsys.readouterr().err)
    assert main([*args, "--shard-seconds", "0.5"]) == 0
    run = read_manifest(tmp_path / "st")["runs"][-1]
    assert run["shard_seconds"] == 0.5 and run["shard_size"] == 64


# the process kills itself (SIGKILL: nothing is flushed, no handler runs) when batch KILL_AT of the
# engine begins: a kill at a known point of the work, whatever the machine's speed
KILLER = """
import os, signal, sys
from pmask.perturb.engine import runner as engine
from pmask.cli import main

batches, original = [0], engine.BatchRunner._run_batch

def run_batch(self, parts):
    batches[0] += 1
    if batches[0] == int(os.environ["KILL_AT"]):
        os.kill(os.getpid(), signal.SIGKILL)
    return original(self, parts)

engine.BatchRunner._run_batch = run_batch
sys.exit(main(sys.argv[1:]))
"""


def test_sigkill_inside_a_long_sentence_loses_at_most_one_batch(tmp_path, tiny_bert_dir, capsys, threads):
    """One sentence of 30 words is 466 sequences: in batches of 10 sequences it spans 47 batches, each
    far more than --shard-seconds 0. Killed as batch 21 begins, the store keeps the 20 batches done
    (200 sequences); the old code kept nothing until the sentence was finished, and lost them all."""
    partial = "partial.safetensors"   # pmask.perturb.store.layout.PARTIAL
    words = ["the", "cat", "sat", "on", "a", "mat"]
    n = 30
    corpus = tmp_path / "c.txt"
    corpus.write_text(" ".join(words[k % 6] for k in range(n)) + "\n" + "the cat sat\n", encoding="utf-8")
    total = 1 + n + n * (n - 1) // 2 + 1 + 3 + 3          # both sentences' sequences ([CLS] row kept)
    out = tmp_path / "st"
    impact = ["impact", str(corpus), "--model", str(tiny_bert_dir), "--batch-tokens", str(10 * (n + 2)), "--threads",
              "1", "-q", "-o", str(out)]
    done = subprocess.run([sys.executable, "-c", KILLER, *impact, "--shard-seconds", "0"],
                          env={**_env(), "KILL_AT": "21"}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, timeout=600)
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    assert _stored(out) == 0                                       # the long sentence is first: none finished

    assert main([*(a for a in impact if a != "-q"), "--resume"]) == 0
    summary = capsys.readouterr().err
    run = re.search(r"2 computed, 0 reused, .*\((\d+) sequences,", summary)
    assert run, summary
    lost = 200 - (total - int(run[1]))                             # of the 20 batches × 10 sequences done
    assert lost == 0, f"the kill lost {lost} of the 200 sequences done (20 batches, each > --shard-seconds 0)"
    assert f"continuing sentence 0 from its 200 kept sequences of {total - 7}" in summary
    assert not (out / partial).exists()                            # its sentence is stored now
    assert main([*impact[:-1], str(tmp_path / "ref")]) == 0         # uninterrupted, the same settings
    a, b = ImpactStore.open(out), ImpactStore.open(tmp_path / "ref")
    assert a.complete and a.indices == b.indices == [0, 1]
    for x, y in zip(a, b):   # the same batches: the same numbers (issue 39)
        assert x.words == y.words and x.pieces == y.pieces
        np.testing.assert_array_equal(x.cls_matrix, y.cls_matrix)


@pytest.fixture(scope="module")
def store(tmp_path_factory, tiny_bert_dir) -> Path:
    """A store of the two SMALL sentences, layers 2 and 3."""
    base = tmp_path_factory.mktemp("store")
    corpus = base / "small.conllu"
    corpus.write_text(SMALL, encoding="utf-8")
    out = base / "store"
    assert main(["impact", str(corpus), "--model", str(tiny_bert_dir), "--layers", "2,3", "-q", "-o", str(out)]) == 0
    return out


def run(args: list, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def small(tmp_path: Path) -> Path:
    path = tmp_path / "small.conllu"
    path.write_text(SMALL, encoding="utf-8")
    return path


def test_an_existing_store_names_the_flags_that_resume_or_replace_it(small, store, capsys, tiny_bert_dir):
    code, _, err = run(["impact", small, "--model", tiny_bert_dir, "--layers", "2,3", "-q", "-o", store], capsys)
    assert code == 1 and "--resume" in err and "--overwrite" in err, err


def test_impact_of_documents_takes_their_metric_over_the_models_recorded_one(tmp_path, capsys):
    """Issue 37: pmask-tiny-en records metric prob, which cannot pool an EDU's pieces; ``pmask impact`` on SciDTB
    (docs/discourse.md's figures command) failed on main after writing the store's manifest."""
    from scidtb_counts import SCIDTB

    store = tmp_path / "store"
    assert main(["impact", str(SCIDTB), "--model", "pmask-tiny-en", "-q", "-o", str(store)]) == 0, \
        capsys.readouterr().err
    manifest = read_manifest(store)
    assert manifest["metric"] == "dist" and manifest["complete"]


# Issue 37: a store of documents of EDUs is resumable; a document half computed when ``pmask impact`` is killed
# (SIGKILL: nothing flushed, no handler runs) is kept between batches and continued by ``--resume``, and the
# resumed store is bit-identical to an uninterrupted one (the decision of issue 39: the same batches, the same
# numbers). The kill lands at a known point of the work: the process kills itself as engine batch KILL_AT
# begins (KILLER above), whatever the machine's speed.

#: 8 EDUs of 3 words (every word one piece of the tiny tokenizer, or [UNK]): 26 tokens with [CLS] and [SEP]
LONG = ["the cat sat", "on a mat", "and it was", "warm there today", "because the sun", "was out again",
        "so the cat", "slept all day"]
SHORT = ["a dog ran", "it was fast"]


def _units(edus: list[str]) -> int:
    return len(edus) + 1   # the [CLS] unit 0 a store keeps


def _sequences(units: int) -> int:   # {u} for each unit, {u, v} for each pair (one input serves F[u][v], F[v][u])
    return units * (units + 1) // 2


def test_a_document_half_computed_when_killed_is_kept_and_resumed_bit_identical(tmp_path, tiny_bert_dir, capsys,
                                                                                threads):
    corpus = tmp_path / "docs.edus"
    corpus.write_text("# doc_id = long\n" + "\n".join(LONG) + "\n\n# doc_id = short\n" + "\n".join(SHORT) + "\n",
                      encoding="utf-8")
    length = 2 + sum(len(e.split()) for e in LONG)
    out = tmp_path / "st"
    impact = ["impact", str(corpus), "--model", str(tiny_bert_dir), "--batch-tokens", str(3 * length), "--threads",
              "1", "-q", "-o", str(out)]
    long_total = _sequences(_units(LONG))                          # 45: 15 batches of 3 sequences
    done = subprocess.run([sys.executable, "-c", KILLER, *impact, "--shard-seconds", "0"],
                          env={**_env(), "KILL_AT": "7"}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, timeout=600)
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    assert read_manifest(out)["sentences"] == []                  # the long document is first: none finished
    assert (out / "partial.safetensors").is_file()               # pmask.perturb.store.layout.PARTIAL
    # the cost line counts only what the store lacks: the long document's sequences after the 18 kept, the short one
    left = long_total - 18 + _sequences(_units(SHORT))
    tokens = (long_total - 18) * length + _sequences(_units(SHORT)) * (2 + sum(len(e.split()) for e in SHORT))
    assert main([*(a for a in impact if a != "-q"), "--resume", "--dry-run"]) == 0
    assert f"2 documents to compute: {left} sequences, {tokens:,} tokens" in capsys.readouterr().err

    assert main([*(a for a in impact if a != "-q"), "--resume"]) == 0
    summary = capsys.readouterr().err
    assert f"continuing sentence 0 from its 18 kept sequences of {long_total}" in summary, summary
    run = re.search(r"2 computed, 0 reused, .*\((\d+) sequences,", summary)
    assert run, summary
    # the 6 batches done (18 sequences) are not run again; the rest of the long document and the short one are
    assert int(run[1]) == left, summary
    assert not (out / "partial.safetensors").exists()

    assert main([*impact[:-1], str(tmp_path / "ref")]) == 0         # uninterrupted, the same settings
    a, b = ImpactStore.open(out), ImpactStore.open(tmp_path / "ref")
    assert a.complete and a.indices == b.indices == [0, 1]
    for x, y in zip(a, b):
        assert x.words == y.words and x.pieces == y.pieces
        assert x.cls_matrix.shape[-1] == len(x.words) + 1           # the [CLS] unit 0, masked like an EDU
        assert np.abs(x.cls_matrix[:, 1:, 0]).min() > 0             # ... so its column is no zero column
        np.testing.assert_array_equal(x.cls_matrix, y.cls_matrix)



def test_impact_of_standard_input_reads_it_once_for_the_cost_line_and_the_run(tmp_path, tiny_bert_dir, monkeypatch):
    """``pmask impact -``: the cost line read standard input before the run, which then found it empty ("no
    sentences in file", exit 1); every sentence piped in is now in the store."""
    import io

    text = (Path(__file__).resolve().parents[2] / "data" / "mini.conllu").read_text(encoding="utf-8")
    ids = [line.split("=", 1)[1].strip() for line in text.splitlines() if line.startswith("# sent_id")]
    blocks = [b for b in text.split("\n\n") if b.strip()]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8"))
    store = tmp_path / "st"
    assert main(["impact", "-", "--format", "conllu", "--model", str(tiny_bert_dir), "-q", "-o", str(store)]) == 0
    stored = [s["id"] for s in read_manifest(store)["sentences"]]
    assert len(stored) == len(blocks) == 5 and [i for i in stored if i in ids] == ids
