"""Outputs behave like shell redirection (pmask.common.files): devices, FIFOs, symlinks, '-', errors."""
from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from pmask.common.errors import OutputError, PmaskError
from pmask.common.files import (
    Output,
    check_output,
    check_outputs,
    is_stdout,
    make_output_folder,
    open_output,
    refuse_overwriting_inputs,
    write_output,
)


def test_regular_file_replaced_atomically_keeping_its_mode(tmp_path):
    out = tmp_path / "out.txt"
    assert write_output(out, "one\r\n") == out
    assert out.read_bytes() == b"one\r\n"            # written exactly as given
    out.chmod(0o600)
    write_output(out, b"two")
    assert out.read_bytes() == b"two" and stat.S_IMODE(out.stat().st_mode) == 0o600
    assert [p.name for p in out.parent.iterdir()] == ["out.txt"]   # no temporary file left


def test_failed_block_leaves_the_old_file(tmp_path):
    out = tmp_path / "out.txt"
    out.write_text("old")
    with pytest.raises(RuntimeError), open_output(out) as fh:
        fh.write("half")
        raise RuntimeError("stop")
    assert out.read_text() == "old" and len(list(tmp_path.iterdir())) == 1


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="no /dev/null")
def test_device_is_written_not_replaced():
    before = os.stat("/dev/null")
    write_output("/dev/null", "discarded\n")
    write_output(Path("/dev/null"), b"\x00\x01")
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_fifo_is_written_not_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(Path(fifo).read_bytes()))
    reader.start()
    write_output(fifo, "through the pipe\n")
    reader.join(timeout=30)
    assert received == [b"through the pipe\n"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_symlink_target_is_written_and_link_kept(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "data.txt"
    target.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    write_output(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new"
    # a dangling link: its target is created, as `> link` would
    dangling = tmp_path / "dangling.txt"
    dangling.symlink_to(tmp_path / "real" / "later.txt")
    write_output(dangling, "made")
    assert dangling.is_symlink() and (tmp_path / "real" / "later.txt").read_text() == "made"


def test_dash_is_standard_output(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert is_stdout("-") and is_stdout(Path("-")) and not is_stdout("x") and not is_stdout(None)
    write_output("-", "text line\n")
    with open_output("-") as fh:
        fh.write("second\n")
    assert capsys.readouterr().out == "text line\nsecond\n"
    assert not (tmp_path / "-").exists()


def test_dash_takes_bytes(capfd):
    write_output("-", "é\n".encode())
    assert capfd.readouterr().out == "é\n"


def test_parent_is_a_file_names_the_real_problem(tmp_path):
    (tmp_path / "existing-file").write_text("x")
    with pytest.raises(OutputError) as err:
        write_output(tmp_path / "existing-file" / "x.conllu", "data")
    message = str(err.value)
    assert "File exists" not in message and "\n" not in message
    assert message == (f"{tmp_path}/existing-file/x.conllu: cannot write: "
                       f"{tmp_path}/existing-file is a file, not a folder")


def test_folder_as_output_is_an_error(tmp_path):
    with pytest.raises(OutputError, match="it is a folder, not a file$"):
        write_output(tmp_path, "data")


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root may write anywhere")
def test_unwritable_folder_is_one_line_error(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(OutputError, match=r"locked/out.txt: cannot write: .*permission denied$"):
            write_output(locked / "out.txt", "data")
    finally:
        locked.chmod(0o700)


@pytest.mark.skipif(not os.path.isdir("/sys"), reason="no /sys")
def test_unwritable_system_folder_is_one_line_error():
    """sysfs refuses new files even to root, so this runs everywhere Linux does."""
    with pytest.raises(OutputError) as err:
        write_output("/sys/pmask-test-output.txt", "data")
    assert str(err.value).startswith("/sys/pmask-test-output.txt: cannot write: ")
    assert "\n" not in str(err.value)


def test_output_equal_to_an_input_is_refused(tmp_path):
    gold = tmp_path / "same.conllu"
    gold.write_text("x")
    with pytest.raises(OutputError, match="would overwrite the input"):
        refuse_overwriting_inputs(gold, [tmp_path / "other.conllu", gold])
    with pytest.raises(PmaskError, match="would overwrite the input"):
        refuse_overwriting_inputs(str(tmp_path / "." / "same.conllu"), [str(gold)])
    link = tmp_path / "link.conllu"
    link.symlink_to(gold)
    hard = tmp_path / "hard.conllu"
    os.link(gold, hard)
    for alias in (link, hard):
        with pytest.raises(OutputError, match="would overwrite the input"):
            refuse_overwriting_inputs(alias, [gold])
    refuse_overwriting_inputs(tmp_path / "new.conllu", [gold, None, "-"])
    refuse_overwriting_inputs("-", [gold])
    refuse_overwriting_inputs(None, [gold])


def test_output_inside_an_input_folder(tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    (store / "manifest.json").write_text("{}")
    with pytest.raises(OutputError, match="would overwrite a file of the input folder"):
        refuse_overwriting_inputs(store / "manifest.json", [store])
    with pytest.raises(OutputError, match="would overwrite the input"):
        refuse_overwriting_inputs(store, [store])
    refuse_overwriting_inputs(store / "report.png", [store])   # a new file beside the data is fine


def test_read_json_gives_none_for_a_missing_file_and_says_why_a_file_is_unreadable(tmp_path):
    from pmask.common.files import read_json

    good, bad, latin = tmp_path / "good.json", tmp_path / "bad.json", tmp_path / "latin.json"
    good.write_text('{"a": [1, 2]}', encoding="utf-8")
    bad.write_text('{"a": ', encoding="utf-8")
    latin.write_bytes('{"é": 1}'.encode("latin-1"))
    assert read_json(good) == {"a": [1, 2]} and read_json(tmp_path / "none.json") is None
    assert read_json(tmp_path) is None   # a folder is no JSON file either
    for unreadable in (bad, latin):
        with pytest.raises(ValueError):
            read_json(unreadable)
        assert read_json(unreadable, unreadable="none") is None
    assert read_json(latin, encoding="latin-1") == {"é": 1}


# ---------------------------------------------------- outputs are checked before any work; a missing folder is an error

def test_a_missing_folder_is_an_error_and_nothing_is_created(tmp_path):
    out = tmp_path / "new" / "deeper" / "out.txt"
    with pytest.raises(OutputError) as err:
        write_output(out, "data")
    assert str(err.value) == (f"{out}: cannot write: folder {out.parent} does not exist (outputs are written like "
                              "shell redirection: create the folder first)")
    assert not (tmp_path / "new").exists()
    with pytest.raises(OutputError, match="does not exist"):
        check_output(out)


def test_check_output_names_every_impossible_file(tmp_path):
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match="it is a folder, not a file$"):
        check_output(tmp_path / "folder")
    with pytest.raises(OutputError, match="file is a file, not a folder$"):
        check_output(tmp_path / "file" / "x.conllu")
    with pytest.raises(OutputError, match=r"unsupported file type '\.jpg'; use one of \.png, \.svg$"):
        check_output(Output(tmp_path / "plot.jpg", suffixes=(".png", ".svg")))
    check_output(Output(tmp_path / "plot.PNG", suffixes=(".png", ".svg")))
    check_output(tmp_path / "new.conllu")
    check_output("-")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "folder"]   # nothing written


def test_folders_a_command_creates_need_their_parent(tmp_path):
    (tmp_path / "file").write_text("x")
    check_output(Output(tmp_path / "new-store", folder=True))
    with pytest.raises(OutputError, match="it is a file, not a folder$"):
        check_output(Output(tmp_path / "file", folder=True))
    with pytest.raises(OutputError, match="does not exist"):
        check_output(Output(tmp_path / "a" / "b", folder=True))
    with pytest.raises(OutputError, match="standard output"):
        check_output(Output("-", folder=True))
    assert make_output_folder(tmp_path / "made").is_dir()
    assert make_output_folder(tmp_path / "made").is_dir()   # an existing folder is fine
    with pytest.raises(OutputError, match="does not exist"):
        make_output_folder(tmp_path / "a" / "b")
    assert not (tmp_path / "a").exists()


def test_check_outputs_refuses_inputs_and_skips_none(tmp_path):
    gold = tmp_path / "gold.conllu"
    gold.write_text("x")
    check_outputs([None, tmp_path / "a.json"], [gold])
    with pytest.raises(OutputError, match="would overwrite the input"):
        check_outputs([tmp_path / "a.json", gold], [gold])
