"""``pmask bench --probes``: rows for every probe × layer × decoder, one store per probe, reruns
without model work, and a best head chosen on one half of the sentences and reported on the other."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pmask.common.errors import SettingError
from pmask.eval.studies.bench.probe_stores import store_dir
from pmask.eval.studies.bench.run import BenchSettings, run_bench
from pmask.perturb.engine.impact_settings import ImpactSettings
from pmask.perturb.fill.model_spec import ModelSpec

DATA = Path(__file__).resolve().parents[4] / ".." / "shared" / "data"
PUD = DATA / "ud" / "UD_English-PUD" / "en_pud-ud-test.conllu"
PTB = DATA / "ptb-sample" / "combined"
needs_pud = pytest.mark.skipif(not PUD.is_file(), reason="shared PUD data not present")
PROBES = ["pair", "single", "attention", "distance"]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    from pmask.perturb.testing import make_tiny_bert

    return make_tiny_bert(tmp_path_factory.mktemp("tiny4"), heads=4, layers=2)


class Loader:
    def __init__(self, model_dir):
        self.model_dir, self.calls = model_dir, 0

    def __call__(self):
        from pmask.perturb.models.load import load_model

        self.calls += 1
        return load_model(str(self.model_dir), device="cpu")


@pytest.fixture(scope="module")
def bench(model_dir, tmp_path_factory):
    if not PUD.is_file():
        pytest.skip("shared PUD data not present")
    out = tmp_path_factory.mktemp("bench") / "out"
    settings = BenchSettings(model=str(model_dir), limit=6, decoders=["eisner", "cle"], probes=PROBES)
    loader = Loader(model_dir)
    result = run_bench([PUD], out, settings, model_loader=loader, progress=False)
    assert loader.calls == 1
    return out, settings, result


def test_rows_for_every_probe_layer_and_decoder(bench):
    out, settings, result = bench
    keys = {(r["probe"], r["layer"], r["decoder"]) for r in result.rows}
    assert keys == {(p, k, d) for p in PROBES for k in (1, 2) for d in ("eisner", "cle")}
    assert len(result.rows) == len(keys)
    assert all(("head" in r) == (r["probe"] == "attention") for r in result.rows)
    for probe in PROBES:
        assert (store_dir(out, "en_pud-ud-test", probe) / "manifest.json").is_file()
    assert store_dir(out, "tb", "pair") == out / "stores" / "tb" and store_dir(out, "tb", "single").name == "tb.single"
    md = (out / "results.md").read_text(encoding="utf-8")
    assert "## Best setting of each probe per treebank" in md and "| attention (head mean) | eisner |" in md
    assert "even positions (0, 2, 4, ...)" in md and "odd positions (1, 3, 5, ...)" in md
    header = (out / "results.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header.startswith("kind,treebank,language,probe,head,layer")
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert data["settings"]["probes"] == PROBES and len(data["best_heads"]) == 2
    assert (out / "heatmap-attention-eisner.png").is_file() and (out / "heatmap-eisner.png").is_file()


def test_a_rerun_computes_nothing(bench, model_dir):
    out, settings, result = bench
    loader = Loader(model_dir)
    again = run_bench([PUD], out, settings, model_loader=loader, progress=False)
    assert loader.calls == 0 and again.timing["computed"] == 0 and again.timing["reused"] == 6 * len(PROBES)
    assert again.rows == result.rows and again.best_heads == result.best_heads


def test_the_best_head_is_chosen_on_even_positions_and_reported_on_odd_ones(bench):
    from pmask.corpora.corpus_spec import CorpusSpec
    from pmask.eval.comparison.compare import score_against_gold
    from pmask.perturb.fill.model_spec import ModelSpec
    from pmask.perturb.source import ImpactSource
    from pmask.perturb.store import ImpactStore
    from pmask.pipeline.decoding import Decoding

    out, settings, result = bench
    store = ImpactStore.open(store_dir(out, "en_pud-ud-test", "attention"))
    sentences = ImpactSource.open(CorpusSpec(store.path)).sentences
    even, odd = sentences[0::2], sentences[1::2]

    def uas(head, layer, chosen, decoder):
        impacts = ImpactSource(list(sentences), PUD, store=store, model=ModelSpec(head=head)).impacts(layer)
        impacts = list(impacts)[0 if chosen is even else 1::2]
        return score_against_gold(chosen, impacts, Decoding(decoder, layer, "gold", symmetrize="none"))[0].uas

    for row in result.best_heads:
        grid = {(layer, head): uas(head, layer, even, row["decoder"]) for layer in (1, 2) for head in range(4)}
        best = max(grid.values())
        assert row["choose_score"] == pytest.approx(best)
        assert (row["layer"], row["head"]) == min(k for k, v in grid.items() if v == best)   # ties: lower layer, head
        assert row["score"] == pytest.approx(uas(row["head"], row["layer"], odd, row["decoder"]))
        assert row["sentences"] == len(odd) == 3 and row["baseline"] == "right-chain"
        assert row["margin"] == pytest.approx(row["score"] - row["baseline_score"])


@needs_pud
def test_settings_are_checked_before_any_work(model_dir, tmp_path):
    loader = Loader(model_dir)
    for settings, match in [
        (BenchSettings(model=ModelSpec(str(model_dir), impact=ImpactSettings("dist", None, None, None, 0)),
                       probes=["attention"]), "probe attention takes"),
        (BenchSettings(model=ModelSpec(str(model_dir), head=1), probes=["pair"]), "head applies to probe attention"),
        (BenchSettings(model=str(model_dir), probes=["pair"], bias=0.5), "bias is the right-branching bias"),
    ]:
        with pytest.raises(SettingError, match=match):
            run_bench([PUD], tmp_path / "x", settings, model_loader=loader, progress=False)
    assert loader.calls == 0 and not (tmp_path / "x").exists()


def test_distance_split_on_ptb_with_a_bias(model_dir, tmp_path):
    if not PTB.is_dir():
        pytest.skip("PTB sample not available")
    settings = BenchSettings(model=str(model_dir), limit=3, layers=[-1], probes=["distance", "attention"],
                             decoders=["mart", "distance-split"], bias=0.5)
    result = run_bench([PTB], tmp_path / "ptb", settings, model_loader=Loader(model_dir), progress=False)
    assert {(r["probe"], r["decoder"]) for r in result.rows} == {(p, d) for p in ("distance", "attention")
                                                                 for d in ("mart", "distance-split")}
    assert all(r["f1_sentence"] is not None for r in result.rows)
    assert {b["baseline"] for b in result.best_heads} == {"right-branching"}
