"""Issue 27, item 7: rerunning ``pmask bench`` into the same OUTDIR reuses a study made with the same
settings, extends it when the new one only adds to it, and otherwise refuses in one line before any
work (another sentence selection or model: another -o; other scoring settings or a narrower study:
``--rescore``); ``--max-words`` selects the sentences (the WSJ10 filter on PTB) and is recorded;
the best settings are printed as a table on standard output."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pmask.cli import main
from pmask.common.errors import PmaskError
from pmask.eval.studies.bench.probe_stores import store_dir
from pmask.eval.studies.bench.run import BenchSettings, run_bench
from pmask.perturb.fill.model_spec import ModelSpec
from pmask.perturb.testing import SHARED

CORPUS = Path(__file__).resolve().parents[3] / "data" / "mini.conllu"
PTB = (SHARED or Path("/nonexistent")) / "data" / "ptb-sample" / "combined"   # SHARED: $PMASK_SHARED or ../shared


class Loader:
    """Counts how often the model is loaded."""

    def __init__(self, model_dir: Path):
        self.model_dir, self.calls = model_dir, 0

    def __call__(self):
        from pmask.perturb.models.load import load_model

        self.calls += 1
        return load_model(str(self.model_dir), device="cpu")


def _settings(model_dir: Path, **changes) -> BenchSettings:
    options = {"layers": [1, -1], "decoders": ["eisner", "cle"], "limit": 2, **changes}
    return BenchSettings(ModelSpec(str(model_dir), device="cpu"), **options)


@pytest.fixture(scope="module")
def made(tiny_bert_dir, tmp_path_factory):
    """A finished study: mini.conllu, its first 2 sentences, layers 1 and 3, eisner and cle."""
    out = tmp_path_factory.mktemp("reruns") / "study"
    result = run_bench([CORPUS], out, _settings(tiny_bert_dir), progress=False)
    return out, result


@pytest.fixture
def study(made, tmp_path):
    """A fresh copy of the finished study (tests change it)."""
    out = tmp_path / "study"
    shutil.copytree(made[0], out)
    return out, made[1]


def _files(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_the_same_settings_reuse_everything(study, tiny_bert_dir):
    out, first = study
    loader = Loader(tiny_bert_dir)
    again = run_bench([CORPUS], out, _settings(tiny_bert_dir), model_loader=loader, progress=False)
    assert loader.calls == 0 and (again.timing["computed"], again.timing["reused"]) == (0, 2)
    assert again.rows == first.rows


@pytest.mark.parametrize(("changes", "named"), [
    ({"limit": 3}, "limit 2 (this run: 3)"),
    ({"limit": 1}, "limit 2 (this run: 1)"),
    ({"max_words": 6}, "max_words none (this run: 6)"),
])
def test_another_sentence_selection_is_refused_before_any_work(study, tiny_bert_dir, changes, named):
    out, _ = study
    before = _files(out)
    loader = Loader(tiny_bert_dir)
    with pytest.raises(PmaskError) as err:
        run_bench([CORPUS], out, _settings(tiny_bert_dir, **changes), model_loader=loader, progress=False)
    message = str(err.value)
    assert named in message and "another -o" in message and "\n" not in message, message
    assert loader.calls == 0 and _files(out) == before   # nothing replaced, no store extended


def test_another_model_is_refused(study, tiny_bert_dir):
    out, _ = study
    other = BenchSettings(ModelSpec(f"random:{tiny_bert_dir}", device="cpu"), layers=[1, -1],
                          decoders=["eisner", "cle"], limit=2)
    with pytest.raises(PmaskError, match=r"model .*\(this run: random:.*another -o"):
        run_bench([CORPUS], out, other, model_loader=Loader(tiny_bert_dir), progress=False)


@pytest.mark.parametrize(("changes", "named"), [
    ({"punct": "exclude"}, "punct include (this run: exclude)"),
    ({"root": "free"}, "root gold (this run: free)"),
    ({"layers": [-1]}, "layers 1 left out"),
    ({"decoders": ["eisner"]}, "decoders cle left out"),
])
def test_other_scoring_settings_or_a_narrower_study_need_rescore(study, tiny_bert_dir, changes, named):
    out, _ = study
    before = _files(out)
    with pytest.raises(PmaskError) as err:
        run_bench([CORPUS], out, _settings(tiny_bert_dir, **changes), model_loader=Loader(tiny_bert_dir),
                  progress=False)
    assert named in str(err.value) and "rescore" in str(err.value), str(err.value)
    assert _files(out) == before
    loader = Loader(tiny_bert_dir)
    again = run_bench([CORPUS], out, _settings(tiny_bert_dir, **changes), model_loader=loader, progress=False,
                      rescore=True)
    assert loader.calls == 0 and again.timing["computed"] == 0
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert all(data["settings"][key] == value for key, value in changes.items())
    plots = sorted(p.name for p in out.glob("heatmap-*.png"))   # none left from the replaced results
    assert plots == sorted(f"heatmap-{d}.png" for d in changes.get("decoders", ["eisner", "cle"]))


def test_a_wider_study_extends_the_earlier_one(study, tiny_bert_dir):
    out, first = study
    loader = Loader(tiny_bert_dir)
    wider = run_bench([CORPUS], out, _settings(tiny_bert_dir, layers="all", probes=["pair", "single"]),
                      model_loader=loader, progress=False)
    assert loader.calls == 1 and wider.timing["computed"] == 2   # the single probe's store
    kept = [r for r in wider.rows if r["probe"] == "pair" and r["layer"] in (1, 3)]
    assert kept == first.rows   # the earlier rows, unchanged
    assert {(r["probe"], r["layer"]) for r in wider.rows} == {(p, k) for p in ("pair", "single") for k in (1, 2, 3)}


def test_an_interrupted_study_is_not_continued_with_another_selection(study, tiny_bert_dir):
    out, _ = study
    (out / "results.json").unlink()   # the stores are there, the results were never written
    before = _files(out)
    with pytest.raises(PmaskError, match=r"limit 2 \(this run: 3\).*another -o"):
        run_bench([CORPUS], out, _settings(tiny_bert_dir, limit=3), model_loader=Loader(tiny_bert_dir),
                  progress=False)
    assert _files(out) == before


def test_the_command_line_refuses_in_one_line_and_names_the_flags(study, tiny_bert_dir, capsys):
    out, _ = study
    args = ["bench", str(CORPUS), "--model", str(tiny_bert_dir), "--layers", "1,-1", "--decoders", "eisner,cle",
            "-q", "-o", str(out)]
    assert main([*args, "--limit", "3"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("pmask: error: ") and len(err.strip().splitlines()) == 1, err
    assert "--limit 2 (this run: 3)" in err and "another -o" in err
    assert main([*args, "--limit", "2", "--punct", "exclude"]) == 1
    assert "--rescore" in capsys.readouterr().err
    assert main([*args, "--limit", "2", "--punct", "exclude", "--rescore"]) == 0


def test_the_best_settings_are_printed_as_a_table(study, tiny_bert_dir, capsys):
    out, _ = study
    args = ["bench", str(CORPUS), "--model", str(tiny_bert_dir), "--layers", "1,-1", "--decoders", "eisner,cle",
            "--limit", "2", "-o", str(out)]
    assert main(args) == 0
    stdout, stderr = capsys.readouterr()
    table = [line for line in stdout.splitlines() if line.startswith("|")]
    assert table[0].startswith("| treebank |") and "best layer" in table[0] and "margin" in table[0]
    assert {line.split("|")[4].strip() for line in table[2:]} == {"eisner", "cle"}
    assert "0 computed, 2 reused" in stderr and "reused" not in stdout   # the summary is a message


def test_max_words_selects_the_sentences_and_is_recorded(tmp_path, tiny_bert_dir, capsys):
    out = tmp_path / "short"
    assert main(["bench", str(CORPUS), "--model", str(tiny_bert_dir), "--layers", "-1", "--decoders", "eisner",
                 "--max-words", "2", "-q", "-o", str(out)]) == 0
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert data["settings"]["max_words"] == 2 and data["treebanks"][0]["sentences"] == 3
    manifest = json.loads((store_dir(out, "mini", "pair") / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["corpus"]["selection"]["max_words"] == 2
    assert [s["id"] for s in manifest["sentences"]] == ["3", "s4", "s5"]   # the sentences of 1 or 2 words
    assert "max-words 2" in (out / "results.md").read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["bench", str(CORPUS), "--model", str(tiny_bert_dir), "--max-words", "0", "-o", str(out)]) == 2


@pytest.mark.skipif(not PTB.is_dir(), reason="PTB sample not available")
def test_a_wsj10_study_over_the_ptb_sample(tmp_path, tiny_bert_dir):
    from pmask.corpora import read_corpus

    result = run_bench([PTB], tmp_path / "wsj10", BenchSettings(ModelSpec(str(tiny_bert_dir), device="cpu"),
                       layers=[-1], limit=6, max_words=10), progress=False)
    wsj10 = read_corpus(PTB, "ptb", max_words=10, limit=6)
    assert result.treebanks[0]["sentences"] == 6 and all(len(s.words) <= 10 for s in wsj10)
    assert [(r["decoder"], r["sentences"]) for r in result.rows] == [("mart", 6)]
    assert result.rows[0]["words"] == sum(len(s.words) for s in wsj10)
    assert {b["baseline"] for b in result.baselines} == {"right-branching", "left-branching", "random-binary"}
    assert result.settings.to_dict()["max_words"] == 10
