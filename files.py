"""File helpers shared by every writer: atomic replacement and content hashing."""
from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from pathlib import Path

logger = logging.getLogger(__name__)


def atomic_write(path: str | os.PathLike, data: str | bytes) -> Path:
    """Write ``data`` to ``path`` via a temporary file in the same folder (``.<name>.*.tmp``) and
    ``os.replace``, so readers see the old file or the whole new one.

    Creates missing parent folders. Text is written as UTF-8 exactly as given (no newline
    translation). Keeps the mode of an existing file, else uses 0o644.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    logger.debug("wrote %s (%d bytes)", path, len(payload))
    return path


def sha256_file(path: str | os.PathLike) -> str:
    """Hex sha256 of a file's bytes, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def refuse_overwriting_inputs(outputs: list[str | os.PathLike | None],
                              inputs: list[str | os.PathLike | None]) -> None:
    """Raise ``PmaskError`` when an output path resolves to one of ``inputs`` (or lies inside an
    input directory, such as a store). ``None`` entries are ignored; symlinks are followed.

    Example:
        >>> refuse_overwriting_inputs(["out.conllu"], ["in.conllu"])   # fine: nothing raised
    """
    from pmask.errors import PmaskError  # noqa: PLC0415 - keeps this block self-contained

    sources = [(Path(p), Path(p).resolve()) for p in inputs if p is not None and str(p) != "-"]
    for out in outputs:
        if out is None or str(out) == "-":
            continue
        target = Path(out).resolve()
        for given, resolved in sources:
            if target == resolved or (resolved.is_dir() and resolved in target.parents):
                raise PmaskError(f"{out}: refusing to write over the input {given}; choose another output")
