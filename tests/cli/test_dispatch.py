"""Issue 9 at the command line: outputs never replace inputs, flags that mean nothing are refused,
stores are not contradicted, layer 0 is not presented as real, gold is never dropped silently."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pmask.cli import main

from test_cli import SMALL, heads_of

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture()
def small(tmp_path: Path) -> Path:
    path = tmp_path / "small.conllu"
    path.write_text(SMALL, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def store(tmp_path_factory, tiny_bert_dir) -> Path:
    """A store of every layer (0 included) of the two SMALL sentences."""
    base = tmp_path_factory.mktemp("store")
    corpus = base / "small.conllu"
    corpus.write_text(SMALL, encoding="utf-8")
    out = base / "store"
    assert main(["impact", str(corpus), "--model", str(tiny_bert_dir), "--layers", "0,1,2,3", "-q",
                 "-o", str(out)]) == 0
    return out


def run(args: list, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------------------- defect 3: inputs are never outputs

def test_parse_refuses_to_overwrite_its_input(small, capsys):
    before = small.read_bytes()
    code, _, err = run(["parse", small, "--decoder", "right-chain", "-o", small], capsys)
    assert code == 1 and "would overwrite" in err
    assert small.read_bytes() == before


def test_outputs_inside_an_input_store_or_over_gold_are_refused(small, store, tmp_path, capsys):
    code, _, err = run(["heatmap", store, "--sentence", "a1", "-o", store / "manifest.json"], capsys)
    assert code == 1 and "would overwrite" in err
    rc = tmp_path / "rc.conllu"
    assert run(["parse", small, "--decoder", "right-chain", "-o", rc], capsys)[0] == 0
    code, _, err = run(["eval", rc, "--gold", small, "--json", small], capsys)
    assert code == 1 and "would overwrite" in err and "small.conllu" in err


def test_parse_corpus_refuses_in_the_library_too(small):
    from pmask.common.errors import PmaskError
    from pmask.corpora.corpus_spec import CorpusSpec
    from pmask.perturb.source import ImpactSource
    from pmask.pipeline.decoding import Decoding
    from pmask.pipeline.induce import parse_corpus

    with pytest.raises(PmaskError, match="would overwrite"):
        parse_corpus(ImpactSource.open(CorpusSpec(small)), small, Decoding("left-chain", root="gold",
                                                                           symmetrize="none"))


# ---------------------------------------------------------------------------- defect 4: heatmap file names

def test_heatmap_suffix_decides_and_one_file_takes_one_sentence(store, tmp_path, capsys):
    code, _, err = run(["heatmap", store, "--sentence", "a1", "-o", tmp_path / "h.jpg"], capsys)
    assert code == 1 and ".png, .svg, .pdf, .html" in err and not (tmp_path / "h.jpg").exists()
    code, _, err = run(["heatmap", store, "--sentence", "all", "-o", tmp_path / "two.png"], capsys)
    assert code == 1 and "give a folder" in err and "--output" in err and not (tmp_path / "two.png").exists()
    code, _, err = run(["heatmap", store, "--sentence", "a2", "-o", tmp_path / "one.svg"], capsys)
    assert code == 0, err
    assert (tmp_path / "one.svg").read_text(encoding="utf-8").lstrip().startswith("<?xml")


# ---------------------------------------------------------------------------- defect 5: flags vs a store

def test_flags_conflicting_with_a_store_are_refused(store, tmp_path, capsys, tiny_bert_dir):
    out = tmp_path / "p.conllu"
    code, _, err = run(["parse", store, "--metric", "prob", "-o", out], capsys)
    assert code == 1 and "--metric prob" in err and "metric dist" in err
    code, _, err = run(["parse", store, "--subword", "max", "-o", out], capsys)
    assert code == 1 and "subword avg" in err
    code, _, err = run(["parse", store, "--model", f"random:{tiny_bert_dir}", "-o", out], capsys)
    assert code == 1 and "--model" in err and "was made with" in err
    code, _, err = run(["parse", store, "--model", tiny_bert_dir, "--metric", "dist", "-q", "-o", out], capsys)
    assert code == 0, err
    meta = json.loads((tmp_path / "p.conllu.meta.json").read_text(encoding="utf-8"))
    assert meta["impact"] == {"probe": "pair", "metric": "dist", "subword": "avg", "tokenize": "words", "context": 0}
    assert meta["model"]["name"] == str(Path(tiny_bert_dir).resolve())


def test_the_model_is_named_the_same_on_every_route(small, store, tmp_path, capsys, tiny_bert_dir):
    direct, stored = tmp_path / "d.conllu", tmp_path / "s.conllu"
    assert run(["parse", small, "--model", tiny_bert_dir, "-q", "-o", direct], capsys)[0] == 0
    assert run(["parse", store, "-q", "-o", stored], capsys)[0] == 0
    names = [json.loads(Path(f"{p}.meta.json").read_text())["model"]["name"] for p in (direct, stored)]
    assert names[0] == names[1]
    assert heads_of(direct) == heads_of(stored)


# ---------------------------------------------------------------------------- defect 6: layer 0

def test_an_all_zero_layer_is_refused_and_all_starts_at_layer_1(store, tmp_path, capsys):
    code, _, err = run(["parse", store, "--layer", "0", "-o", tmp_path / "l0.conllu"], capsys)
    assert code == 1 and "all zeros" in err and "layer 0" in err
    assert not (tmp_path / "l0.conllu").exists()
    code, _, err = run(["sweep", store, "-q", "--json", tmp_path / "sweep.json"], capsys)
    assert code == 0, err
    assert [r["layer"] for r in json.loads((tmp_path / "sweep.json").read_text())["rows"]] == [1, 2, 3]


def test_sweep_from_a_model_leaves_layer_0_out(small, tmp_path, capsys, tiny_bert_dir):
    code, _, err = run(["sweep", small, "--model", tiny_bert_dir, "-q", "--json", tmp_path / "s.json"], capsys)
    assert code == 0, err
    assert [r["layer"] for r in json.loads((tmp_path / "s.json").read_text())["rows"]] == [1, 2, 3]


# ---------------------------------------------------------------------------- defect 7: gold never dropped silently

def test_heatmap_warns_about_a_sentence_missing_from_gold(store, tmp_path, capsys):
    gold = tmp_path / "gold.conllu"
    gold.write_text(SMALL.split("\n\n")[0] + "\n\n", encoding="utf-8")   # only a1
    code, _, err = run(["heatmap", store, "--sentence", "a2", "--gold", gold, "-o", tmp_path / "a2.png"], capsys)
    assert code == 0, err
    assert "sentence a2: not in the gold file" in err


def test_heatmap_refuses_gold_without_heads(store, tmp_path, capsys):
    code, _, err = run(["heatmap", store, "--sentence", "a1", "--gold", DATA / "mini.mrg", "-o", tmp_path / "x.png"],
                       capsys)
    assert code == 1 and "no dependency heads" in err and "ptb" in err


# ---------------------------------------------------------------------------- defect 8: flags that mean nothing

@pytest.mark.parametrize("args", [
    ["parse", "x.conllu", "--decoder", "right-chain", "--limit", "0", "-o", "y.conllu"],
    ["parse", "x.conllu", "--decoder", "right-chain", "--limit", "-3", "-o", "y.conllu"],
    ["parse", "x.conllu", "--decoder", "right-chain", "--max-words", "0", "-o", "y.conllu"],
    ["impact", "x.conllu", "--model", "m", "--resume", "--overwrite", "-o", "s"],
])
def test_meaningless_flags_are_usage_errors(args, capsys):
    code, _, err = run(args, capsys)
    assert code == 2 and "usage" in err


def test_max_words_filters_conllu_and_an_empty_result_is_an_error(small, tmp_path, capsys):
    out = tmp_path / "o.conllu"
    code, _, err = run(["parse", small, "--decoder", "right-chain", "--max-words", "3", "-o", out], capsys)
    assert code == 0, err
    assert heads_of(out) == [[2, 0, 0]]
    code, _, err = run(["parse", small, "--decoder", "right-chain", "--max-words", "2", "-o", out], capsys)
    assert code == 1 and "at most 2 words" in err and "--max-words" in err


# ---------------------------------------------------------------------------- defect 9: messages name the problem

def test_output_below_a_file_says_so(small, tmp_path, capsys):
    code, _, err = run(["parse", small, "--decoder", "right-chain", "-o", small / "x.conllu"], capsys)
    assert code == 1 and "is a file, not a folder" in err and "File exists" not in err


def test_eval_brackets_against_conllu_names_the_mismatch(small, tmp_path, capsys):
    pred = tmp_path / "pred.txt"
    pred.write_text("(X The (X cat (X sat (X down .))))\n", encoding="utf-8")
    code, _, err = run(["eval", pred, "--gold", small], capsys)
    assert code == 1 and "bracketed trees" in err and "dependency heads" in err and "outside brackets" not in err


def test_heatmap_gold_with_other_words_says_so(store, tmp_path, capsys):
    gold = tmp_path / "gold.conllu"
    gold.write_text(SMALL.replace("\tcat\tcat\t", "\tdog\tdog\t"), encoding="utf-8")
    code, _, err = run(["heatmap", store, "--sentence", "a1", "--gold", gold, "-o", tmp_path / "x.png"], capsys)
    assert code == 1 and "other words" in err and "gold heads for" not in err


# ---------------------------------------------------------------------------- friction

def test_one_default_root_and_a_clear_error_without_gold_heads(small, tmp_path, capsys):
    from pmask.cli import build_parser

    parser = build_parser()
    for command in (["parse", "x", "-o", "y"], ["sweep", "x"]):
        assert parser.parse_args(command).root is None   # chosen with the input: gold when it has gold heads
    code, _, err = run(["parse", DATA / "mini.txt", "--decoder", "right-chain", "-o", tmp_path / "t.conllu"], capsys)
    assert code == 0, err   # text has no gold heads: the root is free
    assert json.loads((tmp_path / "t.conllu.meta.json").read_text(encoding="utf-8"))["settings"]["root"] == "free"
    code, _, err = run(["parse", DATA / "mini.txt", "--decoder", "right-chain", "--root", "gold",
                        "-o", tmp_path / "g.conllu"], capsys)
    assert code == 1 and "has none; use --root free" in err


def test_baseline_from_a_store_uses_its_corpus(store, tmp_path, capsys):
    out = tmp_path / "rc.conllu"
    code, _, err = run(["parse", store, "--decoder", "right-chain", "-q", "-o", out], capsys)
    assert code == 0, err
    assert heads_of(out) == [[2, 3, 0, 5, 0], [2, 0, 0]]


def test_a_complete_cache_store_does_not_load_the_model(small, tmp_path, capsys, tiny_bert_dir, monkeypatch):
    cache = tmp_path / "cache"
    first = tmp_path / "first.conllu"
    assert run(["parse", small, "--model", tiny_bert_dir, "--store", cache, "-q", "-o", first], capsys)[0] == 0
    from pmask.perturb.fill import model_spec

    def no_loading(self):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(model_spec.ModelSpec, "load", no_loading)
    again = tmp_path / "again.conllu"
    code, _, err = run(["parse", small, "--model", tiny_bert_dir, "--store", cache, "-q", "-o", again], capsys)
    assert code == 0, err
    assert heads_of(first) == heads_of(again)


def test_a_missing_layer_names_the_stored_ones(store, tmp_path, capsys):
    from pmask.perturb.store import ImpactStore

    assert list(ImpactStore.open(store).layers) == [0, 1, 2, 3]
    code, _, err = run(["sweep", store, "--layers", "1,5", "-q"], capsys)
    assert code == 1 and "--layer" in err and "holds layers 0, 1, 2, 3" in err and "give --model" in err


def test_constituency_settings_leave_out_dependency_only_ones(tmp_path, capsys):
    out = tmp_path / "rb.txt"
    code, _, err = run(["parse", DATA / "mini.mrg", "--decoder", "right-branching", "-q", "-o", out], capsys)
    assert code == 0, err
    settings = json.loads((tmp_path / "rb.txt.meta.json").read_text())["settings"]
    assert settings == {"decoder": "right-branching", "seed": 0}


def test_eval_reads_max_words_from_the_prediction_meta(tmp_path, capsys):
    out = tmp_path / "rb.txt"
    code, _, err = run(["parse", DATA / "mini.mrg", "--decoder", "right-branching", "--max-words", "3", "-q",
                        "-o", out], capsys)
    assert code == 0, err
    code, _, err = run(["eval", out, "--gold", DATA / "mini.mrg", "--json", tmp_path / "s.json"], capsys)
    assert code == 0, err
    data = json.loads((tmp_path / "s.json").read_text())
    assert data["meta"]["max_words"] == 3 and data["sentences"] == len(out.read_text().splitlines())


def test_one_call_api_returns_trees_with_their_impacts(tiny_bert_dir):
    import pmask

    parsed = pmask.parse(["The cat sat down .", ["Dogs", "bark"]], model=str(tiny_bert_dir), decoder="eisner")
    assert [len(p.heads) for p in parsed] == [5, 2] and all(list(p.heads).count(0) == 1 for p in parsed)
    assert parsed[0].F.shape == (5, 5)
    baseline = pmask.parse(["a b c"], decoder="right-chain")
    assert baseline[0].heads.tolist() == [2, 3, 0] and baseline[0].F is None


def test_standard_input_as_corpus(tmp_path, capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("the cat sat\ndogs bark\n"))
    out = tmp_path / "stdin.conllu"
    code, stdout, err = run(["parse", "-", "--decoder", "right-chain", "--root", "free", "-o", out], capsys)
    assert code == 0, err
    assert heads_of(out) == [[2, 3, 0], [2, 0]] and "2 dependency trees" in err and stdout == ""


def test_export_command(store, tmp_path, capsys):
    """Each sentence's last-layer matrix, exactly as stored, one .npy file each."""
    import numpy as np

    from pmask.perturb.store import ImpactStore

    code, out, err = run(["export", store, "--format", "npy", "--layers", "-1", "-o", tmp_path / "npy"], capsys)
    assert code == 0, err
    files = sorted((tmp_path / "npy").glob("*.npy"))
    assert len(files) == 2 and f"wrote {len(files) + 1} files" in err   # + index.json
    stored = ImpactStore.open(store)
    for path, sent_id, n in zip(files, ("a1", "a2"), (5, 3)):
        matrix = np.load(path)
        assert matrix.shape == (n, n)
        np.testing.assert_array_equal(matrix, stored.get(sent_id).layer(-1))


