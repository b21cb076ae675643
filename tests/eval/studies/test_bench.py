"""``pmask bench``: files, rows, baselines computed independently, reruns without model work."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from pmask.eval.scores.dependency_score import DependencyScore, SentenceUAS
from pmask.eval.studies.bench.run import BenchSettings, run_bench
from pmask.eval.studies.bench.treebanks import find_treebanks, language_of
from pmask.perturb.engine.impact_settings import ImpactSettings
from pmask.perturb.fill.model_spec import ModelSpec

DATA = Path(__file__).resolve().parents[3] / ".." / "shared" / "data"
UD = DATA / "ud"
TREEBANKS = ["German", "Chinese", "Thai", "French"]
needs_pud = pytest.mark.skipif(not all(any(UD.glob(f"UD_{t}-PUD/*.conllu")) for t in TREEBANKS),
                               reason="PUD treebanks not available")


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    from pmask.perturb.testing.multilingual import make_tiny_multilingual, pud_texts

    texts = pud_texts(UD, limit=60) if UD.is_dir() else ["a b c"]
    return make_tiny_multilingual(tmp_path_factory.mktemp("bench_model"), texts, vocab_size=1500, hidden=16,
                                  layers=2, max_positions=256)


def _inputs() -> list[Path]:
    return [next(UD.glob(f"UD_{t}-PUD/*.conllu")) for t in TREEBANKS]


class Loader:
    """Counts how often the model is loaded."""

    def __init__(self, model_dir: Path):
        self.model_dir = model_dir
        self.calls = 0

    def __call__(self):
        from pmask.perturb.models.load import load_model

        self.calls += 1
        return load_model(str(self.model_dir), device="cpu")


def _right_chain_uas(sentences) -> tuple[float, int]:
    """Right-chain with the gold root, computed here: word k -> k+1, the last word and the gold root -> 0."""
    correct = total = 0
    for s in sentences:
        n = len(s.words)
        root = s.heads.index(0) + 1
        pred = [k + 1 for k in range(1, n)] + [0]
        pred[root - 1] = 0
        correct += sum(p == g for p, g in zip(pred, s.heads))
        total += n
    return 100.0 * correct / total, total


@needs_pud
@pytest.mark.parametrize("tokenize", ["words", "text"])
def test_bench_files_rows_baselines_and_rerun(tmp_path, model_dir, tokenize):
    out = tmp_path / "out"
    settings = BenchSettings(model=ModelSpec(str(model_dir), impact=ImpactSettings("dist", "avg", tokenize, "pair",
                                                                                   0)), limit=2)
    loader = Loader(model_dir)
    result = run_bench(_inputs(), out, settings, model_loader=loader, progress=False)
    assert loader.calls == 1
    for name in ("results.json", "results.csv", "results.md", "layers.png", "heatmap-eisner.png", "heatmap-cle.png"):
        assert (out / name).is_file(), name
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert len(data["rows"]) == len(TREEBANKS) * 2 * 2          # treebanks x layers 1..2 x decoders
    assert {(r["treebank"], r["layer"], r["decoder"]) for r in data["rows"]} == {
        (p.stem, layer, d) for p in _inputs() for layer in (1, 2) for d in ("eisner", "cle")}
    for row in data["rows"]:
        assert {"treebank", "language", "layer", "decoder", "root", "uas", "uuas", "sentences", "words"} <= set(row)
        assert row["sentences"] == 2 and row["root"] == "gold"
    assert {r["language"] for r in data["rows"]} == set(TREEBANKS)
    assert data["settings"]["tokenize"] == tokenize and data["model"]["name"]
    for store in (out / "stores").iterdir():
        assert json.loads((store / "manifest.json").read_text(encoding="utf-8"))["tokenize"] == tokenize
    # baselines: right-chain with the gold root, computed independently, on the same sentences
    sentences = {tb.name: tb.sentences for tb in find_treebanks(_inputs(), limit=2)}
    for b in data["baselines"]:
        assert {"treebank", "baseline", "root", "uas", "words"} <= set(b)
        if b["baseline"] == "right-chain":
            uas, words = _right_chain_uas(sentences[b["treebank"]])
            assert b["uas"] == pytest.approx(uas) and b["words"] == words
    assert {b["baseline"] for b in data["baselines"]} == {"right-chain", "left-chain", "random-projective"}
    kinds = {d.get("decoder") or d.get("baseline") for d in data["breakdowns"]}
    assert {"eisner", "right-chain"} <= kinds
    some = data["breakdowns"][0]
    assert set(some) >= {"relation", "arc_length", "sentence_length"}
    assert all(":" not in rel for rel in some["relation"])    # universal relations
    with open(out / "results.csv", encoding="utf-8") as fh:
        assert len(list(csv.DictReader(fh))) == len(data["rows"]) + len(data["baselines"])
    assert "right-chain" in (out / "results.md").read_text(encoding="utf-8")

    # rerun: everything is reused, the model is never loaded, the numbers are the same
    def refuse():
        raise AssertionError("the model was loaded on a rerun")
    again = run_bench(_inputs(), out, settings, model_loader=refuse, progress=False)
    assert again.timing["computed"] == 0 and again.timing["reused"] == 2 * len(TREEBANKS)
    assert [r["uas"] for r in again.rows] == [r["uas"] for r in result.rows]

    # a torchrun rank other than 0 scores and writes nothing (rank 0 alone owns the result files)
    (out / "results.json").unlink()
    with pytest.MonkeyPatch.context() as env:
        env.setenv("RANK", "1")
        other = run_bench(_inputs(), out, settings, model_loader=refuse, progress=False)
    assert not other.is_main and other.rows == [] and not (out / "results.json").exists()


@needs_pud
def test_cli_bench_with_punct_excluded(tmp_path, model_dir, capsys):
    from pmask.cli import main

    out = tmp_path / "cli"
    args = ["bench", str(_inputs()[0]), "--model", str(model_dir), "--limit", "2", "--layers", "-1",
            "--decoders", "eisner", "--punct", "exclude", "-q", "-o", str(out)]
    assert main(args) == 0
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert [(r["layer"], r["decoder"]) for r in data["rows"]] == [(2, "eisner")]
    sents = find_treebanks([_inputs()[0]], limit=2)[0].sentences
    assert data["rows"][0]["words"] == sum(u not in ("PUNCT", "SYM") for s in sents for u in s.upos)
    assert main([a for a in args if a != "-q"]) == 0
    assert "0 computed, 2 reused" in capsys.readouterr().err   # the summary is a message (stderr)


def test_ptb_treebank_with_mart(tmp_path, model_dir):
    ptb = DATA / "ptb-sample" / "combined"
    if not ptb.is_dir():
        pytest.skip("PTB sample not available")
    result = run_bench([ptb], tmp_path / "ptb", BenchSettings(model=str(model_dir), limit=3, layers=[-1]),
                       model_loader=Loader(model_dir), progress=False)
    assert [(r["decoder"], r["layer"]) for r in result.rows] == [("mart", 2)]
    assert "uas" not in result.rows[0] and result.rows[0]["f1_sentence"] is not None
    assert {b["baseline"] for b in result.baselines} == {"right-branching", "left-branching", "random-binary"}


def test_settings_are_checked(tmp_path):
    from pmask.common.errors import PmaskError

    with pytest.raises(PmaskError, match="tokenisation mode"):
        run_bench([tmp_path], tmp_path, BenchSettings(model=ModelSpec("x", impact=ImpactSettings("dist", "avg",
                                                                                                 "chars", "pair", 0))),
                  progress=False)
    with pytest.raises(PmaskError, match="no .conllu"):
        run_bench([tmp_path], tmp_path / "o", BenchSettings(model="x"), progress=False)


def test_language_and_sentence_length_buckets():
    assert language_of(Path("ud/UD_Old_French-SRCMF/fro.conllu"), []) == "Old French"
    assert language_of(Path("x/de_pud-ud-test.conllu"), []) == "de"
    score = DependencyScore()
    score.per_sentence = [SentenceUAS("a", 4, 2, 3), SentenceUAS("b", 12, 6, 6), SentenceUAS("c", 8, 8, 8)]
    got = score.by_sentence_length()
    assert list(got) == ["1-10", "11-20"]
    assert got["1-10"]["accuracy"] == pytest.approx(100 * 10 / 12) and got["1-10"]["sentences"] == 2


def test_punctuation_exclusion_in_every_pud_language():
    """UPOS PUNCT/SYM marks punctuation in all 20 PUD languages (scripts without spaces included)."""
    from pmask.corpora import read_corpus
    from pmask.eval.scores.punct import punct_mask

    files = sorted(UD.glob("UD_*-PUD/*.conllu"))
    if len(files) < 20:
        pytest.skip("the 20 PUD treebanks are not available")
    for path in files:
        sents = read_corpus(path, "conllu", limit=40)
        masked = [m for s in sents for m in punct_mask(s)]
        assert masked == [u in ("PUNCT", "SYM") for s in sents for u in s.upos]
        assert any(masked), path.name


def test_rerun_with_more_layers_adds_them_to_the_stores(tmp_path, tiny_bert_dir):
    """bench fills its stores as ``pmask impact --resume`` does: layers a store lacks are added."""
    corpus = Path(__file__).resolve().parents[2] / "data" / "mini.conllu"
    spec = ModelSpec(str(tiny_bert_dir), device="cpu")
    run_bench([corpus], tmp_path, BenchSettings(spec, layers=[-1], limit=2, decoders=["eisner"]), progress=False,
              write=False)
    loader = Loader(tiny_bert_dir)
    more = run_bench([corpus], tmp_path, BenchSettings(spec, layers=[1, -1], limit=2, decoders=["eisner"]),
                     model_loader=loader, progress=False, write=False)
    assert loader.calls == 1 and [r["layer"] for r in more.rows] == [1, 3]
    assert (more.timing["computed"], more.timing["reused"], more.timing["model_loaded"]) == (0, 2, True)


def test_hoover_uuas_in_the_rows_and_baselines_of_dependency_treebanks(tmp_path, tiny_bert_dir):
    """``BenchSettings(scores=("hoover_uuas",))`` adds the score to every row, baseline row and results.csv, with the
    values ``pmask eval --hoover-uuas`` gives the same trees; a rerun that drops it needs rescore."""
    from pmask.cli import main
    from pmask.common.errors import SettingError
    from pmask.eval.comparison.compare import evaluate_files

    corpus = Path(__file__).resolve().parents[2] / "data" / "mini.conllu"
    spec = ModelSpec(str(tiny_bert_dir), device="cpu")
    out = tmp_path / "bench"
    result = run_bench([corpus], out, BenchSettings(spec, layers=[-1], decoders=["eisner"], scores=("hoover_uuas",)),
                       progress=False)
    parsed = tmp_path / "p.conllu"
    assert main(["parse", str(corpus), "--model", str(tiny_bert_dir), "--layer", "-1", "-q", "-o", str(parsed)]) == 0
    expected = evaluate_files(parsed, corpus, scores=["hoover_uuas"]).score.to_dict()
    row = result.rows[0]
    assert (row["hoover_uuas"], row["hoover_uuas_mean"]) == pytest.approx(
        (expected["hoover_uuas"], expected["hoover_uuas_mean"]))
    assert all(b["hoover_uuas"] is not None for b in result.baselines)
    header = (out / "results.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    assert header[8:13] == ["faithful", "uas", "uuas", "hoover_uuas", "hoover_uuas_mean"]
    assert json.loads((out / "results.json").read_text(encoding="utf-8"))["settings"]["hoover_uuas"] is True
    with pytest.raises(SettingError, match="hoover_uuas"):
        run_bench([corpus], out, BenchSettings(spec, layers=[-1], decoders=["eisner"]), progress=False)


def test_a_span_decoder_is_benched_without_symmetrize(tmp_path, tiny_bert_dir):
    mrg = Path(__file__).resolve().parents[2] / "data" / "mini.mrg"

    def rows(symmetrize: str | None) -> list:
        settings = BenchSettings(model=ModelSpec(str(tiny_bert_dir)), probes=["pair", "distortion"], layers=[1],
                                 symmetrize=symmetrize)
        result = run_bench([mrg], tmp_path / "bench", settings, progress=False, write=False, rescore=True)
        return [(r["probe"], r["decoder"], r["f1_sentence"]) for r in result.rows]

    plain, tril = rows(None), rows("tril")
    assert [r[:2] for r in plain] == [("pair", "mart"), ("distortion", "cky")]
    assert plain[1] == tril[1]   # the chart is read as it is (tril would mirror its empty lower triangle over it)


def test_a_causal_model_benched_beside_a_masked_one(tmp_path_factory, tmp_path, tiny_bert_dir):
    """Issue 45, item 6: one bench study per model over the same treebank: a causal model's rows are decoded by its
    family's mst on F + F^T (its UUAS by hand here), a masked model's by eisner and cle, and both stand next to the
    same baselines; ``to_pandas`` holds the rows."""
    import numpy as np
    from family_impacts import causal_model, max_spanning_edges

    import pmask
    from pmask.corpora import read_corpus

    folder, corpus = causal_model(tmp_path_factory, "gpt2")
    data, results = {}, {}
    for name, model in (("causal", folder), ("masked", tiny_bert_dir)):
        results[name] = run_bench([corpus], tmp_path / name, BenchSettings(model=ModelSpec(str(model))),
                                  progress=False)
        data[name] = json.loads((tmp_path / name / "results.json").read_text(encoding="utf-8"))
    assert {r["decoder"] for r in data["causal"]["rows"]} == {"mst"}
    assert data["causal"]["settings"]["symmetrize"] == "sum"
    assert {r["decoder"] for r in data["masked"]["rows"]} == {"eisner", "cle"}
    masked = [(b["baseline"], b["uas"], b["uuas"]) for b in data["masked"]["baselines"]]
    causal = [(b["baseline"], b["uas"], b["uuas"]) for b in data["causal"]["baselines"]]
    assert causal[:len(masked)] == masked and [b[0] for b in causal[len(masked):]] == ["connect-adjacent"]
    gold = read_corpus(corpus)
    layers = sorted(r["layer"] for r in data["causal"]["rows"])
    assert layers == [1, 2]
    F = pmask.impacts(gold, model=str(folder), layers=layers)
    for row in data["causal"]["rows"]:
        correct = sum(1 + len(max_spanning_edges(f[row["layer"] - 1] + f[row["layer"] - 1].T)
                              & {frozenset((k, h)) for k, h in enumerate(s.heads, start=1) if h})
                      for s, f in zip(gold, F))
        assert row["uuas"] == pytest.approx(100 * correct / sum(len(s.words) for s in gold), abs=0.01)
        assert np.isfinite(row["uas"])
    assert len(results["causal"].to_pandas()) == 2
