"""Outputs behave like shell redirection (pmask.common.files): devices, FIFOs, symlinks, '-', errors."""
from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from pmask.common.errors import OutputError
from pmask.common.files import is_stdout, open_output, write_output


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







