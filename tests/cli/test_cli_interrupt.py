"""Issue 18, defect 5: the Ctrl-C message says what was actually kept, in that command's own terms."""
from __future__ import annotations

from pathlib import Path

import pytest

from pmask.cli import main
from test_cli import SMALL


@pytest.fixture()
def small(tmp_path: Path) -> Path:
    path = tmp_path / "small.conllu"
    path.write_text(SMALL, encoding="utf-8")
    return path


@pytest.fixture()
def ctrl_c_after_one_sentence(monkeypatch):
    """Ctrl-C arrives while the second sentence is being stored."""
    from pmask.perturb.store.writer import StoreWriter

    original = StoreWriter.add
    calls = []

    def add(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return original(self, *args, **kwargs)

    monkeypatch.setattr(StoreWriter, "add", add)


def interrupted(args: list, capsys) -> str:
    assert main([str(a) for a in args] + ["-q"]) == 130
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    return err


def test_impact_says_how_many_sentences_the_store_keeps(small, tmp_path, capsys, tiny_bert_dir,
                                                         ctrl_c_after_one_sentence):
    err = interrupted(["impact", small, "--model", tiny_bert_dir, "-o", tmp_path / "s"], capsys)
    assert "keeps 1 finished sentence;" in err and "--resume" in err


def test_parse_with_a_cache_store_resumes_without_a_flag(small, tmp_path, capsys, tiny_bert_dir,
                                                         ctrl_c_after_one_sentence):
    err = interrupted(["parse", small, "--model", tiny_bert_dir, "--store", tmp_path / "c", "-o",
                       tmp_path / "p.conllu"], capsys)
    assert "keeps 1 finished sentence;" in err and "rerun the same command" in err and "--resume" not in err


def test_parse_without_a_store_says_nothing_was_kept(small, tmp_path, capsys, monkeypatch):
    from pmask.perturb.fill import model_spec

    def load(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(model_spec.ModelSpec, "load", load)
    err = interrupted(["parse", small, "--model", "m", "-o", tmp_path / "p.conllu"], capsys)
    assert "nothing was saved" in err and "--store" in err and "--resume" not in err
    assert not (tmp_path / "p.conllu").exists()


def test_commands_without_model_work_say_nothing_was_written(small, tmp_path, capsys, monkeypatch):
    import pmask.cli.commands.eval as cli

    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "evaluate_files", stop)
    err = interrupted(["eval", small, "--gold", small], capsys)
    assert "nothing was written" in err and "--resume" not in err and "shard" not in err


def test_ctrl_c_inside_a_long_sentence_keeps_its_work_and_resume_continues_it(tmp_path, tiny_bert_dir, capsys,
                                                                               monkeypatch):
    """Issue 33, item 3: Ctrl-C in the middle of a sentence keeps the sequences done (as a hard kill
    keeps them up to the last shard-seconds), says so, and --resume runs only the rest."""
    from pmask.perturb.engine import runner as engine

    n, batches, original = 30, [0], engine.BatchRunner._run_batch

    def run_batch(self, parts):
        batches[0] += 1
        if batches[0] == 6:
            raise KeyboardInterrupt
        return original(self, parts)

    monkeypatch.setattr(engine.BatchRunner, "_run_batch", run_batch)
    corpus = tmp_path / "c.txt"
    corpus.write_text(" ".join(["the", "cat", "sat", "on", "a", "mat"][k % 6] for k in range(n)) + "\n",
                      encoding="utf-8")
    args = ["impact", corpus, "--model", tiny_bert_dir, "--batch-tokens", 10 * (n + 2), "-o", tmp_path / "s"]
    err = interrupted(args, capsys)
    assert "keeps 0 finished sentences and the work done on the next one;" in err and "--resume" in err
    monkeypatch.setattr(engine.BatchRunner, "_run_batch", original)
    assert main([str(a) for a in args] + ["--resume"]) == 0
    summary = capsys.readouterr().err
    total = 1 + n + n * (n - 1) // 2
    assert f"from its 50 kept sequences of {total}" in summary and f"({total - 50} sequences," in summary, summary
