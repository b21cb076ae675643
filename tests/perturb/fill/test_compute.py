"""compute_store / iter_impacts on a tiny random BERT: store equals the engine, resumes, refusals."""
from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest
from resolved import PAIR_DIST, impact_of

from pmask.cli import main
from pmask.common.errors import LayerError, SettingError, StoreError
from pmask.corpora import Sentence
from pmask.perturb.engine.impact_settings import ImpactSettings
from pmask.perturb.engine.runner import ImpactStats, impact_matrices
from pmask.perturb.fill.compute import describe_stats
from pmask.perturb.models.load import load_model
from pmask.perturb.store import MANIFEST, ImpactStore, StoreSettings, plan_store

LONG = ["the"] * 70   # more than the tiny model's 64 tokens


@pytest.fixture(scope="module")
def tiny(tiny_bert_dir):
    from pmask.perturb.models.load import load_model

    return load_model(str(tiny_bert_dir), device="cpu")


@pytest.fixture(scope="module")
def corpus():
    from pmask.perturb.testing import TINY_SENTENCES

    words = [*TINY_SENTENCES[:3], LONG, ["naïve", "日本語", "She", "walked", "home", "."], TINY_SENTENCES[4]]
    return [Sentence(id=f"t{k}", words=list(w), path="tiny.conllu", line=10 * k + 1) for k, w in enumerate(words)]


@pytest.fixture(scope="module")
def reference(tiny, corpus, tmp_path_factory):
    """An uninterrupted store of ``corpus`` at layers (1, -1)."""
    from pmask.perturb.fill.compute import FillRequest, compute_store

    out = tmp_path_factory.mktemp("ref") / "store"
    summary = compute_store(tiny, FillRequest(corpus, out, impact=PAIR_DIST, layers=(1, -1), shard_size=2,
                                              progress=False))
    assert (summary.computed, summary.reused, summary.skipped_too_long) == (5, 0, 1)
    assert summary.complete and summary.sentences == 6 and summary.path == out
    return out


