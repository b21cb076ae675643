"""The library's own modules: what the wheel ships, found as setup.py finds it, and nothing else.

The repository root is the package ``pmask``, and the README's set-up makes its virtual environment
there (``.venv``): a test that walked ``ROOT.rglob("*.py")`` read site-packages as library modules
(and failed on their non-UTF-8 files). Every test that looks at "the library's modules" asks this
helper instead: the root package and, folder by folder, every subpackage (a folder with an
``__init__.py`` whose name is an identifier) that is not one of setup.py's ``NOT_LIBRARY`` folders,
its modules taken one folder at a time (never walking into what is not a package), minus setup.py.
"""
from __future__ import annotations

import ast
import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def not_library(root: Path = ROOT) -> list[str]:
    """setup.py's ``NOT_LIBRARY``: the top-level folders (and their subpackages) the wheel leaves out."""
    tree = ast.parse((root / "setup.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "NOT_LIBRARY" for t in node.targets):
            return list(ast.literal_eval(node.value))
    raise AssertionError("setup.py defines no NOT_LIBRARY")


def library_packages(root: Path = ROOT) -> list[Path]:
    """The folders of the packages the wheel ships: the root (``pmask``) and its subpackages."""
    excluded = not_library(root)
    found, todo = [root], [(root, "")]
    while todo:
        folder, dotted = todo.pop()
        for child in sorted(p for p in folder.iterdir() if p.is_dir()):
            name = f"{dotted}.{child.name}" if dotted else child.name
            if (child.name.isidentifier() and (child / "__init__.py").is_file()
                    and not any(fnmatch.fnmatchcase(name, pattern) for pattern in excluded)):
                found.append(child)
                todo.append((child, name))
    return sorted(found)


def library_files(root: Path = ROOT) -> list[Path]:
    """Every module of the library (``.py`` files of :func:`library_packages`, without setup.py), sorted."""
    files = [p for folder in library_packages(root) for p in folder.glob("*.py") if p.is_file()]
    return sorted(p for p in files if p != root / "setup.py")