# --------------------------------------------- every output and model-free setting is checked before anything is loaded

@pytest.fixture()
def no_model(monkeypatch):
    """Loading a model fails the test: the refusals must come before any model work."""
    from pmask.perturb.fill import model_spec

    def load(self):
        raise AssertionError("the model was loaded before the output was checked")

    monkeypatch.setattr(model_spec.ModelSpec, "load", load)


def run_err(args: list, capsys) -> tuple[int, str]:
    code = main([str(a) for a in args])
    err = capsys.readouterr().err
    return code, err


def one_line_error(code: int, err: str, *parts: str) -> None:
    assert code == 1, err
    assert err.startswith("pmask: error: ") and len(err.strip().splitlines()) == 1, err
    for part in parts:
        assert part in err, err


@pytest.mark.parametrize("make", [
    lambda t: ["parse", "{small}", "--model", "m", "-o", t / "folder"],
    lambda t: ["impact", "{small}", "--model", "m", "-o", t / "missing" / "store"],
    lambda t: ["sweep", "{small}", "--model", "m", "--plot", t / "layers.jpg"],
    lambda t: ["sweep", "{small}", "--model", "m", "--json", t / "missing" / "s.json"],
    lambda t: ["heatmap", "{small}", "--model", "m", "-s", "a1", "-o", t / "map.jpg"],
    lambda t: ["parse", "{small}", "--model", "m", "--store", t / "missing" / "cache", "-o", t / "p.conllu"],
    lambda t: ["bench", "{small}", "--model", "m", "-o", t / "missing" / "study"],
    lambda t: ["parse", "{small}", "--model", "m", "-o", t / "blocker" / "x.conllu"],
    lambda t: ["parse", "{small}", "--model", "m", "-o", t / "q.conllu"],     # its .meta.json is a folder
])
def test_impossible_outputs_are_refused_before_the_model_is_loaded(make, small, tmp_path, capsys, no_model):
    (tmp_path / "folder").mkdir()
    (tmp_path / "q.conllu.meta.json").mkdir()
    (tmp_path / "blocker").write_text("a file where a folder should be")
    args = [str(a).replace("{small}", str(small)) for a in make(tmp_path)] + ["-q"]
    code, err = run_err(args, capsys)
    one_line_error(code, err, "cannot write")
    assert not (tmp_path / "missing").exists()


