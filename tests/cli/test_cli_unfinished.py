"""Issue 27, item 3: commands on an unfinished store. Corpus-level results (parse, sweep) are refused
in one line that names the counts and the exact resume command, unless --allow-incomplete (then a
warning, and the outputs say what they cover); heatmap, export and report warn; info shows the state."""
from __future__ import annotations

import json
import re
import shlex
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
def unfinished(small, tmp_path, monkeypatch, tiny_bert_dir) -> Path:
    """A real store of the 2-sentence corpus whose run was interrupted after the first sentence."""
    from pmask.perturb.store.writer import StoreWriter

    original, calls = StoreWriter.add, []

    def add(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return original(self, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(StoreWriter, "add", add)
        assert main(["impact", str(small), "--model", str(tiny_bert_dir), "--layers", "2,3", "-q",
                     "-o", str(tmp_path / "st")]) == 130
    return tmp_path / "st"


def run(args: list, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def refusal(err: str, store: Path) -> str:
    """The refusal's one line; returns the resume command it names."""
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"pmask: error: {store}: unfinished store: it holds 1 of 2 sentences")
    assert "its run was interrupted" in err and "--allow-incomplete" in err
    return re.search(r"finish it with: (pmask impact .* --resume);", err).group(1)


@pytest.mark.parametrize("command", [["parse", "-o", "p.conllu"], ["sweep", "--json", "s.json"],
                                     ["parse", "--decoder", "right-chain", "-o", "p.conllu"]])
def test_corpus_level_results_refuse_an_unfinished_store(unfinished, tmp_path, capsys, command):
    name, *rest = command
    outputs = [tmp_path / r if r.endswith((".conllu", ".json")) else r for r in rest]
    code, out, err = run([name, unfinished, *outputs], capsys)
    assert code == 1 and not out
    refusal(err, unfinished)
    assert not (tmp_path / "p.conllu").exists() and not (tmp_path / "s.json").exists()


def test_the_named_command_finishes_the_store(unfinished, small, tmp_path, capsys, tiny_bert_dir):
    code, _, err = run(["parse", unfinished, "-o", tmp_path / "p.conllu"], capsys)
    command = shlex.split(refusal(err, unfinished))
    assert command[:3] == ["pmask", "impact", str(small.resolve())] and "--layers" in command
    code, _, err = run(command[1:], capsys)   # summaries are messages (stderr)
    assert code == 0 and "1 computed, 1 reused" in err
    code, out, err = run(["parse", unfinished, "--layer", "2", "-o", tmp_path / "p.conllu"], capsys)
    assert code == 0 and "2 dependency trees" in err and "unfinished" not in out + err


def test_allow_incomplete_warns_and_the_outputs_say_what_they_cover(unfinished, tmp_path, capsys):
    code, out, err = run(["parse", unfinished, "--allow-incomplete", "-o", tmp_path / "p.conllu"], capsys)
    assert code == 0 and "1 dependency tree (only 1 of 2 sentences: the store" in err
    assert "unfinished store (its run was interrupted): using the 1 of 2 sentences it holds" in err
    meta = json.loads((tmp_path / "p.conllu.meta.json").read_text())
    assert meta["corpus"]["unfinished_store"] == {"store": str(unfinished), "complete": False, "sentences": 1,
                                                  "of": 2}
    code, out, err = run(["sweep", unfinished, "--allow-incomplete", "--json", tmp_path / "s.json"], capsys)
    assert code == 0 and "sentences: 1 of 2 (unfinished store)" in out and "using the 1 of 2" in err
    assert json.loads((tmp_path / "s.json").read_text())["meta"]["sentences"] == "1 of 2 (unfinished store)"


def test_single_sentence_views_proceed_with_a_warning(unfinished, tmp_path, capsys):
    code, out, err = run(["heatmap", unfinished, "-s", "a1", "-o", tmp_path / "a1.png"], capsys)
    assert code == 0 and (tmp_path / "a1.png").is_file() and "unfinished store" in err
    code, out, err = run(["heatmap", unfinished, "-s", "a2", "-o", tmp_path / "a2.png"], capsys)
    assert code == 1 and "--sentence a2: no sentence with that id or index (the store" in err
    assert "is unfinished: it holds 1 of 2 sentences)" in err
    code, out, err = run(["export", unfinished, "--format", "json", "-o", tmp_path / "e.json"], capsys)
    assert code == 0 and "unfinished store" in err
    exported = json.loads((tmp_path / "e.json").read_text())
    assert exported["complete"] is False and exported["corpus_sentences"] == 2 and len(exported["sentences"]) == 1


def test_report_with_an_unfinished_store_warns(unfinished, small, tmp_path, capsys):
    assert run(["parse", unfinished, "--allow-incomplete", "-o", tmp_path / "p.conllu"], capsys)[0] == 0
    code, out, err = run(["report", tmp_path / "p.conllu", "--gold", small, "--store", unfinished,
                          "-o", tmp_path / "r.html"], capsys)
    assert code == 0 and "unfinished store (its run was interrupted)" in err


def test_info_shows_the_state_and_the_resume_command(unfinished, capsys):
    code, out, _ = run(["info", unfinished], capsys)
    assert code == 0 and "unfinished, 1 of 2 sentences stored" in out
    assert "state     its run was interrupted" in out and re.search(r"resume    pmask impact .* --resume", out)
    code, out, _ = run(["info", unfinished, "--json"], capsys)
    info = json.loads(out)
    assert info["state"] == "interrupted" and info["resume"].endswith("--resume") and info["writer"] is None


def test_a_cache_store_read_without_a_model_is_refused_and_rerunning_with_the_model_resumes_it(
        small, tmp_path, capsys, monkeypatch, tiny_bert_dir):
    from pmask.perturb.store.writer import StoreWriter

    original, calls = StoreWriter.add, []

    def add(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return original(self, *args, **kwargs)

    cache, out = tmp_path / "cache", tmp_path / "p.conllu"
    with monkeypatch.context() as patch:
        patch.setattr(StoreWriter, "add", add)
        assert run(["parse", small, "--model", tiny_bert_dir, "--store", cache, "-o", out], capsys)[0] == 130
    code, _, err = run(["parse", small, "--store", cache, "-o", out], capsys)
    assert code == 1 and "unfinished store: it holds 1 of 2 sentences" in err and not out.exists()
    code, _, err = run(["parse", small, "--store", cache, "--allow-incomplete", "-o", out], capsys)
    assert code == 0 and "1 dependency tree (only 1 of 2 sentences" in err and "skipped" not in err
    code, _, err = run(["parse", small, "--model", tiny_bert_dir, "--store", cache, "-o", out], capsys)
    assert code == 0 and "2 dependency trees" in err and "only" not in err   # resumed, as before
