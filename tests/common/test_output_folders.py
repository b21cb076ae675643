"""A folder output is replaced whole, as shell redirection replaces a file (issue 47 item 7)."""
from __future__ import annotations

import os
import stat

import pytest

from pmask.common.errors import OutputError
from pmask.common.output_folders import NEW_FOLDER_MODE, check_output_folder, write_output_folder


def _files(folder):
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.iterdir())}


def test_a_new_folder_then_the_same_folder_again_holds_only_the_last_runs_files(tmp_path):
    out = tmp_path / "pred"
    write_output_folder(out, {"a.dep": "1", "b.dep": "2"}, ".dep")
    assert _files(out) == {"a.dep": "1", "b.dep": "2"}
    assert stat.S_IMODE(out.stat().st_mode) == NEW_FOLDER_MODE
    os.chmod(out, 0o700)
    write_output_folder(out, {"b.dep": "3"}, ".dep")
    assert _files(out) == {"b.dep": "3"}                             # a.dep of the first run is gone
    assert stat.S_IMODE(out.stat().st_mode) == 0o700                 # the folder keeps its permission bits
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pred"]    # no temporary folder left beside it


def test_a_link_to_a_folder_stays_a_link_to_the_new_folder(tmp_path):
    real = tmp_path / "real"
    write_output_folder(real, {"a.dep": "1"}, ".dep")
    link = tmp_path / "link"
    link.symlink_to(real)
    write_output_folder(link, {"c.dep": "2"}, ".dep")
    assert link.is_symlink() and _files(real) == {"c.dep": "2"}


@pytest.mark.parametrize("other, kind", [("notes.txt", "file"), ("sub", "folder")])
def test_a_folder_holding_anything_else_is_refused_and_left_alone(tmp_path, other, kind):
    out = tmp_path / "pred"
    out.mkdir()
    (out / "a.dep").write_text("1")
    (out / other).mkdir() if kind == "folder" else (out / other).write_text("mine")
    for call in (lambda: check_output_folder(out, ".dep"), lambda: write_output_folder(out, {"b.dep": "2"}, ".dep")):
        with pytest.raises(OutputError, match=f"^{out}: cannot write: the folder holds the {kind} {other}, not only "
                                              "the .dep files of an earlier run"):
            call()
    assert sorted(p.name for p in out.iterdir()) == sorted(["a.dep", other])


def test_a_run_that_fails_leaves_the_old_folder_as_it_was(tmp_path):
    out = tmp_path / "pred"
    write_output_folder(out, {"a.dep": "1"}, ".dep")
    with pytest.raises(OutputError, match="does not exist"):   # a name in a missing subfolder: the write fails
        write_output_folder(out, {"b.dep": "2", "no/such.dep": "3"}, ".dep")
    assert _files(out) == {"a.dep": "1"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pred"]


def test_a_file_in_the_way_or_a_missing_parent_is_refused(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(OutputError, match="it is a file, not a folder"):
        write_output_folder(tmp_path / "f", {"a.dep": "1"}, ".dep")
    with pytest.raises(OutputError, match="does not exist"):
        write_output_folder(tmp_path / "no" / "pred", {"a.dep": "1"}, ".dep")
