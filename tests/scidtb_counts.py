"""Shared by the tests of commands on documents (tests/data/scidtb: 3 abstracts, 12 gold arcs): the words of
a tiny model that knows them, and UAS/UUAS counted here from SciDTB JSON read with :mod:`json` (never with
pmask's readers or scores)."""
from __future__ import annotations

import json
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
SCIDTB = DATA / "scidtb"
WORDS = ["we", "present", "a", "parser", "that", "reads", "discourse", "it", "is", "fast", "and", "small", "masked",
         "models", "know", "syntax", "show", "trees", "follow", "first", "second", "claim", "with", "reason", "note",
         "last", "word", ".", ",", "<", ">", "s"]


def parents(folder: Path) -> dict[str, list[int | None]]:
    """``{file name: [parent of EDU 1, …]}`` of every ``.dep`` file in ``folder`` (None: no head)."""
    out = {}
    for path in sorted(folder.glob("*.dep")):
        nodes = json.loads(path.read_text(encoding="utf-8-sig"))["root"]
        out[path.name] = [node["parent"] for node in nodes[1:]]
    return out


def count(pred: dict[str, list[int | None]], gold: dict[str, list[int | None]]) -> tuple[int, int, int]:
    """(arcs whose head is the gold head, arcs whose edge is a gold edge either way, gold arcs)."""
    right = undirected = total = 0
    for name, heads in gold.items():
        edges = {frozenset((k, h)) for k, h in enumerate(heads, start=1)}
        for k, (p, g) in enumerate(zip(pred[name], heads), start=1):
            total += 1
            right += p == g
            undirected += p is not None and frozenset((k, p)) in edges
    return right, undirected, total
