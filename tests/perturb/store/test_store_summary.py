"""Issue 9: the store summary is one readable line, shown once, on one stream (rank 0 alone under torchrun)."""
from __future__ import annotations

import logging

import pytest

from pmask.cli import main
from pmask.perturb.engine.runner import ImpactStats, impact_matrices
from pmask.perturb.fill.compute import describe_stats
from pmask.perturb.models.load import load_model

TEXT = "The cat sat on the mat .\nDogs bark loudly .\n"


def test_engine_stats_read_as_a_phrase():
    """The engine's own stats type: a renamed field fails here instead of reading as 0."""
    stats = ImpactStats(forward_sequences=3971, tokens=139759, fast_path=True, oom_retries=0, skipped=12)
    assert describe_stats(stats) == "3971 sequences, 139759 tokens, fast path, 12 skipped"
    assert describe_stats(ImpactStats(forward_sequences=4, tokens=9, fast_path=False, oom_retries=2)) == \
        "4 sequences, 9 tokens, full forward, 2 out-of-memory retries"
    assert describe_stats(ImpactStats(forward_sequences=4, tokens=9)) == "4 sequences, 9 tokens"
    assert describe_stats(None) == ""


def test_the_phrase_reports_what_the_engine_counted(tiny_bert_dir):
    stats = ImpactStats()
    sentences = [["the", "cat", "sat"], ["dogs", "bark"]]
    out = list(impact_matrices(load_model(str(tiny_bert_dir), device="cpu"), sentences, stats=stats))
    assert len(out) == 2 and stats.forward_sequences > 0 and stats.tokens > stats.forward_sequences
    path = "fast path" if stats.fast_path else "full forward"
    assert describe_stats(stats) == f"{stats.forward_sequences} sequences, {stats.tokens} tokens, {path}"


@pytest.fixture()
def corpus_file(tmp_path):
    path = tmp_path / "small.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


def _impact(corpus_file, tiny_bert_dir, out, *extra):
    return main([str(a) for a in ("impact", corpus_file, "--model", tiny_bert_dir, "--layers", "1", "-o", out, *extra)])


def test_impact_shows_its_summary_once(corpus_file, tiny_bert_dir, tmp_path, capsys, caplog):
    caplog.set_level(logging.DEBUG)
    assert _impact(corpus_file, tiny_bert_dir, tmp_path / "st") == 0
    out, err = capsys.readouterr()
    shown = out + err + "\n".join(r.getMessage() for r in caplog.records)
    assert shown.count("2 computed, 0 reused") == 1 and err.count("2 computed, 0 reused") == 1 and out == ""
    assert "sequences" in err and "ImpactStats(" not in shown   # the summary line, on stderr (issue 27)


def test_a_complete_store_is_reported_once_under_torchrun(corpus_file, tiny_bert_dir, tmp_path, capsys, monkeypatch):
    assert _impact(corpus_file, tiny_bert_dir, tmp_path / "st", "-q") == 0
    capsys.readouterr()
    lines = []
    for rank in ("0", "1"):   # a finished store needs no process group: each rank plans and returns
        monkeypatch.setenv("RANK", rank)
        monkeypatch.setenv("WORLD_SIZE", "2")
        assert _impact(corpus_file, tiny_bert_dir, tmp_path / "st", "--resume") == 0
        out, err = capsys.readouterr()
        lines.append(err)
        assert out == ""
    assert lines[0].count("0 computed, 2 reused (store complete)") == 1 and "reused" not in lines[1]


def test_parse_with_a_cache_store_writes_on_rank_0_only(corpus_file, tiny_bert_dir, tmp_path, capsys, monkeypatch):
    """Under torchrun, ``parse CORPUS --store DIR`` fills the store on every rank; rank 0 alone
    decodes and writes the output (a finished store needs no process group)."""
    assert _impact(corpus_file, tiny_bert_dir, tmp_path / "st", "-q") == 0
    monkeypatch.setenv("WORLD_SIZE", "2")
    for rank in ("1", "0"):
        monkeypatch.setenv("RANK", rank)
        out = tmp_path / f"rank{rank}.conllu"
        assert main(["parse", str(corpus_file), "--model", str(tiny_bert_dir), "--store", str(tmp_path / "st"),
                     "--layer", "1", "--root", "free", "-o", str(out)]) == 0
        assert out.exists() == (rank == "0")
    assert capsys.readouterr().err.count("dependency trees") == 1
