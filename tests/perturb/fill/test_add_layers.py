"""Adding layers to an existing store (issue 9): library, resume after a crash, CLI, refusals."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from resolved import PAIR_DIST

from pmask.common.errors import StoreError
from pmask.perturb.store import MANIFEST, ImpactStore

from test_compute import corpus, reference, tiny  # noqa: F401  (fixtures: tiny BERT, 6 sentences, layers 1, 3)


def _same_store(a_dir, b_dir) -> None:
    a, b = ImpactStore.open(a_dir), ImpactStore.open(b_dir)
    assert a.layers == b.layers and a.indices == b.indices and a.skipped == b.skipped and a.complete == b.complete
    for x, y in zip(a, b):
        assert (x.index, x.words, x.pieces) == (y.index, y.words, y.pieces)
        np.testing.assert_array_equal(x.input_ids, y.input_ids)
        np.testing.assert_allclose(x.cls_matrix, y.cls_matrix, rtol=1e-5, atol=1e-5)


def _top_layer_store(tiny, corpus, out):   # noqa: F811
    from pmask.perturb.fill.compute import FillRequest, compute_store

    compute_store(tiny, FillRequest(corpus, out, impact=PAIR_DIST, layers=[-1], shard_size=2, progress=False))
    return out


def test_add_layers_equals_a_store_computed_with_both(tiny, corpus, reference, tmp_path):  # noqa: F811
    from pmask.perturb.fill.add_layers import add_layers

    out = _top_layer_store(tiny, corpus, tmp_path / "s")
    done = add_layers(tiny, out, [1], progress=False)
    assert done.added == (1,) and done.layers == (1, 3) and done.sentences == 5
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["layers"]["resolved"] == [1, 3] and not any("layers" in s for s in manifest["shards"])
    assert manifest["runs"][-1]["added_layers"] == [1] and "torch" in manifest["runs"][-1]["versions"]
    assert sorted(p.name for p in out.iterdir()) == sorted([MANIFEST, *(s["file"] for s in manifest["shards"])])
    _same_store(out, reference)
    assert add_layers(tiny, out, [1, -1], progress=False).added == ()   # nothing left to do


def test_resume_with_more_layers_adds_them(tiny, corpus, reference, tmp_path):  # noqa: F811
    from pmask.perturb.fill.compute import FillRequest, compute_store

    out = _top_layer_store(tiny, corpus, tmp_path / "s")
    summary = compute_store(tiny, FillRequest(corpus, out, impact=PAIR_DIST, layers=(1, -1), resume=True,
                                              progress=False))
    assert summary.added_layers == (1,) and summary.computed == 0 and "layers 1 added" in summary.describe()
    _same_store(out, reference)


def test_an_interrupted_extension_leaves_a_readable_store_and_resumes(tiny, corpus, reference, tmp_path,  # noqa: F811
                                                                     monkeypatch):
    from pmask.perturb.engine import runner
    from pmask.perturb.fill.add_layers import add_layers

    out = _top_layer_store(tiny, corpus, tmp_path / "s")
    before = {x.index: x.cls_matrix.copy() for x in ImpactStore.open(out)}
    real, calls = runner.impact_matrices, []

    def crash_after_first_shard(*args, **kwargs):
        calls.append(1)
        if len(calls) > 1:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(runner, "impact_matrices", crash_after_first_shard)
    with pytest.raises(KeyboardInterrupt):
        add_layers(tiny, out, [1], progress=False)
    monkeypatch.undo()
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["layers"]["resolved"] == [3]
    assert [len(s.get("layers", [3])) for s in manifest["shards"]] == [2, 1, 1]   # the first shard is rewritten
    half = ImpactStore.open(out)                       # readable, with the old layers, same numbers
    assert half.layers == (3,) and {x.index: x.cls_matrix.tolist() for x in half} == \
        {k: m.tolist() for k, m in before.items()}
    (out / "shard-00099.safetensors").write_bytes(b"written just before a crash")
    (out / ".manifest.json.tmp").write_bytes(b"{")
    assert add_layers(tiny, out, [1], progress=False).shards == 2
    assert not (out / "shard-00099.safetensors").exists() and not (out / ".manifest.json.tmp").exists()
    _same_store(out, reference)


def test_another_model_cannot_add_layers(tiny, corpus, tmp_path, tiny_roberta_dir):  # noqa: F811
    from pmask.perturb.fill.add_layers import add_layers
    from pmask.perturb.models.load import load_model

    out = _top_layer_store(tiny, corpus, tmp_path / "s")
    with pytest.raises(StoreError, match="cannot add layers with this model: model"):
        add_layers(load_model(str(tiny_roberta_dir), device="cpu"), out, [1], progress=False)
    assert ImpactStore.open(out).layers == (3,)


# ---------------------------------------------------------------------------- the command line

SMALL_TEXT = "The cat sat on the mat .\nDogs bark loudly .\n"


def _cli(args, capsys):
    from pmask.cli import main

    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def cli_stores(tmp_path, tiny_bert_dir, capsys):
    corpus_file = tmp_path / "small.txt"
    corpus_file.write_text(SMALL_TEXT, encoding="utf-8")
    stores = {}
    for name, layers in (("top", "3"), ("both", "1,3")):
        stores[name] = tmp_path / name
        code, _, err = _cli(["impact", corpus_file, "--model", tiny_bert_dir, "--layers", layers, "-q",
                             "-o", stores[name]], capsys)
        assert code == 0, err
    return corpus_file, stores


def test_parse_a_store_at_a_missing_layer_computes_it_into_the_store(cli_stores, tmp_path, tiny_bert_dir, capsys):
    corpus_file, stores = cli_stores
    code, _, err = _cli(["parse", stores["top"], "--layer", "1", "--decoder", "eisner", "--root", "free", "-q",
                         "-o", tmp_path / "p.conllu"], capsys)
    assert code == 1 and "holds layers 3" in err and "--model" in err and "Traceback" not in err
    shutil.copytree(stores["top"], tmp_path / "cache")
    for k, args in enumerate((["parse", stores["top"]], ["parse", corpus_file, "--store", tmp_path / "cache"])):
        code, _, err = _cli([*args, "--layer", "1", "--model", tiny_bert_dir, "--decoder", "eisner", "--root", "free",
                             "-q", "-o", tmp_path / f"p{k}.conllu"], capsys)
        assert code == 0, err
        _same_store(args[-1], stores["both"])
    assert (tmp_path / "p0.conllu").read_text() == (tmp_path / "p1.conllu").read_text()


def test_impact_resume_with_more_layers_adds_them(cli_stores, tiny_bert_dir, capsys):
    corpus_file, stores = cli_stores
    code, out, err = _cli(["impact", corpus_file, "--model", tiny_bert_dir, "--layers", "1,3", "--resume",
                           "-o", stores["top"]], capsys)
    assert code == 0, err
    assert "layers 1 added" in err and "ImpactStats" not in out + err   # the summary line, on stderr
    _same_store(stores["top"], stores["both"])
