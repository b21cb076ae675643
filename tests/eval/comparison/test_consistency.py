"""Inputs of one command from different runs: compared by model, weights, probe, metric, subword
policy, tokenisation and head; what an input does not record is not compared."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pmask.cli import main
from pmask.common.errors import SettingError
from pmask.eval.comparison.consistency import Origin, bench_origin, check_same_origin, store_origin
from pmask.perturb.engine.impact_settings import ImpactSettings

from test_cli import SMALL


def origin(label, probe="pair", metric="dist", head=None):
    return Origin(label, model="/m", impact=ImpactSettings(metric, "avg", "words", probe, 0), head=head)


def test_probe_and_head_must_agree():
    check_same_origin([origin("a"), origin("b")])
    with pytest.raises(SettingError, match="probe: a has pair, b has single"):
        check_same_origin([origin("a"), origin("b", probe="single")])
    with pytest.raises(SettingError, match="head: a has 1, b has mean"):
        check_same_origin([origin("a", "attention", "weight", 1), origin("b", "attention", "weight", "mean")])
    check_same_origin([origin("a", "attention", "weight", 1), Origin("b", model="/m")])   # b records nothing


def test_a_store_without_a_probe_is_a_pair_store():
    held = store_origin("s", {"model": {"name": "/m"}, "metric": "dist", "subword": "avg"})
    assert held.impact == ImpactSettings("dist", "avg", "words", "pair", 0)


def test_a_bench_of_several_probes_compares_what_they_share(tmp_path):
    def bench(name, **settings):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(json.dumps({"model": {"name": "/m"}, "settings": settings}))
        return bench_origin(tmp_path / name)

    several = bench("several", probes=["pair", "attention"], metric=None, subword="avg", tokenize="words")
    check_same_origin([origin("pred"), several])
    alone = bench("alone", probes=["attention"], metric="weight", subword="avg", tokenize="words")
    with pytest.raises(SettingError, match="probe: pred has pair, the bench .* has attention"):
        check_same_origin([origin("pred"), alone])
    old = bench("old", metric="cos", subword="avg", tokenize="words")   # before probes: a pair bench
    with pytest.raises(SettingError, match="metric: pred has dist, the bench .* has cos"):
        check_same_origin([origin("pred"), old])


# --------------------------------------- report --bench warns when the bench scored other sentences than the prediction

CORPUS = Path(__file__).resolve().parents[2] / "data" / "mini.conllu"


def run_loud(args: list, capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = main([str(a) for a in args])   # not -q: it hides warnings
    return code, capsys.readouterr().err


@pytest.fixture(scope="module")
def made_benches(tmp_path_factory, tiny_bert_dir):
    """mini.conllu parsed with --limit 2 (layer 3), and benches of its first 2 and first 3 sentences."""
    base = tmp_path_factory.mktemp("report_sets")
    corpus = base / "mini.conllu"
    shutil.copy(CORPUS, corpus)
    pred = base / "pred.conllu"
    assert main(["parse", str(corpus), "--model", str(tiny_bert_dir), "--limit", "2", "-q", "-o", str(pred)]) == 0
    benches = {}
    for name, flags in (("two", ["--limit", "2"]), ("three", ["--limit", "3"]), ("short", ["--max-words", "2"])):
        benches[name] = base / name
        assert main(["bench", str(corpus), "--model", str(tiny_bert_dir), "--layers", "-1", "--decoders", "eisner",
                     *flags, "-q", "-o", str(benches[name])]) == 0
    return corpus, pred, benches


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if "sentences" in line and "bench" in line]


def test_a_bench_of_the_same_sentences_gives_no_warning(made_benches, tmp_path, capsys):
    corpus, pred, benches = made_benches
    code, err = run_loud(["report", pred, "--gold", corpus, "--bench", benches["two"], "-o", tmp_path / "r.html"],
                         capsys)
    assert code == 0 and not _warnings(err), err


@pytest.mark.parametrize(("bench", "theirs"), [("three", "3 sentences (limit 3, max-words none)"),
                                               ("short", "3 sentences (limit none, max-words 2)")])
def test_a_bench_of_other_sentences_warns_in_one_line(made_benches, tmp_path, capsys, bench, theirs):
    corpus, pred, benches = made_benches
    code, err = run_loud(["report", pred, "--gold", corpus, "--bench", benches[bench], "-o", tmp_path / "r.html"],
                         capsys)
    assert code == 0 and (tmp_path / "r.html").is_file()
    (line,) = _warnings(err)
    assert "2 sentences (limit 2, max-words none)" in line and theirs in line and "mini.conllu" in line, line


def test_a_bench_without_the_predictions_corpus_warns(made_benches, tmp_path, capsys, tiny_bert_dir):
    corpus, pred, _ = made_benches
    other = tmp_path / "other.conllu"
    other.write_text(CORPUS.read_text(encoding="utf-8").replace("Sue likes tea", "Sue likes tee"), encoding="utf-8")
    bench = tmp_path / "bench"
    assert run_loud(["bench", other, "--model", tiny_bert_dir, "--layers", "-1", "--decoders", "eisner", "--limit", "2",
                "-o", bench], capsys)[0] == 0
    code, err = run_loud(["report", pred, "--gold", corpus, "--bench", bench, "-o", tmp_path / "r.html"], capsys)
    assert code == 0
    (line,) = _warnings(err)
    assert "none of its treebanks" in line and "other.conllu" in line and "mini.conllu" in line, line


# --------------------------------------- report refuses a store or bench of another run; another corpus file only warns

@pytest.fixture(scope="module")
def made(tmp_path_factory, tiny_bert_dir):
    """A corpus, a store of it (tiny BERT, dist) and a prediction parsed from that store."""
    base = tmp_path_factory.mktemp("report_inputs")
    corpus = base / "small.conllu"
    corpus.write_text(SMALL, encoding="utf-8")
    store, pred = base / "store", base / "pred.conllu"
    assert main(["impact", str(corpus), "--model", str(tiny_bert_dir), "-q", "-o", str(store)]) == 0
    assert main(["parse", str(store), "-q", "-o", str(pred)]) == 0
    return corpus, store, pred


def run(args: list, capsys, quiet: bool = True) -> tuple[int, str]:
    code = main([str(a) for a in args] + (["-q"] if quiet else []))
    return code, capsys.readouterr().err


def test_inputs_of_the_same_run_make_a_report(made, tmp_path, capsys):
    corpus, store, pred = made
    code, err = run(["report", pred, "--gold", corpus, "--store", store, "-o", tmp_path / "r.html"], capsys)
    assert code == 0, err


def test_a_store_of_another_model_is_refused(made, tmp_path, capsys, tiny_roberta_dir):
    corpus, store, _ = made
    other = tmp_path / "roberta.conllu"
    assert run(["parse", corpus, "--model", tiny_roberta_dir, "-o", other], capsys)[0] == 0
    code, err = run(["report", other, "--gold", corpus, "--store", store, "-o", tmp_path / "r.html"], capsys)
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert "model:" in err and str(Path(tiny_roberta_dir).resolve()) in err and "the store" in err
    assert "--store" in err and not (tmp_path / "r.html").exists()


def test_a_store_of_another_metric_is_refused(made, tmp_path, capsys, tiny_bert_dir):
    corpus, store, _ = made
    cos = tmp_path / "cos.conllu"
    assert run(["parse", corpus, "--model", tiny_bert_dir, "--metric", "cos", "-o", cos], capsys)[0] == 0
    code, err = run(["report", cos, "--gold", corpus, "--store", store, "-o", tmp_path / "r.html"], capsys)
    assert code == 1 and "metric: " in err and "has cos" in err and "has dist" in err


def test_a_bench_of_another_model_is_refused(made, tmp_path, capsys):
    corpus, _, pred = made
    bench = tmp_path / "bench"
    bench.mkdir()
    rows = [{"treebank": "t", "layer": 1, "decoder": "eisner", "uas": 50.0}]
    (bench / "results.json").write_text(json.dumps({"rows": rows, "baselines": [], "model": {"name": "bert-large"},
                                                    "settings": {"metric": "dist"}}), encoding="utf-8")
    code, err = run(["report", pred, "--gold", corpus, "--bench", bench, "-o", tmp_path / "r.html"], capsys)
    assert code == 1 and "model:" in err and "bert-large" in err and "the bench" in err


def test_a_baseline_prediction_records_no_model_and_takes_any_store(made, tmp_path, capsys):
    corpus, store, _ = made
    rc = tmp_path / "rc.conllu"
    assert run(["parse", corpus, "--decoder", "right-chain", "-o", rc], capsys)[0] == 0
    code, err = run(["report", rc, "--gold", corpus, "--store", store, "-o", tmp_path / "r.html"], capsys)
    assert code == 0, err


def test_another_corpus_file_only_warns(made, tmp_path, capsys, tiny_bert_dir):
    corpus, store, _ = made
    copy = tmp_path / "copy.conllu"
    copy.write_text(SMALL.replace("# text = Dogs bark.", "# text = Dogs bark!"), encoding="utf-8")
    pred = tmp_path / "p.conllu"
    assert run(["parse", copy, "--model", tiny_bert_dir, "-o", pred], capsys)[0] == 0
    code, err = run(["report", pred, "--gold", copy, "--store", store, "-o", tmp_path / "r.html"], capsys, quiet=False)
    assert code == 0, err
    assert "sentences are matched by id and words" in err   # a warning: shown unless -q (only errors)


def test_eval_against_another_file_than_the_parsed_one_warns(made, tmp_path, capsys):
    corpus, _, pred = made
    assert run(["eval", pred, "--gold", corpus], capsys)[0] == 0
    assert "differs from the gold file" not in capsys.readouterr().err
    other = tmp_path / "other.conllu"
    other.write_text(SMALL.replace("# text = Dogs bark.", "# text = Dogs bark!"), encoding="utf-8")
    code, err = run(["eval", pred, "--gold", other], capsys, quiet=False)
    assert code == 0 and "differs from the gold file" in err and str(corpus) in err
