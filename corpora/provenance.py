"""How an output was made: the ``<output>.meta.json`` written beside every ``pmask parse`` output.

One dataclass, :class:`Provenance`, owns the file: :meth:`Provenance.write` writes it and
:func:`read_provenance` reads it back (torch-free; used by ``pmask eval`` to name the
prediction's row and to learn its settings).

Example:
    >>> from pathlib import Path
    >>> meta_path(Path("pud.conllu")).name
    'pud.conllu.meta.json'
"""
from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping

from pmask.common.errors import PmaskError
from pmask.common.files import atomic_write, is_stdout, read_json, sha256_file
from pmask.common.labels import absolute_layer, run_label
from pmask.common.version import __version__
from pmask.corpora._util import is_stdin, stdin_sha256

logger = logging.getLogger(__name__)


def meta_path(output: str | Path) -> Path:
    """Where the provenance of ``output`` lives: ``<output>.meta.json`` beside it."""
    output = Path(output)
    return output.with_name(output.name + ".meta.json")


def recorded_impact(record: Mapping[str, Any]) -> dict[str, Any]:
    """The impact settings a record holds (a store's manifest, the ``impact`` of a ``.meta.json``), with what an
    older record that leaves one out meant: probe pair (written since there are other probes), tokenisation
    words and context 0 (written since those settings exist). The one reader of old records: what they mean
    is a fact about them, not a default of a run (:func:`pmask.pipeline.request.resolve` chooses those).

    Example:
        >>> recorded_impact({"metric": "dist", "subword": "avg"})
        {'metric': 'dist', 'subword': 'avg', 'tokenize': 'words', 'probe': 'pair', 'context': 0}
    """
    return {"metric": record.get("metric"), "subword": record.get("subword"),
            "tokenize": record.get("tokenize") or "words", "probe": record.get("probe") or "pair",
            "context": record.get("context") or 0}


def corpus_record(path: str | Path, fmt: str, limit: int | None, max_words: int | None) -> dict[str, Any]:
    """The ``corpus`` entry: path, sha256 of a file or of what was read from standard input (``-``;
    None for a folder), format and filters."""
    path = Path(path)
    digest = stdin_sha256() if is_stdin(path) else sha256_file(path) if path.is_file() else None
    return {"path": str(path), "sha256": digest, "format": fmt,
            "limit": limit, "max_words": max_words}


@dataclass
class Provenance:
    """The content of ``<output>.meta.json`` (keys in this order).

    Attributes:
        task: "dependency" or "constituency".
        settings: the parse settings (decoder, layer, root, faithful, multiroot, seed).
        model: the model's description (name, revision, ...), None for baselines.
        impact: ``{"metric", "subword"}`` actually used, None for baselines.
        corpus: see :func:`corpus_record`.
        sentences, parsed, skipped: counts and the ids of sentences without a tree.
        seconds: wall time of the run.
        command: the command line, when run from one.
    """

    task: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    model: dict[str, Any] | None = None
    impact: dict[str, Any] | None = None
    corpus: dict[str, Any] | None = None
    sentences: int = 0
    parsed: int = 0
    skipped: list[str] = field(default_factory=list)
    seconds: float = 0.0
    command: list[str] | None = None
    pmask: str = __version__

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        head = {"pmask": data.pop("pmask"), "command": data.pop("command")}
        return {**head, **data}

    def row_name(self) -> str:
        """The name of the prediction's row in an evaluation table: decoder (short model name,
        metric, absolute layer), e.g. ``eisner (bert-base-uncased, dist, layer 12)``."""
        name = self.settings.get("decoder", "prediction")
        if self.model:
            name = f"{name} ({run_label(self.model, self.impact, self.settings.get('layer', -1))})"
        return name

    def row_settings(self) -> dict[str, Any]:
        """The settings of the prediction's row, its layer counted from 0 as :meth:`row_name` shows it
        (``layer=-1`` of a 12-layer model: ``layer=12``)."""
        settings = dict(self.settings)
        if "layer" in settings and self.model:
            settings["layer"] = absolute_layer(settings["layer"], self.model.get("num_layers"))
        return settings

    def write(self, output: str | Path) -> Path | None:
        """Write ``<output>.meta.json``; returns its path (None for standard output: no file beside it)."""
        if is_stdout(output):
            return None
        path = meta_path(output)
        atomic_write(path, json.dumps(self.to_dict(), indent=2, ensure_ascii=False, default=str) + "\n")
        return path

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Provenance:
        """The record :meth:`to_dict` wrote, as written (:func:`recorded_impact` reads what an older one's impact
        settings meant)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def read_provenance(output: str | Path) -> Provenance | None:
    """The provenance recorded beside ``output``, or None when there is none.

    Raises:
        PmaskError: the file exists but is not a pmask meta.json.
    """
    path = meta_path(output)
    if not path.is_file():
        return None
    try:
        data = read_json(path)
    except (OSError, ValueError) as err:   # ValueError: UnicodeDecodeError, json.JSONDecodeError
        raise PmaskError(f"{path}: unreadable provenance file ({err})") from None
    if not isinstance(data, dict):
        raise PmaskError(f"{path}: not a pmask provenance file (expected a JSON object)")
    return Provenance.from_dict(data)
