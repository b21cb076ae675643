"""Issue 37: a store of documents of EDUs is resumable; a document half computed when ``pmask impact`` is killed
(SIGKILL: nothing flushed, no handler runs) is kept between batches and continued by ``--resume``, and the
resumed store is bit-identical to an uninterrupted one (the decision of issue 39: the same batches, the same
numbers). The kill lands at a known point of the work: the process kills itself as engine batch KILL_AT
begins (test_impact.py's KILLER), whatever the machine's speed."""
from __future__ import annotations

import re
import signal
import subprocess
import sys

import numpy as np

from pmask.cli import main
from pmask.perturb.store import ImpactStore, read_manifest

from test_impact import KILLER, _env, threads  # noqa: F401 - the fixture is used by name

#: 8 EDUs of 3 words (every word one piece of the tiny tokenizer, or [UNK]): 26 tokens with [CLS] and [SEP]
LONG = ["the cat sat", "on a mat", "and it was", "warm there today", "because the sun", "was out again",
        "so the cat", "slept all day"]
SHORT = ["a dog ran", "it was fast"]


def _units(edus: list[str]) -> int:
    return len(edus) + 1   # the [CLS] unit 0 a store keeps


def _sequences(units: int) -> int:   # {u} for each unit, {u, v} for each pair (one input serves F[u][v], F[v][u])
    return units * (units + 1) // 2


def test_a_document_half_computed_when_killed_is_kept_and_resumed_bit_identical(tmp_path, tiny_bert_dir, capsys,
                                                                                threads):  # noqa: F811
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