def test_compute_store_matches_engine(tiny, corpus, reference):
    from pmask.perturb.alignment import align
    from pmask.perturb.engine.runner import impact_matrices

    store = ImpactStore.open(reference)
    assert store.layers == (1, 3) and store.skipped == [{"index": 3, "id": "t3", "n": 70, "skipped": "too_long"}]
    direct = list(impact_matrices(tiny, [s.words for s in corpus], layers=(1, -1), metric="dist", subword="avg",
                                  tokenize="words"))
    assert direct[3] is None and store.get(3) is None and store.get("t3") is None
    for k in (0, 1, 2, 4, 5):
        item = store[corpus[k].id]
        assert item.index == k and item.words == corpus[k].words
        np.testing.assert_allclose(item.matrix, direct[k], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(item.layer(-1), direct[k][1], rtol=1e-5, atol=1e-6)
        al = align(tiny.tokenizer, corpus[k].words)
        assert item.input_ids.tolist() == al.input_ids and item.word_index.tolist() == al.word_index
        assert item.pieces == tiny.tokenizer.convert_ids_to_tokens(al.input_ids)
    assert store[1].word_pieces(2) == ["spend", "##ing"]
    m = store.manifest
    assert m["model"]["name"] == str(Path(tiny.name).resolve())
    assert m["model"]["num_layers"] == 3 and m["model"]["dtype"] == "float32"
    assert m["model"]["tokenizer"]["do_lower_case"] is True and m["model"]["random_init"] is False
    assert {"torch", "transformers", "pmask", "safetensors"} <= set(m["versions"])
    assert m["layers"] == {"requested": [1, -1], "resolved": [1, 3]} and m["include_cls"] is True


def _interrupt_after(monkeypatch, k_done: int) -> list[int]:
    """Make the engine raise KeyboardInterrupt after yielding ``k_done`` matrices; returns call log."""
    from pmask.perturb.engine import runner

    real = runner.impact_matrices
    calls: list[int] = []

    def interrupted(model, sentences, *args, **kwargs):
        sentences = list(sentences)
        calls.append(len(sentences))
        for k, matrix in enumerate(real(model, sentences, *args, **kwargs)):
            if k == k_done:
                raise KeyboardInterrupt
            yield matrix

    monkeypatch.setattr(runner, "impact_matrices", interrupted)
    return calls


def test_interrupted_run_resumes_to_the_same_store(tiny, corpus, reference, tmp_path, monkeypatch):
    from pmask.perturb.fill.compute import FillRequest, compute_store

    out = tmp_path / "store"
    calls = _interrupt_after(monkeypatch, 3)
    with pytest.raises(KeyboardInterrupt):
        compute_store(tiny, FillRequest(corpus, out, impact=PAIR_DIST, layers=(1, -1), shard_size=2, progress=False))
    partial = ImpactStore.open(out)
    assert partial.indices == [0, 1, 2] and not partial.complete   # the 3rd was flushed on the way out
    with pytest.raises(StoreError, match="a store is already there; give resume"):
        compute_store(tiny, FillRequest(corpus, out, impact=PAIR_DIST, layers=(1, -1), progress=False))
    summary = compute_store(tiny, FillRequest(corpus, out, impact=PAIR_DIST, layers=[-1], resume=True,
                                              progress=False))  # fewer layers
    assert (summary.computed, summary.reused, summary.skipped_too_long) == (2, 3, 1)
    assert calls == [6, 6]   # the resumed run plans 0-2 (stored: not run again) to batch 3-5 as the first run did
    done, ref = ImpactStore.open(out), ImpactStore.open(reference)
    assert done.complete and done.indices == ref.indices and done.skipped == ref.skipped
    for a, b in zip(done, ref):
        assert (a.index, a.words, a.pieces) == (b.index, b.words, b.pieces)
        np.testing.assert_allclose(a.cls_matrix, b.cls_matrix, rtol=1e-5, atol=1e-6)


def test_resume_of_finished_store_does_no_model_work(tiny, corpus, reference, monkeypatch):
    from pmask.perturb.engine import runner
    from pmask.perturb.fill.compute import FillRequest, compute_store

    def no_model_work(*args, **kwargs):
        raise AssertionError("the engine was called")

    monkeypatch.setattr(runner, "impact_matrices", no_model_work)
    before = (reference / MANIFEST).read_text(encoding="ascii")
    summary = compute_store(tiny, FillRequest(corpus, reference, impact=PAIR_DIST, layers=(1, -1), resume=True,
                                              progress=False))
    assert (summary.computed, summary.reused, summary.skipped_too_long) == (0, 5, 1)
    # the CLI can ask before loading the model at all
    early = StoreSettings(model=str(tiny.name), impact=ImpactSettings("dist", "avg", "words", "pair", 0), layers=(-1,))
    assert plan_store(reference, corpus, early, resume=True) == []
    assert (reference / MANIFEST).read_text(encoding="ascii") == before   # not even rewritten


def test_pipeline_refuses_other_settings(tiny, corpus, reference):
    from pmask.perturb.fill.compute import FillRequest, compute_store

    with pytest.raises(StoreError, match="metric: store has 'dist', requested 'cos'"):
        compute_store(tiny, FillRequest(corpus, reference, layers=(1, -1), impact=ImpactSettings("cos", "avg",
                                                                                                 "words", "pair", 0),
                                        resume=True, progress=False))
    with pytest.raises(StoreError, match="corpus: store has 6 sentences"):   # refused before a layer is added
        compute_store(tiny, FillRequest(corpus[1:5], reference, impact=PAIR_DIST, layers=(0, 1, -1), resume=True,
                                        progress=False))
    with pytest.raises(StoreError, match=r"lacks layers \[0\]; adding layers .* without torchrun"):
        compute_store(tiny, FillRequest(corpus, reference, impact=PAIR_DIST, layers=(0,), resume=True,
                                        progress=False), rank=0,
                      world_size=2)
    assert ImpactStore.open(reference).layers == (1, 3)
    with pytest.raises(LayerError, match="layer 7 out of range"):
        compute_store(tiny, FillRequest(corpus, reference, impact=PAIR_DIST, layers=(7,), resume=True, progress=False))


def test_iter_impacts_streams_without_a_store(tiny, corpus):
    from pmask.perturb.fill.compute import iter_impacts

    pairs = list(iter_impacts(tiny, corpus[2:5], layers=[-1], impact=PAIR_DIST, include_cls=True, progress=False))
    assert [s.id for s, _ in pairs] == ["t2", "t3", "t4"] and pairs[1][1] is None
    assert pairs[0][1].shape == (1, len(corpus[2].words) + 1, len(corpus[2].words) + 1)


def test_all_layers_leaves_out_layer_zero(tiny, corpus, tmp_path):
    from pmask.perturb.fill.compute import FillRequest, compute_store

    compute_store(tiny, FillRequest(corpus[:2], tmp_path / "st", impact=PAIR_DIST, layers="all", progress=False))
    store = ImpactStore.open(tmp_path / "st")
    assert store.layers == (1, 2, 3) and store.manifest["layers"]["requested"] == "all"


# ---------------------------------------------- stores of every probe: they equal the probe, resume, record their probe

PROBES = [("pair", "dist"), ("single", "cos"), ("attention", "weight"), ("distance", "l2"), ("distance", "jsd")]


def _store(tiny, sentences, out, probe, metric, layers=(1, -1), **kwargs):  # noqa: F811
    from pmask.perturb.fill.compute import FillRequest, compute_store

    request = FillRequest(sentences, out, layers=layers, impact=ImpactSettings(metric, "avg", "words", probe, 0),
                          shard_size=2, progress=False, **kwargs)
    return compute_store(tiny, request)


def _spec(probe=None, head=None):
    from pmask.perturb.fill.model_spec import ModelSpec

    return ModelSpec(impact=ImpactSettings(None, None, None, probe, 0), head=head)


def _held(spec, store):
    """The impact settings a run of ``spec`` reading ``store`` resolves to (the store's own come first)."""
    from pmask.pipeline.request import Inputs, Request, resolve

    return resolve(Request(spec), Inputs(held=store.settings.impact)).impact


@pytest.mark.parametrize("probe,metric", PROBES)
def test_a_store_holds_the_probe_and_resumes(tiny, corpus, tmp_path, probe, metric):  # noqa: F811
    from pmask.perturb.probes import probe_matrices

    out = tmp_path / "s"
    first = _store(tiny, corpus[:3], out, probe, metric)               # an interrupted run: 3 of 6 sentences
    assert first.computed == 3
    again = _store(tiny, corpus, out, probe, metric, resume=True)
    assert (again.computed, again.reused, again.skipped_too_long) == (2, 3, 1)
    assert _store(tiny, corpus, out, probe, metric, resume=True).computed == 0   # complete: no work
    store = ImpactStore.open(out)
    heads = 2 if (probe, metric) in (("attention", "weight"), ("distance", "jsd")) else None
    assert (store.probe, store.heads, store.settings.impact.metric) == (probe, heads, metric)
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["probe"] == probe and manifest["definitions"]["probe"].startswith(probe == "pair" and
                                                                                      "perturbed" or "")
    direct = list(probe_matrices(tiny, [s.words for s in corpus], impact_of(probe, metric=metric), layers=(1, -1),
                                 include_cls=True))
    for k in (0, 1, 2, 4, 5):
        item = store[k]
        assert item.cls_matrix.shape == direct[k].shape == ((2, heads) if heads else (2,)) + (len(item) + 1,) * 2
        np.testing.assert_allclose(item.cls_matrix, direct[k], rtol=1e-5, atol=1e-6)


def test_a_store_refuses_to_be_read_or_resumed_as_another_probe(tiny, corpus, tmp_path):  # noqa: F811
    out = tmp_path / "s"
    _store(tiny, corpus, out, "attention", "weight")
    store = ImpactStore.open(out)
    with pytest.raises(SettingError, match="probe single conflicts with the store .* which holds probe attention"):
        _spec("single").check_store(store)
    _spec().check_store(store)
    assert _held(_spec(), store).probe == "attention"                    # no probe given: the store's own
    with pytest.raises(StoreError, match="probe: store has 'attention', requested 'distance'"):
        _store(tiny, corpus, out, "distance", "jsd", resume=True)


def test_a_store_without_a_probe_field_is_a_pair_store(tiny, corpus, tmp_path):  # noqa: F811
    out = tmp_path / "s"
    _store(tiny, corpus[:2], out, "pair", "dist")
    manifest = json.loads((out / MANIFEST).read_text())
    for key in ("probe", "heads"):
        del manifest[key]
    del manifest["definitions"]["probe"]
    (out / MANIFEST).write_text(json.dumps(manifest))
    store = ImpactStore.open(out)
    assert store.probe == "pair" and store.heads is None
    _spec("pair").check_store(store)
    assert _held(_spec(), store).probe == "pair"
    with pytest.raises(SettingError, match="holds probe pair"):
        _spec("attention").check_store(store)
    assert _store(tiny, corpus[:2], out, "pair", "dist", resume=True).computed == 0


def test_layers_are_added_to_a_store_of_every_head(tiny, corpus, tmp_path):  # noqa: F811
    from pmask.perturb.fill.add_layers import add_layers
    out, both = tmp_path / "s", tmp_path / "both"
    _store(tiny, corpus, out, "attention", "weight", layers=[-1])
    assert add_layers(tiny, out, [1], progress=False).added == (1,)
    _store(tiny, corpus, both, "attention", "weight")
    for x, y in zip(ImpactStore.open(out), ImpactStore.open(both)):
        np.testing.assert_allclose(x.cls_matrix, y.cls_matrix, rtol=1e-5, atol=1e-6)


def test_the_impact_source_picks_the_head_and_marks_distances(tiny, corpus, tmp_path):  # noqa: F811
    from pmask.corpora.corpus_spec import CorpusSpec
    from pmask.perturb.source import ImpactSource
    path = tmp_path / "c.txt"
    path.write_text("\n".join(" ".join(s.words) for s in corpus) + "\n", encoding="utf-8")
    att, dist = tmp_path / "att", tmp_path / "dist"
    _store(tiny, corpus, att, "attention", "weight", corpus_path=path)
    _store(tiny, corpus, dist, "distance", "l2", corpus_path=path)
    held = ImpactStore.open(att)[0].matrix[1]                           # [H, n, n] at layer 3
    for head, want in ((None, held.mean(0)), ("max", held.max(0)), (1, held[1])):
        source = ImpactSource.open(CorpusSpec(att), model=_spec(head=head))
        impact = next(iter(source.impacts(-1)))
        np.testing.assert_allclose(impact.F, want, rtol=1e-6)
        assert impact.distance is False
        assert source.impact_settings()["head"] == (head if head is not None else "mean")
    with pytest.raises(SettingError, match="head 5 does not exist"):
        ImpactSource.open(CorpusSpec(att), model=_spec(head=5))
    source = ImpactSource.open(CorpusSpec(dist))
    assert next(iter(source.impacts(-1))).distance is True
    assert source.impact_settings() == {"probe": "distance", "metric": "l2", "subword": "avg", "tokenize": "words",
                                        "context": 0}


def test_export_of_a_store_of_every_head_says_it_exports_the_mean(tiny, corpus, tmp_path):  # noqa: F811
    from pmask.perturb.store import export_store

    out = tmp_path / "s"
    _store(tiny, corpus, out, "attention", "weight")
    export_store(out, tmp_path / "e.json", "json", layers=[-1])
    data = json.loads((tmp_path / "e.json").read_text(encoding="utf-8"))
    assert data["probe"] == "attention" and "the mean over the 2 heads" in data["heads"]
    first = ImpactStore.open(out)[0]
    np.testing.assert_allclose(data["sentences"][0]["matrices"]["3"], first.matrix[1].mean(0), rtol=1e-6)


def test_layer_0_of_an_attention_store_is_refused_before_anything_is_written(tiny, corpus, tmp_path):  # noqa: F811
    from pmask.common.errors import LayerError

    with pytest.raises(LayerError, match="layer 0"):
        _store(tiny, corpus, tmp_path / "s", "attention", "weight", layers=[0, 1])
    assert not (tmp_path / "s").exists()


# ---------------------------------------------------- the store summary is one readable line, shown once, on one stream

TEXT = "The cat sat on the mat .\nDogs bark loudly .\n"


def test_engine_stats_read_as_a_phrase():
    """The engine's own stats type: a renamed field fails here instead of reading as 0."""
    stats = ImpactStats(forward_sequences=3971, tokens=139759, fast_path=True, oom_retries=0, skipped=12)
    assert describe_stats(stats) == "3971 sequences, 139759 tokens, fast path, 12 skipped"
    assert describe_stats(ImpactStats(forward_sequences=4, tokens=9, fast_path=False, oom_retries=2)) == \
        "4 sequences, 9 tokens, full forward, 2 out-of-memory retries"
    assert describe_stats(ImpactStats(forward_sequences=4, tokens=9)) == "4 sequences, 9 tokens"
    assert describe_stats(None) == ""


def test_the_phrase_reports_what_the_engine_counted(tiny_bert_dir):
    stats = ImpactStats()
    sentences = [["the", "cat", "sat"], ["dogs", "bark"]]
    out = list(impact_matrices(load_model(str(tiny_bert_dir), device="cpu"), sentences, stats=stats, metric="dist",
                               subword="avg", tokenize="words"))
    assert len(out) == 2 and stats.forward_sequences > 0 and stats.tokens > stats.forward_sequences
    path = "fast path" if stats.fast_path else "full forward"
    assert describe_stats(stats) == f"{stats.forward_sequences} sequences, {stats.tokens} tokens, {path}"


@pytest.fixture()
def corpus_file(tmp_path):
    path = tmp_path / "small.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


def _impact(corpus_file, tiny_bert_dir, out, *extra):
    return main([str(a) for a in ("impact", corpus_file, "--model", tiny_bert_dir, "--layers", "1", "-o", out, *extra)])


def test_impact_shows_its_summary_once(corpus_file, tiny_bert_dir, tmp_path, capsys, caplog):
    caplog.set_level(logging.DEBUG)
    assert _impact(corpus_file, tiny_bert_dir, tmp_path / "st") == 0
    out, err = capsys.readouterr()
    shown = out + err + "\n".join(r.getMessage() for r in caplog.records)
    assert shown.count("2 computed, 0 reused") == 1 and err.count("2 computed, 0 reused") == 1 and out == ""
    assert "sequences" in err and "ImpactStats(" not in shown   # the summary line, on stderr (issue 27)


def test_a_complete_store_is_reported_once_under_torchrun(corpus_file, tiny_bert_dir, tmp_path, capsys, monkeypatch):
    assert _impact(corpus_file, tiny_bert_dir, tmp_path / "st", "-q") == 0
    capsys.readouterr()
    lines = []
    for rank in ("0", "1"):   # a finished store needs no process group: each rank plans and returns
        monkeypatch.setenv("RANK", rank)
        monkeypatch.setenv("WORLD_SIZE", "2")
        assert _impact(corpus_file, tiny_bert_dir, tmp_path / "st", "--resume") == 0
        out, err = capsys.readouterr()
        lines.append(err)
        assert out == ""
    assert lines[0].count("0 computed, 2 reused (store complete)") == 1 and "reused" not in lines[1]


def test_parse_with_a_cache_store_writes_on_rank_0_only(corpus_file, tiny_bert_dir, tmp_path, capsys, monkeypatch):
    """Under torchrun, ``parse CORPUS --store DIR`` fills the store on every rank; rank 0 alone
    decodes and writes the output (a finished store needs no process group)."""
    assert _impact(corpus_file, tiny_bert_dir, tmp_path / "st", "-q") == 0
    monkeypatch.setenv("WORLD_SIZE", "2")
    for rank in ("1", "0"):
        monkeypatch.setenv("RANK", rank)
        out = tmp_path / f"rank{rank}.conllu"
        assert main(["parse", str(corpus_file), "--model", str(tiny_bert_dir), "--store", str(tmp_path / "st"),
                     "--layer", "1", "--root", "free", "-o", str(out)]) == 0
        assert out.exists() == (rank == "0")
    assert capsys.readouterr().err.count("dependency trees") == 1
