"""What a store holds, for people: corpus and selection, sentences, layers, model and settings
(the library behind ``pmask info STORE``, :mod:`pmask.cli.commands.info`; reads the manifest only, no shard, no torch).

Example:
    >>> print(describe_store_info(store_info("pud-store/")))   # doctest: +SKIP
    store     pud-store/: complete, 1000 of 1000 sentences stored (0 skipped as too long)
    ...
"""
from __future__ import annotations

import os
from typing import Any

from pmask.common.labels import plural
from pmask.corpora.provenance import recorded_impact
from pmask.perturb.store.layout import read_manifest
from pmask.perturb.store.state import store_state


def _layers(manifest: dict[str, Any]) -> tuple[list[int], list[int]]:
    """(layers every sentence holds, layers only some shards hold: an extension under way)."""
    resolved = [int(k) for k in manifest["layers"].get("resolved") or []]
    partial = sorted({int(k) for s in manifest["shards"] for k in s.get("layers", resolved)} - set(resolved))
    return resolved, partial


def store_info(path: str | os.PathLike) -> dict[str, Any]:
    """A JSON-able summary of the store at ``path``.

    Returns:
        ``{"store", "complete", "sentences": {"stored", "skipped_too_long", "corpus"}, "corpus": {"path",
        "sha256", "selection"}, "layers", "layers_being_added", "model": {"name", "class", "revision", "commit",
        "random_init", "dtype", "num_layers", "max_length", ...}, "settings": {"probe", "heads", "metric", "subword",
        "tokenize", "include_cls", "context"},
        "created", "updated", "versions", "shards", "bytes", "state"}``. ``selection`` is
        None for a store made before selections were recorded. ``state`` (:mod:`.state`): ``"complete"``, ``"writing"``
        (a process is writing it now: ``"writer"`` names it), ``"maybe_writing"`` (its writer is on another host and its
        lock cannot be seen) or ``"interrupted"``; ``"resume"`` is the command that finishes it, ``"unmerged"`` the
        sentences in index parts of an interrupted torchrun run.

    Raises:
        StoreError: not a store, or an unreadable manifest.
    """
    manifest = read_manifest(path)
    state = store_state(path, manifest)
    entries = manifest["sentences"]
    skipped = sum(1 for e in entries if "skipped" in e)
    corpus = manifest["corpus"]
    model = dict(manifest["model"])
    described = model.pop("describe", None) or {}
    model.pop("tokenizer", None)
    layers, partial = _layers(manifest)
    recorded = recorded_impact(manifest)   # an older store's settings as it meant them
    return {
        "store": str(path),
        "complete": bool(manifest.get("complete")),
        "sentences": {"stored": len(entries) - skipped, "skipped_too_long": skipped,
                      "corpus": corpus.get("n_sentences")},
        "corpus": {"path": corpus.get("path"), "sha256": corpus.get("sha256"), "selection": corpus.get("selection")},
        "layers": layers,
        "layers_being_added": partial,
        "model": {**model, "class": described.get("model_class"),
                  **{k: v for k, v in described.items() if k in ("loaded", "parts", "head")}},
        "settings": {"probe": recorded["probe"], "heads": manifest.get("heads"),
                     "metric": recorded["metric"], "subword": recorded["subword"],
                     "tokenize": recorded["tokenize"], "include_cls": manifest.get("include_cls", True),
                     "context": recorded["context"]},
        "created": manifest.get("created"),
        "updated": manifest.get("updated"),
        "versions": manifest.get("versions") or {},
        "shards": len(manifest["shards"]),
        "bytes": sum(int(s.get("bytes") or 0) for s in manifest["shards"]),
        "state": _state_name(state.complete, state.writer.writing),
        "writer": state.writer.note if state.writer.writing is not False else None,
        "resume": None if state.complete else state.resume,
        "unmerged": state.unmerged,
        "why": None if state.complete and not state.writer.writing else state.why(),
    }


def _state_name(complete: bool, writing: bool | None) -> str:
    if writing:
        return "writing"
    if complete:
        return "complete"
    return "maybe_writing" if writing is None else "interrupted"


def _selection(selection: dict[str, Any] | None) -> str:
    if selection is None:
        return "selection not recorded (a store from an older pmask: give --limit/--max-words as made)"
    return (f"read as {selection.get('format')}, limit {selection.get('limit') or 'none'}, "
            f"max-words {selection.get('max_words') or 'none'}")


def _size(n_bytes: int) -> str:
    return f"{n_bytes / 1e6:.1f} MB" if n_bytes >= 1e5 else f"{n_bytes / 1e3:.1f} kB"


def describe_store_info(info: dict[str, Any]) -> str:
    """:func:`store_info` as aligned text lines (what ``pmask info`` prints)."""
    s, c, m, st = info["sentences"], info["corpus"], info["model"], info["settings"]
    state = "complete" if info["complete"] else "unfinished"
    model_bits = [m.get("class"), f"{m['num_layers']} layers" if m.get("num_layers") else None,
                  f"revision {m['revision']}" if m.get("revision") else None, m.get("dtype"),
                  "random weights" if m.get("random_init") else None,
                  f"loaded: {m['loaded']}" if m.get("loaded") else None]
    extension = (f" (layers {', '.join(map(str, info['layers_being_added']))} partly added)"
                 if info["layers_being_added"] else "")
    versions = info["versions"]
    lines = [
        f"store     {info['store']}: {state}, {s['stored']} of {plural(s['corpus'] or 0, 'sentence')} stored "
        f"({s['skipped_too_long']} skipped as too long)",
        *([f"state     {info['why']}"
           + (f"; {info['unmerged']} more sentences are in index parts, which --resume merges"
              if info.get("unmerged") else "")] if info.get("why") else []),
        *([f"resume    {info['resume']}"] if info.get("resume") and info["state"] != "writing" else []),
        f"corpus    {c['path']}" + (f" (sha256 {c['sha256'][:12]})" if c.get("sha256") else "")
        + f"; {_selection(c['selection'])}",
        f"model     {m.get('name')}" + (f" ({', '.join(b for b in model_bits if b)})" if any(model_bits) else ""),
        f"layers    {', '.join(map(str, info['layers'])) or 'none'}{extension}",
        f"settings  probe {st['probe']}" + (f" (every head: {st['heads']} per layer)" if st.get("heads") else "")
        + f", metric {st['metric']}, subword {st['subword']}, tokenize {st['tokenize']}"
        + (f", context {st['context']} words" if st.get("context") else "")
        + (", [CLS] row kept" if st["include_cls"] else ""),
        f"made      {info['created']} with pmask {versions.get('pmask', '?')} (torch {versions.get('torch', '?')}, "
        f"transformers {versions.get('transformers', '?')}); updated {info['updated']}",
        f"size      {plural(info['shards'], 'shard')}, {_size(info['bytes'])}",
    ]
    return "\n".join(lines)
