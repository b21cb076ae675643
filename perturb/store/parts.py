"""Per-rank index parts: how several processes write one store without sharing a file.

In a distributed run (``torchrun``) every rank writes its own shards (numbered so that ranks
cannot collide: ``base + rank + k * world_size``) and, after each shard, its own
``part-<rank>.json`` listing the shards and sentences it has finished. Only rank 0 writes
``manifest.json``: once at the start and once after every rank has finished, when it merges
the parts into the manifest and deletes them. A part left behind by a killed run is merged by
the next writer that opens the store; each of its shards is checked (size and sha256) first,
and one that does not match is deleted, so its sentences are computed again, never read.
"""
from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from pmask.common.files import atomic_write, read_json, sha256_file
from pmask.perturb.store.layout import FORMAT, FORMAT_VERSION, PART_RE, part_name, shard_number

logger = logging.getLogger(__name__)


def write_part(path: Path, rank: int, shards: list[dict[str, Any]], entries: list[dict[str, Any]]) -> None:
    """Atomically (re)write rank ``rank``'s part: every shard and sentence entry it finished so far."""
    part = {"format": f"{FORMAT}-part", "format_version": FORMAT_VERSION, "rank": rank,
            "shards": shards, "sentences": entries}
    atomic_write(path / part_name(rank), (json.dumps(part, indent=1, ensure_ascii=True) + "\n").encode("ascii"))


def part_files(path: Path) -> list[Path]:
    """The index parts in store directory ``path``, by rank."""
    return sorted(p for p in path.iterdir() if PART_RE.match(p.name))


def _read_part(part: Path) -> dict[str, Any] | None:
    try:
        data = read_json(part, encoding="ascii", missing="raise")
        if data.get("format") != f"{FORMAT}-part" or not isinstance(data.get("shards"), list):
            raise ValueError("not a store index part")
        return data
    except (OSError, ValueError) as err:   # JSONDecodeError and UnicodeDecodeError are ValueErrors
        logger.warning("%s: unreadable index part (%s); its sentences will be computed again", part, err)
        return None


def _shard_intact(path: Path, shard: dict[str, Any]) -> bool:
    file = path / shard["file"]
    if not file.is_file() or file.stat().st_size != shard["bytes"] or sha256_file(file) != shard["sha256"]:
        logger.warning("%s: missing, partial or corrupt shard (size or sha256 differs from its index part); "
                       "its %d sentences will be computed again", file, shard["n_sentences"])
        file.unlink(missing_ok=True)
        return False
    return True


def merge_parts(path: Path, manifest: dict[str, Any]) -> list[Path]:
    """Move the verified contents of every index part in ``path`` into ``manifest``.

    Args:
        path: the store directory.
        manifest: the store's manifest (changed in place).

    Returns:
        The part files read: the caller deletes them (:func:`remove_parts`) once it has written
        the manifest, so a crash in between loses nothing (merging again skips what the manifest
        holds). Shards that fail the size or sha256 check are deleted and their sentences left
        out, so they are computed again.
    """
    done = {e["index"] for e in manifest["sentences"]}
    listed = {s["file"] for s in manifest["shards"]}
    parts = part_files(path)
    for part in parts:
        data = _read_part(part) or {}
        good = set()
        for shard in data.get("shards", []):
            if shard["file"] in listed:
                good.add(shard["file"])
            elif _shard_intact(path, shard):
                manifest["shards"].append(shard)
                listed.add(shard["file"])
                good.add(shard["file"])
        for entry in data.get("sentences", []):
            if entry["index"] not in done and ("shard" not in entry or entry["shard"] in good):
                manifest["sentences"].append(entry)
                done.add(entry["index"])
    manifest["shards"].sort(key=lambda s: shard_number(s["file"]))
    manifest["sentences"].sort(key=lambda e: e["index"])
    return parts


def remove_parts(parts: list[Path]) -> None:
    """Delete merged index parts (after the manifest that holds their contents is written)."""
    for part in parts:
        part.unlink(missing_ok=True)
