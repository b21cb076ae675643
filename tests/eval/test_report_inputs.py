"""Issue 18, defect 6: ``pmask report`` refuses a store or bench directory made by another run than the
prediction, in one line naming both values; different corpus files only warn."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pmask.cli import main
from test_cli import SMALL


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