def test_a_missing_folder_is_an_error_not_created(small, tmp_path, capsys):
    out = tmp_path / "nonexistent" / "dir" / "x.conllu"
    code, err = run_err(["parse", small, "--decoder", "right-chain", "-o", out], capsys)
    one_line_error(code, err, "folder", "does not exist")
    assert not (tmp_path / "nonexistent").exists()


def test_folders_a_command_creates_need_only_their_parent(small, tmp_path, capsys, tiny_bert_dir):
    store = tmp_path / "store"
    code, err = run_err(["impact", small, "--model", tiny_bert_dir, "--layers", "1", "-q", "-o", store], capsys)
    assert code == 0, err
    code, err = run_err(["heatmap", store, "-s", "all", "--layer", "1", "-q", "-o", tmp_path / "maps"], capsys)
    assert code == 0, err
    assert len(list((tmp_path / "maps").glob("*.png"))) == 2
    code, err = run_err(["export", store, "--format", "csv", "-o", tmp_path / "gone" / "csv"], capsys)
    one_line_error(code, err, "does not exist")


def test_parse_to_standard_output_writes_no_side_file(small, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["parse", str(small), "--decoder", "right-chain", "-q", "-o", "-"]) == 0
    assert "# sent_id = a1" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["small.conllu"]


