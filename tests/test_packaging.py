"""The package as published: the wheel holds the library only, its metadata comes from pyproject.toml
with the version from ``pmask.common.version``, and LICENSE, CITATION.cff and CHANGELOG.md agree with it.

(``.ci/run`` also builds the sdist, runs ``twine check`` and uses the wheel from a fresh virtual
environment; here the wheel is built with setuptools' PEP 517 backend from a copy of the tree.)
"""
from __future__ import annotations

import email
import importlib.util
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from pmask.common.version import __version__

from library_files import library_files

ROOT = Path(__file__).resolve().parents[1]
_ANYWHERE = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache",
                                   ".benchmarks", "*.whl")
_AT_THE_ROOT = shutil.ignore_patterns("out*", "store*")   # a run's outputs; perturb/store/ is the library's


def NOT_COPIED(folder: str, names: list[str]) -> set[str]:
    ignored = set(_ANYWHERE(folder, names))
    return ignored | set(_AT_THE_ROOT(folder, names)) if Path(folder) == ROOT else ignored


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    src, out = tmp_path_factory.mktemp("src") / "pmask", tmp_path_factory.mktemp("wheel")
    shutil.copytree(ROOT, src, ignore=NOT_COPIED)
    build = f"from setuptools import build_meta; build_meta.build_wheel({str(out)!r})"
    done = subprocess.run([sys.executable, "-c", build], cwd=src, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    (path,) = out.glob("*.whl")
    return zipfile.ZipFile(path)


def test_the_wheel_holds_the_library_only(wheel):
    names = wheel.namelist()
    package = [n for n in names if n.startswith("pmask/")]
    assert "pmask/setup.py" not in names
    top = {n.split("/")[1] for n in package}
    assert not top & {"tests", "benchmarks", "docs", "tools", ".ci", "pyproject.toml", "README.md", "pytest.ini"}
    assert top >= {"__init__.py", "__main__.py", "common", "corpora", "perturb", "trees", "pipeline", "eval", "cli",
                   "models"}
    data = ("pmask/eval/html/assets/", "pmask/models/")
    assert all(n.endswith(".py") or n.startswith(data) for n in package), package
    assert "pmask/eval/html/assets/report.css" in names and "pmask/eval/display/arcs.py" in names
    # the tests' idea of the library's modules (tests/library_files.py) is exactly what the wheel ships
    assert {n for n in package if n.endswith(".py")} == {f"pmask/{p.relative_to(ROOT)}" for p in library_files()}


def test_the_wheel_holds_the_bundled_model(wheel):
    folder = "pmask/models/pmask-tiny-en/"
    held = {n[len(folder):] for n in wheel.namelist() if n.startswith(folder)}
    assert held >= {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "meta.json",
                    "README.md", "NOTICE"}


def test_the_wheel_metadata(wheel):
    dist = f"pmask-{__version__}.dist-info"
    meta = email.message_from_string(wheel.read(f"{dist}/METADATA").decode())
    assert meta["Name"] == "pmask" and meta["Version"] == __version__
    assert meta["License-Expression"] == "Apache-2.0" and meta["Requires-Python"] == ">=3.10"
    assert {"pandas", "notebook", "test", "lint", "docs"} <= set(meta.get_all("Provides-Extra"))
    requires = meta.get_all("Requires-Dist")
    assert any(r.startswith("torch") for r in requires) and 'pandas>=1.5; extra == "pandas"' in requires
    assert not any(r.startswith("pandas") and "extra" not in r for r in requires)   # pandas stays optional
    assert "Perturbed Masking" in meta["Summary"] and "## The main job" in meta.get_payload()
    assert "pmask = pmask.cli:console" in wheel.read(f"{dist}/entry_points.txt").decode()
    assert b"Apache License" in wheel.read(f"{dist}/licenses/LICENSE")


def test_license_citation_and_changelog():
    assert "Apache License\n                           Version 2.0" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    import yaml  # pyyaml: the test extra
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0" and cff["version"] == __version__ and cff["license"] == "Apache-2.0"
    paper = cff["preferred-citation"]
    assert paper["title"] == "Perturbed Masking: Parameter-free Probing for Analyzing and Interpreting BERT"
    assert [a["family-names"] for a in paper["authors"]] == ["Wu", "Chen", "Kao", "Liu"]
    assert (paper["year"], paper["start"], paper["end"]) == (2020, 4166, 4176)
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "## Unreleased (0.2.0)" in changelog and "## 0.1.0" in changelog


def layout_table() -> list[tuple[list[str], str, str]]:
    """The rows of the CHANGELOG's table of moved module paths (the fourth layout step): old paths, new
    path, and the old cell as written."""
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    table = text[text.index("| old path | new path |"):].split("\n\n")[0].splitlines()[2:]
    rows = []
    for line in table:
        old, new = line.strip("|").split("|")
        rows.append((re.findall(r"`([^`]+)`", old), new.strip().strip("`"), old))
    return rows


def test_the_changelog_lists_each_moved_module_once_and_its_new_path_imports():
    rows = layout_table()
    modules = [(olds, new) for olds, new, cell in rows if "re-export" not in cell and not new.startswith("removed")]
    assert len(modules) > 60
    olds = [old for row, _ in modules for old in row]
    assert len(olds) == len(set(olds)), "a moved module listed twice"
    for old in olds:
        try:
            found = importlib.util.find_spec(old)
        except ModuleNotFoundError:   # its parent package is gone too
            found = None
        assert found is None, f"{old} still imports: no alias is kept at an old path"
    for _, new in modules:
        assert importlib.util.find_spec(new) is not None, f"{new} (the CHANGELOG's new path) does not exist"


def test_setup_py_keeps_only_the_layout():
    text = (ROOT / "setup.py").read_text(encoding="utf-8")
    for moved_to_pyproject in ("version=", "install_requires", "extras_require", "entry_points", "license=",
                               "python_requires", "long_description"):
        assert moved_to_pyproject not in text


def test_ci_installs_and_tests_as_the_readme_says_in_fresh_virtual_environments():
    """.ci/run reads the README's set-up section (the venv sentence and its bash block) and runs it as
    written, in the repository root; here: the README holds what .ci/run reads, and .ci/run runs each."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Set-up\n", 1)[1].split("\n## ", 1)[0]
    assert "`python -m venv .venv && . .venv/bin/activate`" in section
    install, test = section.split("```bash\n", 1)[1].split("```", 1)[0].strip().splitlines()
    assert install.startswith("python -m pip install torch==2.13.0 && ") and "pip install -e" in install
    assert test.startswith("python -m pytest")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for name in ("VENV", "INSTALL", "TEST"):
        assert f'eval "$README_{name}"' in ci, f"CI does not run the README's {name.lower()} command"
    assert ci.count("python3 -m venv ") == 1 and "--system-site-packages" not in ci   # the second: README's own
