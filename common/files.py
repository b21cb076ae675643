"""Writing outputs the way shell redirection (``> PATH``) would, atomically where possible; hashing.

Every writer in pmask (corpora, reports, heatmaps, stores, the CLI) goes through
:func:`write_output` / :func:`open_output`, which decide by what ``PATH`` is:

* ``-``: standard output (nothing is created). Side files that would sit next to an output,
  such as ``.meta.json``, have no place to go then: callers skip them (see :func:`is_stdout`).
* a device or FIFO (``/dev/null``, ``/dev/stdout``, a named pipe): written directly, never
  replaced (a FIFO blocks until a reader opens it, as with ``>``).
* a symbolic link: its final target is written (a dangling link's target is created), and the
  link stays a link.
* a regular file or a new name: a temporary file ``.<name>.*.tmp`` in the target's folder, then
  ``os.replace``, so a reader sees the old file or the whole new one. A missing parent folder is
  an error, as with ``>`` (no folder is created); an existing file keeps its permission bits (a
  new one gets 0o644). Where the folder is not writable but the file is, the file is overwritten
  in place.
* anything that cannot be written (a folder, a missing folder, a file where a parent folder
  should be, no permission, a full disk) raises :class:`~pmask.common.errors.OutputError` with one
  line naming the path and the reason.

Checking every output before any work (and making the folders a command creates) is
:mod:`pmask.common.output_checks`; reading and hashing files: :func:`read_json`, :func:`sha256_file`.

Example:
    >>> from pmask.common.files import write_output
    >>> write_output("-", "hello\\n")
    hello
    PosixPath('-')
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, cast

from pmask.common.errors import OutputError

logger = logging.getLogger(__name__)

#: The output (and corpus input) name that means standard output (standard input).
STDOUT = "-"


def is_stdout(path: str | os.PathLike | None) -> bool:
    """True when ``path`` is ``-`` (standard output): callers then skip side files such as ``.meta.json``."""
    return path is not None and os.fspath(path) == STDOUT


def output_error(path: str | os.PathLike, reason: str) -> OutputError:
    """The one-line error of an output that cannot be written."""
    return OutputError(f"{path}: cannot write: {reason}")


def os_reason(err: OSError) -> str:
    """An ``OSError``'s reason in lower case, for :func:`output_error`."""
    return err.strerror.lower() if err.strerror else str(err)


def _existing_ancestor(folder: Path) -> Path:
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def check_parent(path: str | os.PathLike, target: Path) -> None:
    """The folder ``target`` goes into exists and is a folder (nothing is created, as with ``>``)."""
    ancestor = _existing_ancestor(target.parent)
    if not ancestor.is_dir():
        raise output_error(path, f"{ancestor} is a file, not a folder")
    if ancestor != target.parent:
        shown = Path(path).parent if Path(path).parent != Path(".") else target.parent
        raise output_error(path, f"folder {shown} does not exist (outputs are written like shell redirection: "
                          "create the folder first)")


def _target(path: str | os.PathLike) -> Path:
    """The file a write to ``path`` lands in: symlinks followed, its folder checked."""
    target = Path(os.path.realpath(path))
    if target.is_dir():
        raise output_error(path, "it is a folder, not a file")
    check_parent(path, target)
    return target


def _is_stream(target: Path) -> bool:
    """An existing file that is not a regular file (character/block device, FIFO, socket)."""
    try:
        return not stat.S_ISREG(target.stat().st_mode)
    except FileNotFoundError:
        return False


@contextlib.contextmanager
def _stdout(binary: bool) -> Iterator[IO]:
    sys.stdout.flush()
    stream = getattr(sys.stdout, "buffer", None) if binary else sys.stdout
    if stream is None:  # a text-only replacement of sys.stdout (e.g. a test's capture): decode
        stream = cast(IO, _TextSink(sys.stdout))   # duck-typed: write and flush
    yield stream
    stream.flush()


class _TextSink:
    """Bytes written to a text stream that has no ``buffer`` (decoded as UTF-8)."""

    def __init__(self, text_stream: IO[str]):
        self.text_stream = text_stream

    def write(self, data: bytes) -> int:
        return self.text_stream.write(bytes(data).decode("utf-8"))

    def flush(self) -> None:
        self.text_stream.flush()


