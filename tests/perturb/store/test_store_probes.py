"""Stores of every probe: they equal the probe, resume, record their probe and refuse another one."""
from __future__ import annotations

import json

import numpy as np
import pytest
from test_store_pipeline import corpus, tiny  # noqa: F401  (fixtures: tiny BERT, 6 sentences, one too long)

from pmask.common.errors import SettingError, StoreError
from pmask.perturb.engine.impact_settings import ImpactSettings
from pmask.perturb.store import MANIFEST, ImpactStore

PROBES = [("pair", "dist"), ("single", "cos"), ("attention", "weight"), ("distance", "l2"), ("distance", "jsd")]


def _store(tiny, sentences, out, probe, metric, layers=(1, -1), **kwargs):  # noqa: F811
    from pmask.perturb.fill.compute import FillRequest, compute_store

    request = FillRequest(sentences, out, layers=layers, impact=ImpactSettings(metric, "avg", "words", probe),
                          shard_size=2, progress=False, **kwargs)
    return compute_store(tiny, request)


def _spec(probe=None, head=None):
    from pmask.perturb.fill.model_spec import ModelSpec

    return ModelSpec(impact=ImpactSettings(None, None, None, probe), head=head)


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
    direct = list(probe_matrices(tiny, [s.words for s in corpus], probe, layers=(1, -1), metric=metric,
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
    assert _spec().check_store(store).impact.probe == "attention"          # no probe given: the store's own
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
    assert _spec("pair").check_store(store).impact.probe == "pair"
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
