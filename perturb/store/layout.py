"""File names and the manifest of a store directory (no torch, no numpy)."""
from __future__ import annotations

import datetime as _dt
import json
import logging
import os
import re
from pathlib import Path
from typing import Any

from pmask.common.errors import StoreError, json_problem
from pmask.common.files import atomic_write

logger = logging.getLogger(__name__)

FORMAT = "pmask-impact-store"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
SHARD_RE = re.compile(r"^shard-(\d{5,})\.safetensors$")
PART_RE = re.compile(r"^part-(\d{5,})\.json$")   # one rank's index in a distributed run (see .parts)
#: The sentence under way when the last shard was closed (what a resumed run continues from; see StoreWriter.tick)
PARTIAL = "partial.safetensors"
TMP_PREFIX = "."
TMP_SUFFIX = ".tmp"
DEFAULT_SHARD_SIZE = 64
DEFAULT_SHARD_BYTES = 256 * 2**20   # a shard is also closed once its matrices pass this size
DEFAULT_SHARD_SECONDS = 60.0   # ... and once this much work went into it: what a hard kill can lose


def now() -> str:
    """The current UTC time, ISO 8601 to the second (manifest time stamps)."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def shard_name(seq: int) -> str:
    """File name of shard number ``seq`` (``shard-00042.safetensors``)."""
    return f"shard-{seq:05d}.safetensors"


def shard_number(name: str) -> int:
    """The number in a shard file name; StoreError for a name that is not a shard's."""
    match = SHARD_RE.match(name)
    if match is None:
        raise StoreError(f"{name}: not a shard file name (expected shard-NNNNN.safetensors)")
    return int(match.group(1))


def part_name(rank: int) -> str:
    """File name of rank ``rank``'s index part (``part-00003.json``)."""
    return f"part-{rank:05d}.json"


def read_manifest(path: str | os.PathLike) -> dict[str, Any]:
    """The parsed ``manifest.json`` of store ``path``.

    Args:
        path: the store directory.

    Returns:
        The manifest as a dict (``format``, ``model``, ``layers``, ``corpus``, ``shards``, ``sentences``...).

    Raises:
        StoreError: no manifest, unreadable, not JSON, not a store manifest or an unknown format version.

    Example:
        >>> read_manifest("impacts/")["corpus"]["n_sentences"]   # doctest: +SKIP
        1000
    """
    mf = Path(path) / MANIFEST
    try:
        text = mf.read_text(encoding="utf-8")
    except FileNotFoundError:
        if not Path(path).exists():
            raise StoreError(f"{path}: no such file or directory") from None
        raise StoreError(f"{path}: not an impact store (no {MANIFEST})") from None
    except NotADirectoryError:
        raise StoreError(f"{path}: a file, not an impact store (the folder 'pmask impact -o' writes)") from None
    except OSError as err:
        raise StoreError(f"{mf}: cannot read: {err.strerror or err}") from None
    try:
        manifest = json.loads(text)
    except json.JSONDecodeError as err:
        raise StoreError(f"{mf}:{err.lineno}: corrupt manifest: {json_problem(err)}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise StoreError(f"{mf}: not a pmask impact store manifest")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise StoreError(f"{mf}: store format version {manifest.get('format_version')!r} "
                         f"is not supported (this pmask reads version {FORMAT_VERSION})")
    for key in ("model", "layers", "corpus", "shards", "sentences"):
        if key not in manifest:
            raise StoreError(f"{mf}: corrupt manifest: no {key!r} field")
    return manifest


def shard_metadata(records_json: str) -> dict[str, str]:
    """The safetensors metadata of a shard: format, version and its sentences' records (JSON)."""
    return {"format": f"{FORMAT}-shard", "format_version": str(FORMAT_VERSION), "sentences": records_json}


def manifest_bytes(manifest: dict[str, Any]) -> bytes:
    """The manifest as written to disk: indented ASCII JSON with a final newline."""
    return (json.dumps(manifest, indent=1, ensure_ascii=True) + "\n").encode("ascii")


def our_files(path: Path) -> list[Path]:
    """The files in ``path`` that a store consists of (manifest, shards, index parts, temporary files)."""
    return [p for p in path.iterdir()
            if p.name in (MANIFEST, PARTIAL) or SHARD_RE.match(p.name) or PART_RE.match(p.name)
            or (p.name.startswith(TMP_PREFIX) and p.name.endswith(TMP_SUFFIX))]


def write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    """Stamp ``manifest["updated"]`` and write it atomically as ``path/manifest.json``."""
    manifest["updated"] = now()
    atomic_write(path / MANIFEST, manifest_bytes(manifest))


def clean_unreferenced(path: Path, manifest: dict[str, Any]) -> None:
    """Remove temp files and shards the manifest does not reference; check the others exist."""
    referenced = {s["file"] for s in manifest["shards"]}
    for p in our_files(path):
        if p.name not in (MANIFEST, PARTIAL) and p.name not in referenced and not PART_RE.match(p.name):
            logger.info("removing unfinished %s", p)
            p.unlink()
    for name in referenced:
        if not (path / name).is_file():
            raise StoreError(f"{path / name}: shard listed in the manifest is missing")
