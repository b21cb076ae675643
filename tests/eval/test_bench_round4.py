"""Issue 33, item 8: ``bench`` draws one bar over all treebanks with the remaining time, its PNGs are
large enough to read, and a PTB treebank's language is named as one."""
from __future__ import annotations

import shutil
import struct
from pathlib import Path
from types import SimpleNamespace

from pmask.cli import main
from pmask.eval.studies.bench.results import plot_heatmap, plot_layers
from pmask.eval.studies.bench.treebanks import find_treebanks

DATA = Path(__file__).resolve().parents[1] / "data"


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def test_a_ptb_folder_is_english_not_its_folder_name(tmp_path):
    folder = tmp_path / "combined"
    folder.mkdir()
    shutil.copy(DATA / "mini.mrg", folder / "wsj_0001.mrg")
    treebank, = find_treebanks([folder])
    assert treebank.name == "combined" and treebank.language == "English (PTB)"
    assert find_treebanks([DATA / "mini.conllu"])[0].language == "mini"   # CoNLL-U: as before


def _one_treebank() -> SimpleNamespace:
    rows = [{"treebank": "en_pud-ud-test", "language": "English", "probe": "pair", "decoder": "eisner",
             "layer": layer, "uas": score} for layer, score in ((1, 39.8), (2, 48.2))]
    baselines = [{"treebank": "en_pud-ud-test", "baseline": "right-chain", "uas": 41.0}]
    return SimpleNamespace(rows=rows, baselines=baselines,
                           treebanks=[{"treebank": "en_pud-ud-test", "language": "English"}])


def test_bench_pngs_of_one_treebank_are_large_enough_to_read(tmp_path):
    result = _one_treebank()
    heat = plot_heatmap(result, "eisner", tmp_path / "heatmap-eisner.png")
    width, height = _png_size(heat)
    assert width >= 800 and height >= 400, (width, height)   # was 440 × 123 px
    width, height = _png_size(plot_layers(result, tmp_path / "layers.png"))
    assert width >= 800 and height >= 400, (width, height)   # was 330 × 335 px


def test_bench_draws_one_bar_over_all_treebanks(tiny_bert_dir, tmp_path, capsys, monkeypatch):
    from pmask.common import progress

    monkeypatch.setattr(progress, "watched", lambda stream=None: True)   # as on a terminal
    inputs = []
    for name in ("a", "b"):
        inputs.append(tmp_path / f"{name}.conllu")
        shutil.copy(DATA / "mini.conllu", inputs[-1])
    assert main(["bench", *map(str, inputs), "--model", str(tiny_bert_dir), "--layers", "1",
                 "--decoders", "eisner", "-o", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    overall = [line for line in err.replace("\r", "\n").splitlines() if line.startswith("treebanks")]
    assert overall, err
    final = overall[-1]
    assert "10/10" in final and "sentence" in final and "<" in final   # counted in sentences, time left shown
    assert "2/2: b" in final