def test_report_output_is_checked_before_reading(small, tmp_path, capsys):
    pred = tmp_path / "rc.conllu"
    assert run_err(["parse", small, "--decoder", "right-chain", "-q", "-o", pred], capsys)[0] == 0
    code, err = run_err(["report", pred, "--gold", small, "-o", tmp_path / "missing" / "r.html"], capsys)
    one_line_error(code, err, "does not exist")


@pytest.mark.parametrize("args", [
    ["parse", "{small}", "--model", "m", "--layer", "0", "-o", "{tmp}/p.conllu"],
    ["sweep", "{small}", "--model", "m", "--layers", "0,1"],
    ["bench", "{small}", "--model", "m", "--layers", "0,2", "-o", "{tmp}/study"],
])
def test_decoding_layer_0_is_refused_before_any_model_work(args, small, tmp_path, capsys, no_model):
    code, err = run_err([a.replace("{small}", str(small)).replace("{tmp}", str(tmp_path)) for a in args], capsys)
    one_line_error(code, err, "layer 0", "all zeros", "from 1 up")
    assert not (tmp_path / "study").exists()


def test_layer_0_can_still_be_stored_and_drawn(small, tmp_path, capsys, tiny_bert_dir):
    store = tmp_path / "store"
    code, err = run_err(["impact", small, "--model", tiny_bert_dir, "--layers", "0,1", "-q", "-o", store], capsys)
    assert code == 0, err
    code, err = run_err(["heatmap", store, "-s", "a1", "--layer", "0", "-q", "-o", tmp_path / "l0.svg"], capsys)
    assert code == 0, err
    code, err = run_err(["parse", store, "--layer", "0", "-o", tmp_path / "l0.conllu"], capsys)
    one_line_error(code, err, "--layer 0", "all zeros")


