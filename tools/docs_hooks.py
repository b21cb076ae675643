"""MkDocs hooks of the documentation site (``mkdocs.yml`` names this file).

The repository root is the import package ``pmask``, so no folder of the repository holds a ``pmask``
entry for mkdocstrings to import: ``on_config`` makes one, ``build/docs-src/pmask``, a link to the root
(``build/`` is ignored by git). ``on_files`` adds the bundled model's card
(``models/pmask-tiny-en/README.md``) as the page ``pmask-tiny-en.md``, and ``on_page_markdown`` turns the pages'
links to the card (``../models/pmask-tiny-en/README.md``, which work when the files are read on their own) into
links to that page.
``ExampleSections`` is a griffe extension that mkdocs.yml gives mkdocstrings.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import griffe
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "build" / "docs-src"
MODEL_CARD = ROOT / "models" / "pmask-tiny-en" / "README.md"
CARD_PAGE = "pmask-tiny-en.md"


@event_priority(100)   # before mkdocstrings reads its paths
def on_config(config: Any) -> Any:
    link = SOURCE / "pmask"
    if link.is_symlink() and link.resolve() != ROOT:
        link.unlink()   # a link left by a checkout elsewhere
    if not link.is_symlink():
        if link.exists():
            raise SystemExit(f"{link} exists and is not a link to the repository root: remove it")
        SOURCE.mkdir(parents=True, exist_ok=True)
        link.symlink_to(ROOT, target_is_directory=True)
    return config


def on_files(files: Files, config: Any) -> Files:
    files.append(File.generated(config, CARD_PAGE, abs_src_path=str(MODEL_CARD)))
    return files


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    return markdown.replace("](../models/pmask-tiny-en/README.md)", f"]({CARD_PAGE})")


class ExampleSections(griffe.Extension):
    """Reads pmask's ``Example:`` docstring sections (SuPar's word) as griffe's ``Examples:``, so that their
    ``>>>`` lines show as code (griffe would take ``Example:`` for an admonition of plain text)."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = re.sub(r"^(\s*)Example:$", r"\1Examples:", obj.docstring.value, flags=re.M)