def _open_kwargs(binary: bool) -> dict:
    return {} if binary else {"encoding": "utf-8", "newline": ""}


@contextlib.contextmanager
def _atomic(path: str | os.PathLike, target: Path, binary: bool) -> Iterator[IO]:
    mode = target.stat().st_mode & 0o777 if target.exists() else 0o644
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as err:
        if not (target.exists() and os.access(target, os.W_OK)):
            raise output_error(path, f"cannot create a file in {target.parent}: {os_reason(err)}") from None
        fd = None  # the folder is read-only but the file is writable: overwrite it in place
    if fd is None:
        with open(target, "wb" if binary else "w", **_open_kwargs(binary)) as fh:
            yield fh
        return
    try:
        with os.fdopen(fd, "wb" if binary else "w", **_open_kwargs(binary)) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def open_output(path: str | os.PathLike, mode: str = "w") -> Iterator[IO]:
    """A file object to write one output to, with shell-redirection semantics (module docstring).

    Args:
        path: the output: ``-`` (standard output), a device/FIFO, a symlink, or a file name.
        mode: ``"w"`` (text, UTF-8, newlines written as given) or ``"wb"`` (bytes).

    Returns:
        A context manager yielding the writable file object. For a regular file the new content
        replaces the old one only when the block ends without an exception.

    Raises:
        OutputError: the path cannot be written (one line naming it and the reason).

    Example:
        >>> with open_output("out.txt") as fh:
        ...     _ = fh.write("one line\\n")
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', not {mode!r}")
    binary = mode == "wb"
    if is_stdout(path):
        with _stdout(binary) as fh:
            yield fh
        return
    target = _target(path)
    try:
        if _is_stream(target):
            with open(target, mode, **_open_kwargs(binary)) as fh:
                yield fh
        else:
            with _atomic(path, target, binary) as fh:
                yield fh
    except OSError as err:
        raise output_error(path, os_reason(err)) from None
    logger.debug("wrote %s", path)


def write_output(path: str | os.PathLike, data: str | bytes) -> Path:
    """Write ``data`` (text as UTF-8 exactly as given, or bytes) to ``path`` like ``> path``.

    Args:
        path: ``-`` for standard output, else a file, symlink, device or FIFO (module docstring).
        data: the whole content.

    Returns:
        ``Path(path)`` as given.

    Raises:
        OutputError: the path cannot be written.

    Example:
        >>> write_output("x.txt", "one")
        PosixPath('x.txt')
    """
    with open_output(path, "wb" if isinstance(data, (bytes, bytearray, memoryview)) else "w") as fh:
        fh.write(data)
    return Path(path)


#: The name every writer used before outputs learnt ``-``, devices and symlinks (same call).
atomic_write = write_output


def stdout_to_devnull() -> None:
    """After a ``BrokenPipeError`` on standard output (the reader closed the pipe, as ``| head`` does):
    point file descriptor 1 at ``os.devnull`` so the interpreter's final flush cannot fail again
    (the recipe of Python's ``signal`` documentation, "Note on SIGPIPE")."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):   # no real file descriptor (e.g. a test's capture)
        pass


def sha256_file(path: str | os.PathLike) -> str:
    """Hex sha256 of a file's bytes, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_json(path: str | os.PathLike, *, encoding: str = "utf-8", unreadable: str = "raise",
              missing: str = "none") -> Any:
    """The JSON value held in the file ``path``; None when there is no such file. The one reader of a
    JSON file in pmask.

    ``unreadable`` says what a file that cannot be read, or is not JSON text in ``encoding``, gives:
    ``"raise"`` its ``OSError`` or ``ValueError`` (``UnicodeDecodeError``, ``json.JSONDecodeError``),
    for the caller to name the file and the reason; ``"none"`` None, like a missing file.
    ``missing="raise"``: a path that is no file is read all the same, so it fails as an unreadable
    file does (``FileNotFoundError``, ``IsADirectoryError``).

    Example:
        >>> read_json("no-such-file.json") is None
        True
    """
    if missing == "none" and not Path(path).is_file():
        return None
    try:
        return json.loads(Path(path).read_text(encoding=encoding))
    except (OSError, ValueError):
        if unreadable == "none":
            return None
        raise
