"""``pmask bench --faithful``: each probe (and metric) with an authors' pipeline gives the trees and scores of
``pmask parse --faithful`` + ``pmask eval``; rows record ``faithful``; a clean bench folder is never mixed with a
faithful one; a finished faithful bench reads back."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from pmask.cli import main
from pmask.eval.studies.bench.run import BenchResult

PUD = Path(__file__).resolve().parents[4] / ".." / "shared" / "data" / "ud" / "UD_English-PUD" / "en_pud-ud-test.conllu"
LIMIT = "4"
pytestmark = pytest.mark.skipif(not PUD.is_file(), reason="UD English PUD not available (../shared/data)")


def _heads(path: Path, limit: int) -> list[list[int]]:
    """HEAD of every word (not multiword ranges, not empty nodes) of the first ``limit`` sentences of a CoNLL-U file,
    read here without pmask."""
    sentences: list[list[int]] = [[]]
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            if sentences[-1]:
                sentences.append([])
            continue
        cols = line.split("\t")
        if line.startswith("#") or "-" in cols[0] or "." in cols[0]:
            continue
        sentences[-1].append(int(cols[6]))
    return [s for s in sentences if s][:limit]


def _uas_uuas(pred: list[list[int]], gold: list[list[int]]) -> tuple[float, float]:
    """UAS and UUAS (a predicted arc counts when gold has it in either direction; ROOT's only as ROOT's), by hand."""
    words = directed = undirected = 0
    for p, g in zip(pred, gold):
        for i, h in enumerate(p, start=1):
            words += 1
            directed += h == g[i - 1]
            undirected += h == g[i - 1] or (h > 0 and g[h - 1] == i)
    return 100 * directed / words, 100 * undirected / words


@pytest.fixture(scope="module")
def faithful_bench(tiny_bert_dir, tmp_path_factory) -> Path:
    """pair with dist (Wu et al.'s pipeline) and cpmi (Hoover et al.'s), layer 1, Hoover's UUAS, first 4 sentences."""
    out = tmp_path_factory.mktemp("fbench") / "out"
    assert main(["bench", str(PUD), "--limit", LIMIT, "--model", str(tiny_bert_dir), "--probes", "pair",
                 "--metrics", "dist,cpmi", "--layers", "1", "--faithful", "--hoover-uuas", "-q", "-o", str(out)]) == 0
    return out


def test_every_row_is_parse_faithful_then_eval(faithful_bench, tiny_bert_dir, tmp_path):
    rows = json.loads((faithful_bench / "results.json").read_text(encoding="utf-8"))["rows"]
    # each pipeline's own decoders, all of them, and nothing else (cpmi: Hoover et al.'s two)
    assert sorted((r["metric"], r["decoder"]) for r in rows) == sorted(
        [("dist", d) for d in ("eisner", "cle", "mst-projective", "mst")]
        + [("cpmi", "mst-projective"), ("cpmi", "mst")])
    gold = _heads(PUD, int(LIMIT))
    for row in rows:
        pred = tmp_path / f"{row['metric']}-{row['decoder']}.conllu"
        assert main(["parse", str(PUD), "--limit", LIMIT, "--model", str(tiny_bert_dir), "--metric", row["metric"],
                     "--faithful", "--layer", "1", "--decoder", row["decoder"], "-q", "-o", str(pred)]) == 0
        scores = tmp_path / f"{row['metric']}-{row['decoder']}.json"
        assert main(["eval", str(pred), "--gold", str(PUD), "--hoover-uuas", "-q", "--json", str(scores)]) == 0
        evaluated = json.loads(scores.read_text(encoding="utf-8"))
        uas, uuas = _uas_uuas(_heads(pred, int(LIMIT)), gold)
        where = (row["metric"], row["decoder"])
        assert row["faithful"] is True, where
        assert row["uas"] == pytest.approx(uas, abs=1e-9) and row["uuas"] == pytest.approx(uuas, abs=1e-9), where
        assert row["hoover_uuas"] == pytest.approx(evaluated["hoover_uuas"], abs=1e-9), where
        assert row["hoover_uuas_mean"] == pytest.approx(evaluated["hoover_uuas_mean"], abs=1e-9), where
    # the authors' pipelines computed their own impacts, each into a store of its own
    stores = sorted(p.name for p in (faithful_bench / "stores").iterdir())
    assert stores == ["en_pud-ud-test.cpmi.faithful", "en_pud-ud-test.dist.faithful"]
    cpmi = json.loads((faithful_bench / "stores" / stores[0] / "manifest.json").read_text(encoding="utf-8"))
    assert json.dumps(cpmi).count('"words-ptb"') >= 1 and '"context": 30' in json.dumps(cpmi)


