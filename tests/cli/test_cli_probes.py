"""The probes at the command line: the acceptance commands give the naive references' trees,
stores keep their probe, sweep draws one line per probe, heatmaps are labelled, refusals are one line."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pmask.cli import main
from pmask.corpora import read_corpus

PUD = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "ud" / "UD_English-PUD" / "en_pud-ud-test.conllu"
pytestmark = pytest.mark.skipif(not PUD.is_file(), reason="shared PUD data not present")


@pytest.fixture(scope="module")
def tiny4(tmp_path_factory):
    """A tiny BERT with 4 heads (the acceptance command decodes head 3)."""
    from pmask.perturb.testing import make_tiny_bert

    return make_tiny_bert(tmp_path_factory.mktemp("tiny4"), heads=4)


def run(args: list, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def heads_of(path: Path) -> list[list[int]]:
    return [list(s.heads) for s in read_corpus(path)]


def test_parse_attention_and_single_give_the_naive_references_trees(tiny4, tmp_path, capsys):
    from test_probes import Naive

    from pmask.perturb.models.load import load_model
    from pmask.trees.registry import decode_dependencies

    a, s = tmp_path / "a.conllu", tmp_path / "s.conllu"
    code, _, err = run(["parse", PUD, "--limit", 6, "--model", tiny4, "--probe", "attention", "--layer", 2, "--head", 3,
                        "--decoder", "eisner", "--root", "gold", "-q", "-o", a], capsys)
    assert code == 0, err
    code, _, err = run(["parse", PUD, "--limit", 6, "--model", tiny4, "--probe", "single", "--layer", 2, "-q",
                        "-o", s], capsys)
    assert code == 0, err
    lm = load_model(str(tiny4), device="cpu")
    gold = read_corpus(PUD, limit=6)
    want_a, want_s = [], []
    for sent in gold:
        naive = Naive(lm, list(sent.words))
        F_att = naive.attention([2])[0, 3]
        F_single = naive.single("dist", [2])[0]
        want_a.append(decode_dependencies("eisner", len(sent.words), F=F_att, root=sent.root).tolist())
        want_s.append(decode_dependencies("eisner", len(sent.words), F=F_single, root=sent.root).tolist())
    assert heads_of(a) == want_a and heads_of(s) == want_s
    meta = json.loads((tmp_path / "a.conllu.meta.json").read_text(encoding="utf-8"))
    assert meta["impact"] == {"probe": "attention", "metric": "weight", "subword": "avg", "tokenize": "words",
                              "context": 0, "head": 3}


def test_a_store_keeps_its_probe_and_every_head(tiny4, tmp_path, capsys):
    store = tmp_path / "att"
    assert run(["impact", PUD, "--limit", 4, "--model", tiny4, "--probe", "attention", "--layers", "all", "-q",
                "-o", store], capsys)[0] == 0
    manifest = json.loads((store / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["probe"] == "attention" and manifest["heads"] == 4
    for head in ("0", "max", "mean"):
        code, _, err = run(["parse", store, "--head", head, "--layer", 1, "-q", "-o", tmp_path / f"h{head}.conllu"],
                           capsys)
        assert code == 0, err
    code, _, err = run(["parse", store, "--probe", "single", "-o", tmp_path / "x.conllu"], capsys)
    assert code == 1 and "--probe single conflicts with the store" in err and "holds probe attention" in err
    code, _, err = run(["parse", store, "--head", 4, "-q", "-o", tmp_path / "x.conllu"], capsys)
    assert code == 1 and "--head 4 does not exist: the model has 4 heads" in err
    assert len(err.strip().splitlines()) == 1


def test_faithful_is_the_authors_probes_only_and_bias_is_distance_splits(tiny4, tmp_path, capsys):
    code, _, err = run(["parse", PUD, "--limit", 2, "--model", tiny4, "--probe", "attention", "--faithful",
                        "-o", tmp_path / "f.conllu"], capsys)
    assert code == 1 and "--faithful is the authors' pipeline of probes pair, distance, distortion; probe attention " \
        "has no faithful mode" in err
    assert not (tmp_path / "f.conllu").exists()
    code, _, err = run(["parse", PUD, "--limit", 2, "--model", tiny4, "--bias", 0.5, "-o", tmp_path / "b.conllu"],
                       capsys)
    assert code == 1 and "--bias is the right-branching bias of the distance-split decoder" in err
    code, _, err = run(["parse", PUD, "--probe", "nope", "-o", tmp_path / "n.conllu"], capsys)
    assert code == 2 and "invalid choice: 'nope'" in err


def test_sweep_draws_one_line_per_probe(tiny4, tmp_path, capsys):
    plot, table = tmp_path / "layers.png", tmp_path / "sweep.json"
    code, out, err = run(["sweep", PUD, "--limit", 4, "--model", tiny4, "--probe", "pair,distance,attention", "-q",
                          "--baselines", "--plot", plot, "--json", table], capsys)
    assert code == 0, err
    data = json.loads(table.read_text(encoding="utf-8"))
    assert data["metric_keys"] == ["pair uas", "distance uas", "attention uas"]
    assert [r["layer"] for r in data["rows"]] == [1, 2, 3] and all(len(r) == 4 for r in data["rows"])
    assert "pair (dist), distance (l2), attention (head mean)" == data["meta"]["probes"]
    assert plot.stat().st_size > 0 and "distance uas" in out
    code, _, err = run(["sweep", PUD, "--limit", 4, "--model", tiny4, "--probe", "pair,single", "--store",
                        tmp_path / "st", "-q"], capsys)
    assert code == 1 and "a store holds one probe" in err


def test_the_heatmap_names_the_probe(tiny4, tmp_path, capsys):
    page = tmp_path / "h.html"
    code, _, err = run(["heatmap", PUD, "--limit", 2, "--model", tiny4, "--probe", "attention", "--head", 1,
                        "--sentence", 0, "--layer", 2, "-q", "-o", page], capsys)
    assert code == 0, err
    assert "layer 2, probe attention (head 1)" in page.read_text(encoding="utf-8")
    folder = tmp_path / "maps"
    code, _, err = run(["heatmap", PUD, "--limit", 2, "--model", tiny4, "--probe", "distance", "--metric", "cos",
                        "--sentence", "0-1", "--as", "html", "-q", "-o", folder], capsys)
    assert code == 0, err
    assert all("probe distance (cos)" in p.read_text(encoding="utf-8") for p in folder.glob("*.html"))


def test_distance_split_parses_a_corpus(tiny4, tmp_path, capsys):
    out = tmp_path / "t.txt"
    code, _, err = run(["parse", PUD, "--limit", 3, "--model", tiny4, "--probe", "distance", "--decoder",
                        "distance-split", "--bias", 0.3, "-q", "-o", out], capsys)
    assert code == 0, err
    meta = json.loads((tmp_path / "t.txt.meta.json").read_text(encoding="utf-8"))
    assert meta["settings"]["bias"] == 0.3 and meta["impact"]["probe"] == "distance"
    assert len(out.read_text(encoding="utf-8").splitlines()) == 3


def test_sweep_applies_the_head_or_refuses_it(tiny4, tmp_path, capsys):
    store = tmp_path / "att"
    assert run(["impact", PUD, "--limit", 3, "--model", tiny4, "--probe", "attention", "--layers", "all", "-q",
                "-o", store], capsys)[0] == 0
    code, out, err = run(["sweep", store, "--head", 2, "-q", "--json", tmp_path / "s.json"], capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))["meta"]["probe"] == "attention (head 2)"
    code, _, err = run(["sweep", PUD, "--limit", 3, "--model", tiny4, "--head", 2, "-q"], capsys)
    assert code == 1 and "--head applies to probe attention" in err
    code, _, err = run(["sweep", PUD, "--limit", 3, "--model", tiny4, "--probe", "pair,single", "--head", 2, "-q"],
                       capsys)
    assert code == 1 and "none of them is swept" in err


def test_faithful_is_refused_for_a_cache_store_of_another_probe(tiny4, tmp_path, capsys):
    cache = tmp_path / "cache"
    assert run(["parse", PUD, "--limit", 2, "--model", tiny4, "--probe", "single", "--store", cache, "-q",
                "-o", tmp_path / "s.conllu"], capsys)[0] == 0
    code, _, err = run(["parse", PUD, "--limit", 2, "--store", cache, "--faithful", "-q", "-o", tmp_path / "f.conllu"],
                       capsys)
    assert code == 1 and "probe single has no faithful mode" in err and not (tmp_path / "f.conllu").exists()


def test_impact_refuses_a_head(tiny4, tmp_path, capsys):
    code, _, err = run(["impact", PUD, "--limit", 2, "--model", tiny4, "--probe", "attention", "--head", 1,
                        "-o", tmp_path / "s"], capsys)
    assert code == 1 and "--head is chosen when a store is read" in err and not (tmp_path / "s").exists()


def test_layer_0_is_decoded_for_distance_and_refused_for_the_masking_probes(tiny4, tmp_path, capsys):
    """The distances between the words' embeddings are a tree; masking probes are all zeros at layer 0."""
    code, _, err = run(["parse", PUD, "--limit", 3, "--model", tiny4, "--probe", "distance", "--layer", 0, "-q",
                        "-o", tmp_path / "d.conllu"], capsys)
    assert code == 0, err
    for probe in ("pair", "single"):
        code, _, err = run(["parse", PUD, "--limit", 3, "--model", tiny4, "--probe", probe, "--layer", 0, "-q",
                            "-o", tmp_path / "p.conllu"], capsys)
        assert code == 1 and "--layer 0" in err and not (tmp_path / "p.conllu").exists()
    code, _, err = run(["parse", PUD, "--limit", 3, "--model", tiny4, "--probe", "attention", "--layer", 0, "-q",
                        "-o", tmp_path / "a.conllu"], capsys)
    assert code == 1 and "has no attention weights" in err
    code, out, err = run(["sweep", PUD, "--limit", 3, "--model", tiny4, "--probes", "distance", "--layers", "0,1",
                          "-q"], capsys)
    assert code == 0 and "|     0 |" in out, err
    code, _, err = run(["sweep", PUD, "--limit", 3, "--model", tiny4, "--probes", "distance,single", "--layers",
                        "0,1", "-q"], capsys)
    assert code == 1 and "--layers 0" in err


def test_info_names_the_probe_and_its_heads(tiny4, tmp_path, capsys):
    store = tmp_path / "att"
    assert run(["impact", PUD, "--limit", 2, "--model", tiny4, "--probe", "attention", "-q", "-o", store],
               capsys)[0] == 0
    code, out, err = run(["info", store], capsys)
    assert code == 0 and "settings  probe attention (every head: 4 per layer), metric weight" in out, err
