"""Models shipped inside the package (``pmask/models/<name>/``) and the default model (torch-free).

A bundled model is a standard Hugging Face folder (config, tokenizer, safetensors) plus a
``meta.json`` that records where it comes from, what was measured on it and the impact settings
chosen for it from those measurements (``defaults``: metric and layer of the pair probe). Its name
(``pmask-tiny-en``) works wherever a hub name does (``--model pmask-tiny-en``, ``random:pmask-tiny-en``,
``load_model("pmask-tiny-en")``), offline; a local folder of the same name wins, as it would over a
hub name. When no model is named, commands that need one use :data:`DEFAULT_MODEL` and say so once.

Example:
    >>> DEFAULT_MODEL
    'pmask-tiny-en'
    >>> bundled_path("bert-base-uncased") is None
    True
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from pmask.common.files import read_json

logger = logging.getLogger(__name__)

#: The folder of bundled models: ``models/`` at the package root.
MODELS_DIR = Path(__file__).resolve().parents[2] / "models"   # pmask/models/, the weights (not this package)
#: The model used when a command or ``pmask.parse`` is given none.
DEFAULT_MODEL = "pmask-tiny-en"

_announced: set[str] = set()


@dataclass(frozen=True)
class BundledModel:
    """One bundled model: its folder and what its ``meta.json`` records."""

    name: str
    path: Path
    meta: dict[str, Any] = field(repr=False)

    @property
    def defaults(self) -> dict[str, Any]:
        """Settings chosen for this model from its measurements (``metric``, ``layer``; pair probe)."""
        return dict(self.meta.get("defaults") or {})

    @property
    def commit(self) -> str | None:
        """What identifies these weights in provenance (the hub records a commit hash there):
        ``sha256:`` and the first 16 hex digits of the weights file's SHA-256, from ``meta.json``."""
        digest = (self.meta.get("weights") or {}).get("sha256")
        return f"sha256:{digest[:16]}" if digest else None

    def summary(self) -> str:
        """A few words on the model: language, parameters, layers (for one-line notes)."""
        arch = self.meta.get("architecture") or {}
        params = self.meta.get("parameters")
        parts = [self.meta.get("language_name", ""), "BERT",
                 f"{params / 1e6:.1f}M parameters" if params else "",
                 f"{arch['layers']} layers" if arch.get("layers") else ""]
        return ", ".join(p for p in parts if p).replace("English, BERT", "English BERT")


def _is_local(name: str) -> bool:
    return Path(name).expanduser().is_dir()


@cache
def _read(name: str) -> BundledModel | None:
    path = MODELS_DIR / name
    if not (path / "config.json").is_file():
        return None
    meta = read_json(path / "meta.json") or {}
    return BundledModel(name, path, meta)


def bundled_model(name: str | None) -> BundledModel | None:
    """The bundled model called ``name`` (``random:`` prefix allowed), or None: not bundled, or a
    local folder of that name exists (it wins)."""
    if not name:
        return None
    name = name.split(":", 1)[1] if name.startswith("random:") else name
    if "/" in name or "\\" in name or name.startswith(".") or _is_local(name):
        return None
    return _read(name)


def bundled_path(name: str | None) -> Path | None:
    """The folder to load for ``name`` when it is a bundled model, else None."""
    found = bundled_model(name)
    return None if found is None else found.path


def bundled_models() -> list[str]:
    """Names of every bundled model present in this installation."""
    if not MODELS_DIR.is_dir():
        return []
    return sorted(p.name for p in MODELS_DIR.iterdir() if (p / "config.json").is_file())


def announce_default(name: str = DEFAULT_MODEL) -> None:
    """Say once per process, in one warning line, that the default model is used and how to pick another."""
    if name in _announced:
        return
    _announced.add(name)
    found = bundled_model(name)
    what = f" ({found.summary()}; for demos, tests and offline trials)" if found else ""
    logger.warning("no model given: using the bundled %s%s; --model NAME (Python: model=NAME) picks another",
                name, what)
