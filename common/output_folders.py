"""Folders written as one output, by the rule of :mod:`pmask.common.files`: like ``> PATH``, an output that
exists is replaced as a whole.

A folder of prediction files (``pmask parse DOCS -o FOLDER``: one SciDTB ``.dep`` file per document) is a
new folder, or an existing one that holds nothing but such files. The new files are written into a
temporary folder beside it (``.<name>.*.tmp``), which then takes the old folder's place: the folder ends up
holding exactly this run's files (a rerun on fewer documents leaves none of the earlier ones behind, which
reading the folder back would mix in), and a run that fails leaves the old folder as it was. A folder that
holds anything else (another kind of file, a subfolder) is no earlier output of this kind: it is refused in
one line, and nothing in it is touched.

Example:
    >>> write_output_folder("pred", {"a.edu.txt.dep": "{}"}, ".dep")   # doctest: +SKIP
    PosixPath('pred')
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Mapping

from pmask.common.errors import OutputError
from pmask.common.files import write_output
from pmask.common.output_checks import Output, check_output

__all__ = ["check_output_folder", "write_output_folder"]

#: The permission bits of a new output folder (a new file gets 0o644, :mod:`pmask.common.files`).
NEW_FOLDER_MODE = 0o755


def check_output_folder(path: str | os.PathLike, suffix: str) -> None:
    """Raise :class:`OutputError` unless ``path`` can be written as a folder of ``suffix`` files that replaces
    what is there: a new folder (its parent exists), or an existing one holding only ``suffix`` files; writes
    nothing.

    Example:
        >>> check_output_folder("/nonexistent/pred", ".dep")   # doctest: +SKIP
        OutputError: /nonexistent/pred: cannot write: folder /nonexistent does not exist (...)
    """
    check_output(Output(path, folder=True))
    target = Path(os.path.realpath(path))
    if not target.is_dir():
        return
    other = next((p for p in sorted(target.iterdir()) if not (p.is_file() and p.name.endswith(suffix))), None)
    if other is not None:
        kind = "folder" if other.is_dir() else "file"
        raise OutputError(f"{path}: cannot write: the folder holds the {kind} {other.name}, not only the {suffix} "
                          f"files of an earlier run, and an output folder is replaced as a whole; name another "
                          f"folder")


def write_output_folder(path: str | os.PathLike, files: Mapping[str, str | bytes], suffix: str) -> Path:
    """Write ``files`` (``{file name: content}``, every name ending in ``suffix``) as the folder ``path``,
    replacing an existing one whole (module docstring).

    Returns:
        ``Path(path)`` as given.

    Raises:
        OutputError: as :func:`check_output_folder`, or the folder cannot be written.
    """
    check_output_folder(path, suffix)
    target = Path(os.path.realpath(path))   # a symbolic link to a folder stays a link to the new one
    existed = target.is_dir()
    mode = target.stat().st_mode & 0o777 if existed else NEW_FOLDER_MODE
    try:
        new = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"))
    except OSError as err:
        raise OutputError(f"{path}: cannot write: cannot create a folder in {target.parent}: "
                          f"{(err.strerror or str(err)).lower()}") from None
    old = None
    try:
        for name, data in files.items():
            write_output(new / name, data)
        os.chmod(new, mode)
        if existed:   # rename(2) puts a folder in place of an empty one: the old folder moves aside first
            old = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".old"))
            os.replace(target, old)
        try:
            os.replace(new, target)
        except OSError:
            if old is not None:
                os.replace(old, target)
                old = None
            raise
    except OSError as err:
        raise OutputError(f"{path}: cannot write: {(err.strerror or str(err)).lower()}") from None
    finally:
        shutil.rmtree(new, ignore_errors=True)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    return Path(path)
