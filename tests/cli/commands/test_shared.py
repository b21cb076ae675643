"""Issue 27, item 3: commands on an unfinished store. Corpus-level results (parse, sweep) are refused
in one line that names the counts and the exact resume command, unless --allow-incomplete (then a
warning, and the outputs say what they cover); heatmap, export and report warn; info shows the state."""
from __future__ import annotations

import errno
import json
import os
import re
import shlex
import tempfile
from pathlib import Path

import pytest

from pmask.cli import main
from pmask.perturb.models import bundled
from pmask.perturb.models.bundled import DEFAULT_MODEL, bundled_model
from pmask.perturb.store import read_manifest

from test_cli import SMALL, heads_of


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


# ----------------------------------------------------- no --model: the bundled pmask-tiny-en, exactly as naming it does

NOTE = "no model given: using the bundled pmask-tiny-en"


@pytest.fixture(autouse=True)
def fresh_note(monkeypatch):
    """The default-model note is said once per process: forget that it was said."""
    monkeypatch.setattr(bundled, "_announced", set())


@pytest.fixture()
def ctrl_c_on_second_sentence(monkeypatch):
    """Ctrl-C arrives while the second sentence is being stored (once: a rerun is not interrupted)."""
    from pmask.perturb.store.writer import StoreWriter

    original, calls = StoreWriter.add, []

    def add(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return original(self, *args, **kwargs)

    monkeypatch.setattr(StoreWriter, "add", add)


def _stored(store: Path) -> int:
    return sum(1 for e in read_manifest(store)["sentences"] if "skipped" not in e)


def test_an_interrupted_default_model_cache_says_what_it_kept_and_the_same_command_continues_it(
        small, tmp_path, capsys, ctrl_c_on_second_sentence):
    store, out = tmp_path / "cache", tmp_path / "x.conllu"
    command = ["parse", str(small), "--store", str(store), "-o", str(out)]
    assert main([*command, "-q"]) == 130
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert "nothing was" not in err                                  # it was: one sentence is in the store
    assert "keeps 1 finished sentence;" in err and "rerun the same command" in err
    assert _stored(store) == 1 and not out.exists()

    assert main(command) == 0                                        # the same command again: it continues
    err = capsys.readouterr().err
    assert "1 computed, 1 reused" in err and "unfinished store" not in err, err
    assert _stored(store) == 2 and out.is_file()
    assert read_manifest(store)["model"]["name"] == DEFAULT_MODEL


def test_an_unfinished_cache_of_another_model_is_still_refused_without_model(small, tmp_path, capsys,
                                                                             tiny_bert_dir,
                                                                             ctrl_c_on_second_sentence):
    """Only the command that made the store continues it: a store of another model is not continued
    with the bundled one (nor with its own, which was not named)."""
    store = tmp_path / "cache"
    assert main(["parse", str(small), "--model", str(tiny_bert_dir), "--store", str(store), "-q",
                 "-o", str(tmp_path / "x.conllu")]) == 130
    capsys.readouterr()
    assert main(["parse", str(small), "--store", str(store), "-o", str(tmp_path / "y.conllu")]) == 1
    err = capsys.readouterr().err
    assert "unfinished store" in err and "--resume" in err and NOTE not in err
    assert _stored(store) == 1


@pytest.mark.parametrize("first, second", [([], ["--model", DEFAULT_MODEL]), (["--model", DEFAULT_MODEL], [])])
def test_stores_made_with_and_without_naming_the_bundled_model_are_interchangeable(small, tmp_path, capsys,
                                                                                   first, second):
    store = tmp_path / "cache"
    assert main(["parse", str(small), *first, "--store", str(store), "-q", "-o", str(tmp_path / "a.conllu")]) == 0
    assert read_manifest(store)["metric"] == bundled_model(DEFAULT_MODEL).defaults["metric"]
    capsys.readouterr()
    assert main(["parse", str(small), *second, "--store", str(store), "-o", str(tmp_path / "b.conllu")]) == 0
    err = capsys.readouterr().err
    assert "0 computed" in err or "computed" not in err, err          # read, not computed again
    assert (tmp_path / "a.conllu").read_text() == (tmp_path / "b.conllu").read_text()
    assert main(["sweep", str(small), *second, "--store", str(store), "--layers", "2", "--json",
                 str(tmp_path / "s.json")]) == 0, capsys.readouterr().err
    assert json.loads((tmp_path / "s.json").read_text())["meta"]["metric"] == "prob"


def test_a_named_bundled_model_takes_its_defaults_into_an_existing_empty_store(small, tmp_path, capsys):
    """An unfinished store made with the bundled model's defaults is continued by naming it too."""
    store = tmp_path / "cache"
    assert main(["impact", str(small), "--limit", "1", "-q", "-o", str(store)]) == 0
    assert main(["parse", str(small), "--limit", "1", "--model", DEFAULT_MODEL, "--store", str(store), "-q",
                 "-o", str(tmp_path / "p.conllu")]) == 0, capsys.readouterr().err


@pytest.mark.parametrize("bad, said", [("nosuch.conllu", "no such file"), ("a.png", "not UTF-8")])
def test_no_note_before_an_unrelated_one_line_error(tmp_path, capsys, monkeypatch, bad, said):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    assert main(["parse", bad, "-o", "p.conllu"]) == 1
    err = capsys.readouterr().err
    assert said in err and NOTE not in err and len(err.strip().splitlines()) == 1, err


def test_no_note_when_a_complete_store_is_resumed_without_loading_the_model(small, tmp_path, capsys, monkeypatch):
    store = tmp_path / "s"
    assert main(["impact", str(small), "-o", str(store)]) == 0
    assert capsys.readouterr().err.count(NOTE) == 1                   # it was loaded: said once
    monkeypatch.setattr(bundled, "_announced", set())
    assert main(["impact", str(small), "-o", str(store), "--resume"]) == 0
    err = capsys.readouterr().err
    assert "reused (store complete)" in err and NOTE not in err, err


# ------------------------------------------------------- the Ctrl-C line says what was kept, in the command's own terms

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


def test_parse_without_a_store_says_nothing_was_kept(small, tmp_path, capsys, monkeypatch, tiny_bert_dir):
    from pmask.perturb.fill import model_spec

    def load(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(model_spec.ModelSpec, "load", load)
    err = interrupted(["parse", small, "--model", tiny_bert_dir, "-o", tmp_path / "p.conllu"], capsys)
    assert "nothing was saved" in err and "--store" in err and "--resume" not in err
    assert not (tmp_path / "p.conllu").exists()


def test_commands_without_model_work_say_nothing_was_written(small, tmp_path, capsys, monkeypatch):
    import pmask.eval.comparison.compare as compare  # `pmask eval` imports it when it runs

    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(compare, "evaluate_files", stop)
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


def _read_only(monkeypatch, folder: Path) -> None:
    """Make ``folder`` behave as on a read-only file system: the tests run as root, whom ``chmod a-w``
    does not stop, so the permission check and every way of creating a file there are refused."""
    root = os.path.realpath(folder)
    inside = lambda p: os.path.realpath(p) == root or os.path.realpath(p).startswith(root + os.sep)  # noqa: E731
    access, mkstemp, open_fd = os.access, tempfile.mkstemp, os.open

    def no_access(path, mode, *args, **kwargs):
        return False if mode & os.W_OK and inside(path) else access(path, mode, *args, **kwargs)

    def no_mkstemp(*args, dir=None, **kwargs):
        if dir is not None and inside(dir):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(dir))
        return mkstemp(*args, dir=dir, **kwargs)

    def no_open(path, flags, *args, **kwargs):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT) and inside(path):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        return open_fd(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "access", no_access)
    monkeypatch.setattr(tempfile, "mkstemp", no_mkstemp)
    monkeypatch.setattr(os, "open", no_open)


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every entry of ``folder`` (the folder itself too) with its size and modification time."""
    entries = [folder, *folder.iterdir()]
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in entries}


@pytest.mark.parametrize("with_model", [True, False])
def test_a_complete_read_only_store_serves_as_a_cache(with_model, small, tmp_path, capsys, tiny_bert_dir,
                                                      monkeypatch):
    cache = tmp_path / "cache"
    first = tmp_path / "first.conllu"
    assert run(["parse", small, "--model", tiny_bert_dir, "--store", cache, "-q", "-o", first], capsys)[0] == 0
    before = _snapshot(cache)
    _read_only(monkeypatch, cache)
    from pmask.perturb.store import writer

    monkeypatch.setattr(writer, "lock_dir", lambda path: pytest.fail(f"{path} was locked for writing"))
    again = tmp_path / "again.conllu"
    model = ["--model", tiny_bert_dir] if with_model else []
    code, _, err = run(["parse", small, *model, "--store", cache, "-q", "-o", again], capsys)
    assert code == 0, err
    assert heads_of(first) == heads_of(again)
    assert _snapshot(cache) == before   # no writer's note, no manifest update, nothing else


# ---------------------------------------------------------------------------- check, then estimate, then compute

MINI = Path(__file__).resolve().parents[2] / "data" / "mini.conllu"


@pytest.mark.parametrize("command", [
    ["parse", "{mini}", "-o", "{tmp}/x.conllu"], ["impact", "{mini}", "-o", "{tmp}/st"],
    ["sweep", "{mini}"], ["heatmap", "{mini}", "--sentence", "1", "-o", "{tmp}/h.png"],
    ["bench", "{mini}", "-o", "{tmp}/b"],
], ids=lambda c: c[0])
def test_each_command_reads_its_corpus_once(tiny_bert_dir, tmp_path, capsys, command):
    """Issue 47 item 12, issue 46 item 5: one read of the corpus per command (the cost line read it again, and so
    did the resolution of ``impact``), said once; the checks, then the cost line, then the model work."""
    args = [a.format(mini=MINI, tmp=tmp_path) for a in command]
    code = main([*args, "--model", str(tiny_bert_dir), *(["--dry-run"] if command[0] != "heatmap" else [])])
    err = capsys.readouterr().err
    assert code == 0, err
    assert err.count(f"read 5 sentences from {MINI}") == 1, err
    if command[0] != "heatmap":
        assert err.index("read 5 sentences") < err.index("to compute:")


@pytest.mark.parametrize("corpus, flags", [
    ("mini.conllu", ["--faithful", "--decoder", "mart"]),                 # the authors' pipeline has no such decoder
    ("mini.conllu", ["--probe", "distortion", "--decoder", "eisner"]),    # a span chart no dependency decoder reads
    ("noheads.conllu", ["--root", "gold", "--decoder", "eisner"]),        # no gold heads to root
])
def test_a_refused_run_says_one_line_and_no_cost(tiny_bert_dir, tmp_path, capsys, corpus, flags):
    """Issue 47 item 12: a run refused by its checks says the refusal alone: nothing read is said, no cost line."""
    code = main(["parse", str(MINI.parent / corpus), "--model", str(tiny_bert_dir), *flags, "-o",
                 str(tmp_path / "x.conllu")])
    err = capsys.readouterr().err
    assert code == 1 and len(err.splitlines()) == 1 and err.startswith("pmask: error: "), err
