"""Checking outputs before any work: every output a command will write, refused in one line if it cannot be
written or would overwrite an input, and nothing written (:func:`check_outputs`, the validation step of every
command); the folders a command creates (:func:`make_output_folder`). Writing them is
:mod:`pmask.common.files`.
"""
from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pmask.common.errors import OutputError
from pmask.common.files import check_parent, is_stdout, os_reason, output_error


@dataclass(frozen=True)
class Output:
    """One output a command is about to write (see :func:`check_outputs`).

    Attributes:
        path: the file or folder (``-`` = standard output, files only).
        folder: a folder the command creates (its parent must exist) rather than a file.
        suffixes: the file suffixes the writer supports (lower case, with the dot); empty = any.
    """

    path: str | os.PathLike
    folder: bool = False
    suffixes: tuple[str, ...] = ()


def _writable(folder: Path) -> bool:
    return os.access(folder, os.W_OK | os.X_OK)


def check_output(output: Output | str | os.PathLike) -> None:
    """Raise :class:`OutputError` unless ``output`` can be written; writes nothing.

    A file: not a folder, of a supported suffix, in an existing folder that can be written (or an
    existing writable file). A folder: not a file; an existing folder must be writable, a new one
    needs an existing writable parent (only the folder itself is ever created).

    Example:
        >>> check_output(Output("/nonexistent/dir/x.conllu"))   # doctest: +SKIP
        OutputError: /nonexistent/dir/x.conllu: cannot write: folder /nonexistent/dir does not exist (...)
    """
    out = output if isinstance(output, Output) else Output(output)
    path = out.path
    if is_stdout(path):
        if out.folder:
            raise OutputError(f"{path}: a folder is written here, not standard output; name a folder")
        if out.suffixes:   # the file type comes from the suffix, and standard output has none
            raise OutputError(f"{path}: the file type is chosen by the suffix ({', '.join(out.suffixes)}), which "
                              "standard output lacks; name a file")
        return
    target = Path(os.path.realpath(path))
    if out.folder:
        if target.exists() and not target.is_dir():
            raise output_error(path, "it is a file, not a folder")
        if target.is_dir():
            if not _writable(target):
                raise output_error(path, "permission denied")
            return
    elif target.is_dir():
        raise output_error(path, "it is a folder, not a file")
    elif out.suffixes and Path(path).suffix.lower() not in out.suffixes:
        raise output_error(path, f"unsupported file type {Path(path).suffix or '(no suffix)'!r}; use one of "
                          f"{', '.join(out.suffixes)}")
    check_parent(path, target)
    if not _writable(target.parent) and not (target.exists() and os.access(target, os.W_OK)):
        raise output_error(path, f"no permission to write in {target.parent}")


def check_outputs(outputs: Iterable[Output | str | os.PathLike | None],
                  inputs: Iterable[str | os.PathLike | None] = ()) -> None:
    """The validation step every command runs before any work: each output (None = not asked for)
    passes :func:`check_output` and none of them is one of ``inputs`` (:func:`refuse_overwriting_inputs`).

    Raises:
        OutputError: the first output that cannot be written, one line naming it and the reason.
    """
    chosen = [o if isinstance(o, Output) else Output(o) for o in outputs if o is not None]
    refuse_overwriting_inputs([o.path for o in chosen], list(inputs))
    for out in chosen:
        check_output(out)


def make_output_folder(path: str | os.PathLike) -> Path:
    """Create the output folder ``path`` (an existing one is fine), never its parents.

    Raises:
        OutputError: a file is in the way, the parent folder is missing, or no permission.
    """
    check_output(Output(path, folder=True))
    folder = Path(path)
    try:
        folder.mkdir(exist_ok=True)
    except OSError as err:
        raise output_error(path, f"cannot create the folder: {os_reason(err)}") from None
    return folder


def _same_file(a: Path, b: Path) -> bool:
    if a.exists() and b.exists():
        return os.path.samefile(a, b)
    return os.path.realpath(a) == os.path.realpath(b)


def refuse_overwriting_inputs(output: str | os.PathLike | None | Iterable[str | os.PathLike | None],
                              inputs: Iterable[str | os.PathLike | None]) -> None:
    """Raise :class:`OutputError` when writing ``output`` would overwrite one of ``inputs``.

    ``output`` may also be a list of paths (a command's main output and its side files).

    Symlinks are resolved and existing files compared with ``os.path.samefile`` (hard links
    count). An input folder (e.g. an impact store) is overwritten by an output that is the
    folder itself or an existing file inside it. ``-`` and ``None`` (on either side) never clash.

    Args:
        output: the path a command is about to write.
        inputs: every path it reads (corpus, gold, store folder, ...).

    Example:
        >>> refuse_overwriting_inputs("gold.conllu", ["gold.conllu"])
        Traceback (most recent call last):
        pmask.common.errors.OutputError: gold.conllu: would overwrite the input gold.conllu; choose another output
    """
    if output is not None and not isinstance(output, (str, os.PathLike)):
        inputs = list(inputs)
        for one in output:
            refuse_overwriting_inputs(one, inputs)
        return
    if output is None or is_stdout(output):
        return
    out = Path(output)
    for given in inputs:
        if given is None or is_stdout(given):
            continue
        source = Path(given)
        inside = (source.is_dir() and out.exists()
                  and Path(os.path.realpath(out)).is_relative_to(os.path.realpath(source)))
        if _same_file(out, source):
            raise OutputError(f"{output}: would overwrite the input {given}; choose another output")
        if inside:
            raise OutputError(f"{output}: would overwrite a file of the input folder {given}; "
                              "choose another output")