def test_a_late_all_zero_error_closes_the_engine_first(small, tiny_bert_dir):
    """The backstop (a negative layer that turns out to be layer 0) stops the engine's generator, so
    its progress bar is closed before the error is printed."""
    import numpy as np

    from pmask.common.errors import SettingError
    from pmask.corpora.corpus_spec import CorpusSpec
    from pmask.pipeline.decoding import Decoding
    from pmask.pipeline.induce import parse_sentences

    closed = []

    def impacts():
        try:
            while True:
                yield type("I", (), {"F": np.zeros((5, 5)), "F_cls": None})()
        finally:
            closed.append(True)

    sentences = CorpusSpec(small).read()
    stream = impacts()   # held here too, as a reference cycle would hold it: only an explicit close() ends it
    with pytest.raises(SettingError, match="all zeros"):
        list(parse_sentences(sentences, stream, Decoding("eisner", -4, "gold", symmetrize="none")))
    assert closed == [True]


def test_sweep_without_gold_is_refused_before_any_model_work(tmp_path, capsys, no_model):
    text = tmp_path / "plain.txt"
    text.write_text("the cat sat\ndogs bark\n", encoding="utf-8")
    code, err = run_err(["sweep", text, "--model", "m", "--root", "free", "-q"], capsys)
    one_line_error(code, err, "no gold heads", "sweep needs a gold corpus")   # text: the dependency default
    code, err = run_err(["sweep", text, "--model", "m", "--decoder", "eisner", "-q"], capsys)
    one_line_error(code, err, "no gold heads", "sweep needs a gold corpus")
