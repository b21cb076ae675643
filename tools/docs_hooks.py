"""MkDocs hooks of the documentation site (``mkdocs.yml`` names this file).

The repository root is the import package ``pmask``, so no folder of the repository holds a ``pmask``
entry for mkdocstrings to import: ``on_config`` makes one, ``build/docs-src/pmask``, a folder of links
to the root's library modules and packages only (``build/`` is ignored by git): a link to the whole root
would let griffe walk a ``.venv`` made there, as the README's set-up does, with all of site-packages.
``on_files`` adds the bundled model's card
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


#: Top-level folders that are not the library (setup.py's NOT_LIBRARY).
NOT_LIBRARY = {"tests", "benchmarks", "tools", "docs", "build", "dist"}


def _library_entries() -> list[Path]:
    """The root's modules and packages that the wheel ships (no hidden folder, no ``.venv``)."""
    return sorted(p for p in ROOT.iterdir() if not p.name.startswith(".") and p.name not in NOT_LIBRARY
                  and ((p.suffix == ".py" and p.name != "setup.py") or (p / "__init__.py").is_file()))


@event_priority(100)   # before mkdocstrings reads its paths
def on_config(config: Any) -> Any:
    package = SOURCE / "pmask"
    if package.is_symlink():
        package.unlink()   # a link to a whole root, left by an earlier build
    package.mkdir(parents=True, exist_ok=True)
    for old in package.iterdir():
        if not old.is_symlink():
            raise SystemExit(f"{old} is not a link made by this hook: remove {package}")
        old.unlink()
    for entry in _library_entries():
        (package / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
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