@pytest.fixture(scope="module")
def mixed(tiny_bert_dir, tmp_path_factory) -> tuple[Path, Path]:
    """A clean bench and a faithful one of pair and single (single has no authors' pipeline)."""
    base = tmp_path_factory.mktemp("mixed")
    common = [str(PUD), "--limit", LIMIT, "--model", str(tiny_bert_dir), "--probes", "pair,single", "--layers", "1",
              "--decoders", "eisner", "-q"]
    assert main(["bench", *common, "-o", str(base / "clean")]) == 0
    assert main(["bench", *common, "--faithful", "-o", str(base / "faithful")]) == 0
    return base / "clean", base / "faithful"


def _rows(out: Path) -> dict[str, dict]:
    return {r["probe"]: r for r in json.loads((out / "results.json").read_text(encoding="utf-8"))["rows"]}


def test_rows_record_faithful_and_a_probe_without_a_pipeline_runs_clean(mixed, tiny_bert_dir, tmp_path):
    clean, faithful = mixed
    rows, plain = _rows(faithful), _rows(clean)
    assert {p: r["faithful"] for p, r in rows.items()} == {"pair": True, "single": False}
    assert {p: r["faithful"] for p, r in plain.items()} == {"pair": False, "single": False}
    assert rows["single"]["uas"] == plain["single"]["uas"]   # single's clean pipeline, in both
    pred = tmp_path / "pair.conllu"   # pair's row is Wu et al.'s Eisner on the [CLS] layout (parse --faithful)
    assert main(["parse", str(PUD), "--limit", LIMIT, "--model", str(tiny_bert_dir), "--faithful", "--layer", "1",
                 "--decoder", "eisner", "-q", "-o", str(pred)]) == 0
    assert rows["pair"]["uas"] == pytest.approx(_uas_uuas(_heads(pred, int(LIMIT)), _heads(PUD, int(LIMIT)))[0])
    assert rows["pair"]["uas"] != plain["pair"]["uas"]   # on this model the two pipelines' trees differ
    with open(faithful / "results.csv", encoding="utf-8", newline="") as f:
        table = list(csv.DictReader(f))
    assert {(r["probe"], r["faithful"]) for r in table if r["kind"] == "model"} == {("pair", "True"),
                                                                                   ("single", "False")}
    assert {r["faithful"] for r in table if r["kind"] == "baseline"} == {""}
    md = (faithful / "results.md").read_text(encoding="utf-8")
    assert "| pair faithful | eisner |" in md and "| single | eisner |" in md
    # single reads the clean store; pair its own: no clean pair store in the faithful bench
    assert sorted(p.name for p in (faithful / "stores").iterdir()) == ["en_pud-ud-test.faithful",
                                                                      "en_pud-ud-test.single"]


def test_a_clean_bench_folder_is_not_rerun_faithful_nor_the_other_way(mixed, tiny_bert_dir, capsys):
    clean, faithful = mixed
    for out, flags in ((clean, ["--faithful"]), (faithful, [])):
        before = (out / "results.json").read_text(encoding="utf-8")
        code = main(["bench", str(PUD), "--limit", LIMIT, "--model", str(tiny_bert_dir), "--probes", "pair,single",
                     "--layers", "1", "--decoders", "eisner", *flags, "--rescore", "-q", "-o", str(out)])
        err = capsys.readouterr().err
        assert code == 1 and err.count("\n") == 1, err
        assert f"holds a bench made with other settings: --faithful {not flags} (this run: {bool(flags)}); its " \
            "stores were computed for those settings: choose another -o" in err, err
        assert (out / "results.json").read_text(encoding="utf-8") == before


def test_a_faithful_bench_reads_back(mixed, tiny_bert_dir):
    _, faithful = mixed
    recorded = json.loads((faithful / "results.json").read_text(encoding="utf-8"))
    read = BenchResult.read(faithful)
    assert read.settings.faithful is True and read.settings.to_dict() == recorded["settings"]
    assert read.rows == recorded["rows"]
    frame = read.to_pandas()
    assert dict(zip(frame["probe"], frame["faithful"])) == {"pair": True, "single": False}
    assert read.settings.recipe("pair").authors == "Wu et al." and read.settings.recipe("single") is None
    # the settings read back rerun the same study: nothing computed again, the same rows
    from pmask.eval.studies.bench.run import run_bench

    again = run_bench([PUD], faithful, read.settings, progress=False, write=False,
                      model_loader=lambda: pytest.fail("the model was loaded"))
    assert again.timing["computed"] == 0 and again.rows == recorded["rows"]
