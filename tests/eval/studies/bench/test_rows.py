"""Issue 39 item 2: every bench row is judged by its decoder's headline: UUAS for the undirected decoders (mst),
their best layer chosen by it and their margin taken over connect-adjacent by UUAS; the tables say which score.
The expectations are counted here from the gold heads written in this file."""
from __future__ import annotations

import json

import pytest

from pmask.cli import main

#: (words, gold heads) of a treebank without punctuation: connect-adjacent is then the chain over every word.
SENTENCES = [(["the", "cat", "sat", "here"], [2, 3, 0, 3]),
             (["dogs", "eat", "big", "bones"], [2, 0, 4, 2]),
             (["she", "saw", "him", "today"], [2, 0, 2, 2])]


def _conllu(path):
    blocks = []
    for k, (words, heads) in enumerate(SENTENCES, 1):
        lines = [f"# sent_id = s{k}", f"# text = {' '.join(words)}"]
        lines += [f"{i}\t{w}\t{w}\tX\t_\t_\t{h}\t{'root' if h == 0 else 'dep'}\t_\t_"
                  for i, (w, h) in enumerate(zip(words, heads), 1)]
        blocks.append("\n".join(lines))
    path.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    return path


def _connect_adjacent_uuas() -> float:
    """Each word's edge of the chain, directed from the gold root: the root word's edge to ROOT is right, every other
    word's is one chain edge {k, k+1}; a word is right when its edge is a gold edge."""
    right = total = 0
    for words, heads in SENTENCES:
        gold = {frozenset((k, h)) for k, h in enumerate(heads, 1)}
        right += 1 + sum(frozenset((k, k + 1)) in gold for k in range(1, len(words)))
        total += len(words)
    return 100 * right / total


def test_undirected_rows_are_scored_by_uuas_against_connect_adjacent(tiny_bert_dir, tmp_path):
    assert _connect_adjacent_uuas() == pytest.approx(100 * 10 / 12)
    out = tmp_path / "out"
    assert main(["bench", str(_conllu(tmp_path / "tb.conllu")), "--model", str(tiny_bert_dir), "--layers", "1,2,3",
                 "--decoders", "eisner,mst", "-o", str(out)]) == 0
    data = json.loads((out / "results.json").read_text())
    best = {b["decoder"]: b for b in data["best"]}
    assert (best["mst"]["metric"], best["eisner"]["metric"]) == ("uuas", "uas")   # each decoder's own headline
    baselines = {b["baseline"]: b for b in data["baselines"]}
    assert set(baselines) == {"right-chain", "left-chain", "random-projective", "connect-adjacent"}
    assert baselines["connect-adjacent"]["uuas"] == pytest.approx(_connect_adjacent_uuas())
    for decoder, score, reference in (("mst", "uuas", "connect-adjacent"), ("eisner", "uas", "right-chain")):
        rows = {r["layer"]: r[score] for r in data["rows"] if r["decoder"] == decoder}
        layer = min(rows, key=lambda k: (-rows[k], k))   # the best by that score, ties to the lower layer
        assert (best[decoder]["metric"], best[decoder]["layer"]) == (score, layer)
        assert best[decoder]["score"] == rows[layer]
        assert best[decoder]["reference_baseline"] == reference
        assert best[decoder]["reference_score"] == baselines[reference][score]
        assert best[decoder]["reference_margin"] == pytest.approx(rows[layer] - baselines[reference][score], abs=1e-3)
        top = max((b[score] for b in data["baselines"]), default=None)
        assert best[decoder]["baseline_score"] == top
    md = (out / "results.md").read_text()
    mst = [line for line in md.splitlines() if line.startswith("| tb | pair | mst |")]
    assert mst == ["| tb | pair | mst | UUAS | " + " | ".join(
        f"{r['uuas']:.2f}" for r in sorted((r for r in data["rows"] if r["decoder"] == "mst"),
                                           key=lambda r: r["layer"])) + " |"]
    assert "| pair | mst | UUAS | " in md and "| pair | eisner | UAS | " in md   # the best table says which score
    assert "| tb | UUAS |" in md and "| tb | UAS |" in md   # the baselines by each score the rows are judged by


def _hoover(pred_edges_of) -> float:
    """Pooled Hoover UUAS on this punctuation-free treebank: gold edges without ROOT's, common edges over them."""
    common = gold_total = 0
    for words, heads in SENTENCES:
        gold = {frozenset((k, h)) for k, h in enumerate(heads, 1) if h}
        common += len(gold & pred_edges_of(len(words)))
        gold_total += len(gold)
    return 100 * common / gold_total


def test_bench_hoover_uuas_from_the_command_line(tiny_bert_dir, tmp_path):
    out = tmp_path / "out"
    assert main(["bench", str(_conllu(tmp_path / "tb.conllu")), "--model", str(tiny_bert_dir), "--layers", "1",
                 "--decoders", "mst", "--hoover-uuas", "-o", str(out)]) == 0
    data = json.loads((out / "results.json").read_text())
    assert data["settings"]["hoover_uuas"] is True
    assert all(r["hoover_uuas"] is not None for r in [*data["rows"], *data["baselines"]])
    adjacent = next(b for b in data["baselines"] if b["baseline"] == "connect-adjacent")
    chain = _hoover(lambda n: {frozenset((k, k + 1)) for k in range(1, n)})
    assert chain == pytest.approx(100 * 7 / 9) and adjacent["hoover_uuas"] == pytest.approx(chain)
    assert "hoover_uuas" in (out / "results.csv").read_text().splitlines()[0].split(",")
