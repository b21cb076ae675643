"""Who writes a store: the directory lock every writer holds, and a note naming the writer.

A writer (``pmask impact``, a ``--store`` cache being filled, rank 0 of a ``torchrun`` job, a
layer extension) holds an exclusive ``flock`` on the store directory for as long as it writes;
the operating system releases it when the process ends, however it ends, so a lock can never be
stale. Beside it the writer leaves :data:`WRITER_NOTE`, a small JSON file naming its process
(``pid``, ``host``, ``since``, ``command``), removed when it releases the lock. The note only says
who: whether anyone is writing *now* is the lock's answer (:func:`current_writer`), so a note left
by a killed writer is recognised as stale. On a shared file system whose locks other hosts cannot
see, a note from another host with no visible lock is reported as "cannot tell".

Example:
    >>> current_writer("pud-store/")   # doctest: +SKIP
    WriterCheck(writing=True, note={'pid': 4711, 'host': 'node01', 'since': '2026-11-24T03:41:12+00:00', ...})
"""
from __future__ import annotations

import json
import os
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pmask.common.errors import StoreError
from pmask.common.files import atomic_write, read_json
from pmask.perturb.store.layout import now

try:
    import fcntl
except ImportError:   # Windows: writers take no lock
    fcntl = None  # type: ignore[assignment]

WRITER_NOTE = ".writer.json"
LOCK_TRIES = 20          # a reader's brief test of the lock must not make a starting writer fail
LOCK_RETRY_S = 0.05


@dataclass(frozen=True)
class DirLock:
    """A held store lock: the locked directory's descriptor and the directory."""

    fd: int
    path: Path


@dataclass(frozen=True)
class WriterCheck:
    """Whether a process writes the store now: True (it holds the lock), False, or None (cannot tell:
    a note from another host and no lock visible from here); ``note`` is the writer's note, if any."""

    writing: bool | None
    note: dict[str, Any] | None = None

    def who(self) -> str:
        """``pmask pid 4711 on host node01 (since 2026-11-24T03:41:12+00:00)``, or ``another process``."""
        n = self.note or {}
        if not n.get("pid"):
            return "another process"
        return f"pmask pid {n['pid']} on host {n.get('host', '?')} (since {n.get('since', '?')})"


def _note() -> dict[str, Any]:
    return {"pid": os.getpid(), "host": socket.gethostname(), "since": now(),
            "command": " ".join(["pmask", *sys.argv[1:]]) if sys.argv else None}


def read_note(path: Path) -> dict[str, Any] | None:
    """The writer's note in store directory ``path`` (None when absent or unreadable)."""
    note = read_json(path / WRITER_NOTE, unreadable="none")
    return note if isinstance(note, dict) else None


def _try_lock(fd: int, kind: int) -> bool:
    try:
        fcntl.flock(fd, kind | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def lock_dir(path: Path) -> DirLock | None:
    """Take the exclusive lock on store directory ``path`` and leave the writer's note there.

    Raises:
        StoreError: another process holds the lock (the message names it when its note says who).
    """
    if fcntl is None:
        return None
    fd = os.open(path, os.O_RDONLY)
    for attempt in range(LOCK_TRIES):
        if _try_lock(fd, fcntl.LOCK_EX):
            break
        if attempt == LOCK_TRIES - 1:
            os.close(fd)
            raise StoreError(f"{path}: another process is writing this store "
                             f"({WriterCheck(True, read_note(path)).who()}); wait for that run to finish")
        time.sleep(LOCK_RETRY_S)
    try:
        atomic_write(path / WRITER_NOTE, json.dumps(_note(), ensure_ascii=True) + "\n")
    except Exception:
        os.close(fd)
        raise
    return DirLock(fd, path)


def unlock(lock: DirLock | None) -> None:
    """Remove the writer's note and release a lock taken by :func:`lock_dir` (None: nothing to release)."""
    if lock is None:
        return
    try:
        (lock.path / WRITER_NOTE).unlink(missing_ok=True)   # while still holding the lock: never another's note
    except OSError:
        pass
    finally:
        os.close(lock.fd)   # closing the descriptor releases the flock


def current_writer(path: str | os.PathLike) -> WriterCheck:
    """Whether a process is writing the store at ``path`` now (tests its lock without waiting)."""
    path = Path(path)
    note = read_note(path)
    if fcntl is None or not path.is_dir():
        return WriterCheck(None if note else False, note)
    fd = os.open(path, os.O_RDONLY)
    try:
        free = _try_lock(fd, fcntl.LOCK_SH)
    finally:
        os.close(fd)   # also releases the shared lock just taken
    if not free:
        return WriterCheck(True, note)
    if note and note.get("host") not in (None, socket.gethostname()):
        return WriterCheck(None, note)   # its lock may be invisible from this host
    return WriterCheck(False, note)
