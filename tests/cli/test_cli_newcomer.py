"""Issue 27, item 9 (a newcomer's list): a complete read-only store serves as a ``--store`` cache,
third-party loggers stay quiet, "too long" names the right sentence, text input ends lines at
newlines only, and messages count, score, name layers and flags as the rest of pmask does."""
from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

import pytest

from pmask.cli import main
from test_cli import SMALL, heads_of


@pytest.fixture()
def small(tmp_path: Path) -> Path:
    path = tmp_path / "small.conllu"
    path.write_text(SMALL, encoding="utf-8")
    return path


def run(args: list, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------------------- a: a read-only store as a cache

def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every entry of ``folder`` (the folder itself too) with its size and modification time."""
    entries = [folder, *folder.iterdir()]
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in entries}


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


# ---------------------------------------------------------------------------- b: quiet third-party loggers

@pytest.fixture(scope="module")
def store(tmp_path_factory, tiny_bert_dir) -> Path:
    """A store of the two SMALL sentences, layers 2 and 3."""
    base = tmp_path_factory.mktemp("store")
    corpus = base / "small.conllu"
    corpus.write_text(SMALL, encoding="utf-8")
    out = base / "store"
    assert main(["impact", str(corpus), "--model", str(tiny_bert_dir), "--layers", "2,3", "-q", "-o", str(out)]) == 0
    return out


@pytest.mark.parametrize("verbosity", [[], ["-v"]])
def test_a_pdf_heatmap_says_only_what_pmask_says(verbosity, store, tmp_path, capsys):
    said = {}
    for suffix in ("png", "pdf"):
        code, _, err = run(["heatmap", store, "--sentence", "a1", *verbosity, "-o", tmp_path / f"h.{suffix}"], capsys)
        assert code == 0, err
        said[suffix] = err.replace(f"h.{suffix}", "h.*").splitlines()
    assert said["pdf"] == said["png"]   # fontTools' font subsetting (PDF only) says nothing
    assert all(line.startswith("pmask: ") for line in said["pdf"])


# ---------------------------------------------------------------------------- c: "too long" names the sentence

def _conllu(sent_id: str, words: list[str]) -> str:
    rows = [f"{k}\t{w}\t{w}\tX\tX\t_\t{0 if k == 1 else 1}\t{'root' if k == 1 else 'dep'}\t_\t_"
            for k, w in enumerate(words, start=1)]
    return f"# sent_id = {sent_id}\n" + "\n".join(rows) + "\n\n"


def test_too_long_names_the_right_sentence(tmp_path, capsys, tiny_bert_dir):
    """The tiny model takes 64 tokens: the third sentence (line 9 of the file) is skipped, and the message
    names it by file, line and id, also when a cache store already holds the first sentence."""
    corpus = tmp_path / "long.conllu"
    corpus.write_text(_conllu("s1", ["a", "cat"]) + _conllu("s2", ["dogs", "bark"])
                      + _conllu("s3", ["the"] * 80), encoding="utf-8")
    cache = tmp_path / "cache"
    assert run(["parse", corpus, "--limit", 1, "--model", tiny_bert_dir, "--store", cache, "-q",
                "-o", tmp_path / "one.conllu"], capsys)[0] == 0
    code, _, err = run(["parse", corpus, "--model", tiny_bert_dir, "--store", cache, "-o", tmp_path / "all.conllu"],
                       capsys)
    assert code == 0, err
    told = [line for line in err.splitlines() if "too long for" in line or "exceed" in line]
    assert told and all(f"{corpus}:9 (sentence s3)" in line for line in told), err
    assert not any("s2" in line or "sentence 1 " in line for line in told), err
    assert len(told) == 1, err   # said once, not by the engine and by the store again


# ---------------------------------------------------------------------------- e: messages

def test_counts_take_the_noun_in_the_right_number(tmp_path, capsys):
    from pmask.common.labels import plural

    assert [plural(1, "treebank"), plural(2, "treebank"), plural(0, "file")] == ["1 treebank", "2 treebanks",
                                                                                   "0 files"]
    one = tmp_path / "one.conllu"
    one.write_text(SMALL.split("\n\n")[0] + "\n\n", encoding="utf-8")
    code, _, err = run(["parse", one, "--decoder", "right-chain", "-o", tmp_path / "rc.conllu"], capsys)
    assert code == 0, err
    assert "read 1 sentence from" in err and "rc.conllu: 1 dependency tree\n" in err, err


def test_scores_keep_their_decimals():
    from pmask.eval.outputs.writers import fmt_value

    assert [fmt_value(12, True), fmt_value(12.0, True), fmt_value(41.666, True)] == ["12.00", "12.00", "41.67"]
    assert fmt_value(12, False) == "12"   # a count or a setting stays as it is


def test_the_evaluated_row_and_its_settings_name_the_same_layer(small, tmp_path, capsys, tiny_bert_dir):
    pred = tmp_path / "p.conllu"
    assert run(["parse", small, "--model", tiny_bert_dir, "--layer", -1, "-q", "-o", pred], capsys)[0] == 0
    code, out, err = run(["eval", pred, "--gold", small], capsys)
    assert code == 0, err
    row = next(line for line in out.splitlines() if "layer 3" in line)
    assert "layer=3" in row and "layer=-1" not in row, row


def test_an_existing_store_names_the_flags_that_resume_or_replace_it(small, store, capsys, tiny_bert_dir):
    code, _, err = run(["impact", small, "--model", tiny_bert_dir, "--layers", "2,3", "-q", "-o", store], capsys)
    assert code == 1 and "--resume" in err and "--overwrite" in err, err


def test_info_on_a_file_says_what_info_reads(small, capsys):
    code, _, err = run(["info", small], capsys)
    assert code == 1
    assert err.count("\n") == 1 and "Not a directory" not in err, err
    assert str(small) in err and "impact store" in err and "file" in err, err
