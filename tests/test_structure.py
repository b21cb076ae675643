"""The house's structure, checked from the code's own imports and definitions (no import is run).

Wings and their order (imports point one way, down this list; perturb and trees are independent):
common (shared basics) → corpora → perturb | trees → pipeline (the parse glue) → eval → cli, with
``pmask/__init__.py`` (the one-call ``pmask.parse``) on top. Also: no import cycle between any two
modules (imports inside functions included), the limits on module, function and command length, a
docstring in each wing's ``__init__.py`` that says what it holds and what it may import, the role
packages of perturb/ and eval/, one concept per module name, and tests that mirror the package.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from library_files import library_files

ROOT = Path(__file__).resolve().parents[1]
WINGS = {"common": 0, "corpora": 1, "perturb": 2, "trees": 2, "pipeline": 3, "eval": 4, "cli": 5}
TOP = 6   # pmask/__init__.py and __main__.py
MAX_MODULE_LINES, MAX_FUNCTION_LINES, MAX_COMMAND_LINES = 400, 80, 30


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(["pmask", *parts])


MODULES = {module_name(p): p for p in library_files()}


def imports_of(path: Path) -> set[str]:
    """Modules that ``path`` imports anywhere in it (``from pmask.x import y`` names module
    ``pmask.x.y`` when that is a module, else ``pmask.x``)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("pmask"))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            if not base.startswith("pmask"):
                continue
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base)
    found.discard(name)
    return {m for m in found if m in MODULES}


def rank(module: str) -> int:
    parts = module.split(".")
    return WINGS.get(parts[1], TOP) if len(parts) > 1 else TOP


def test_top_level_is_the_wings_and_nothing_else():
    loose = sorted(p.name for p in ROOT.glob("*.py") if p.name not in ("__init__.py", "__main__.py", "setup.py"))
    assert not loose, f"modules outside the wings: {loose}"
    packages = sorted(p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file() and p.name != "tests")
    assert packages == sorted(WINGS), packages


@pytest.mark.parametrize("wing", sorted(WINGS))
def test_each_wing_says_what_it_holds_and_may_import(wing):
    doc = ast.get_docstring(ast.parse((ROOT / wing / "__init__.py").read_text(encoding="utf-8")))
    assert doc and "may import" in doc.lower(), f"{wing}/__init__.py: say what it holds and what it may import"


def test_imports_point_one_way():
    wrong = []
    for name, path in MODULES.items():
        for dep in imports_of(path):
            mine, theirs = name.split(".")[1:2], dep.split(".")[1:2]
            if mine == theirs:
                continue
            wings = {mine[0] if mine else "", theirs[0] if theirs else ""}
            if rank(dep) >= rank(name) or wings == {"perturb", "trees"}:
                wrong.append(f"{path.relative_to(ROOT)} imports {dep}")
    assert not wrong, "\n".join(wrong)


#: perturb/'s role packages from the bottom up; a module imports only its own role or one below it.
PERTURB_ROLES = ("alignment", "encoders", "models", "engine", "probes", "store", "fill", "source")
#: eval/'s role packages from the bottom up (docs/architecture.md, "Inside eval/").
EVAL_ROLES = ("outputs", "scores", "comparison", "studies", "figures", "html", "display")


def roles_pointing_up(wing: str, roles: tuple[str, ...]) -> list[str]:
    """Imports of a module of ``wing``'s role ``roles[k]`` that name its package itself or a role above k."""
    wrong = []
    for name, path in MODULES.items():
        parts = name.split(".")
        if parts[1:2] != [wing] or len(parts) < 3 or parts[2] not in roles:
            continue
        for dep in imports_of(path):
            theirs = dep.split(".")
            if theirs[1:2] != [wing]:
                continue
            role = theirs[2] if len(theirs) > 2 else None   # the package itself: on top
            if role != parts[2] and (role not in roles or roles.index(role) > roles.index(parts[2])):
                wrong.append(f"{path.relative_to(ROOT)} imports {dep}")
    return wrong


def test_perturb_roles_import_one_way():
    wrong = roles_pointing_up("perturb", PERTURB_ROLES)
    assert not wrong, "\n".join(wrong)


def test_perturb_is_its_role_packages():
    loose = sorted(p.name for p in (ROOT / "perturb").glob("*.py") if p.stem not in ("__init__", *PERTURB_ROLES))
    assert not loose, f"modules of perturb/ outside its role packages: {loose}"


def test_eval_roles_import_one_way():
    wrong = roles_pointing_up("eval", EVAL_ROLES)
    assert not wrong, "\n".join(wrong)


def test_eval_is_its_role_packages():
    loose = sorted(p.name for p in (ROOT / "eval").glob("*.py") if p.stem != "__init__")
    assert not loose, f"modules of eval/ outside its role packages: {loose}"
    packages = sorted(p.name for p in (ROOT / "eval").iterdir() if (p / "__init__.py").is_file())
    assert packages == sorted(EVAL_ROLES), packages


def test_no_import_cycle_between_modules():
    graph = {name: imports_of(path) for name, path in MODULES.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                return stack[stack.index(dep):] + [dep]
            if dep not in state and (cycle := visit(dep)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            pytest.fail("import cycle: " + " -> ".join(cycle))


def test_the_structure_check_sees_every_subpackage():
    packages = {name.split(".")[1] + "/" + "/".join(name.split(".")[2:-1]) for name in MODULES if name.count(".") > 2}
    assert any(p.startswith("perturb/store") for p in packages)
    assert any(p.startswith("perturb/encoders") for p in packages)


def test_a_module_name_is_one_concept():
    """Two library modules share a file name only when they are the same concept at two layers (the
    command ``cli/commands/sweep.py`` and ``eval/studies/sweep.py`` behind it), and then each one's
    docstring names the other by its full dotted name."""
    by_name: dict[str, list[str]] = {}
    for name, path in MODULES.items():
        if path.name not in ("__init__.py", "__main__.py"):
            by_name.setdefault(path.name, []).append(name)
    unexplained = []
    for file_name, names in sorted(by_name.items()):
        for name in names if len(names) > 1 else []:
            doc = ast.get_docstring(ast.parse(MODULES[name].read_text(encoding="utf-8"))) or ""
            unexplained += [f"{name} does not name {other} ({file_name})" for other in names
                            if other != name and other not in doc]
    assert not unexplained, "\n".join(unexplained)


def is_command_run(module: str, function: str) -> bool:
    """A command's run function: ``run`` in a module of ``pmask.cli.commands`` (one per command)."""
    return module.startswith("pmask.cli.commands.") and function == "run"


def test_length_limits():
    too_long, commands = [], []
    for name, path in MODULES.items():
        lines = path.read_text(encoding="utf-8").splitlines()
        if len(lines) > MAX_MODULE_LINES:
            too_long.append(f"{path.relative_to(ROOT)}: {len(lines)} lines")
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                size = node.end_lineno - node.lineno + 1
                limit = MAX_COMMAND_LINES if is_command_run(name, node.name) else MAX_FUNCTION_LINES
                commands += [name] if is_command_run(name, node.name) else []
                if size > limit:
                    too_long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {size} lines")
    assert not too_long, "\n".join(too_long)
    from pmask.cli.commands import COMMANDS  # the command limit sees every command's run function

    assert {c.run.__module__ for c in COMMANDS.values()} <= set(commands) and len(commands) >= len(COMMANDS)


#: Test files at the top of tests/ that test the package as a whole rather than one module.
CROSS_CUTTING = {
    "test_structure.py": "the layout: wings, imports, cycles, lengths, names, this mirror",
    "test_docs.py": "the README and docs/: Python examples run, every command shown is run or checked, links",
    "test_notebook.py": "docs/example.ipynb runs",
    "test_docstrings.py": "every docstring example runs",
    "test_library.py": "the one-call API (pmask.parse) and the library's top layers together",
    "test_packaging.py": "the wheel, its metadata, LICENSE, CITATION.cff and CHANGELOG.md",
    "test_dependencies.py": "every third-party import is declared in pyproject.toml",
    "test_scripts.py": "benchmarks/ and tools/: their flags through to what they change; no machine paths",
}


def mirrors(test: Path) -> bool:
    """``tests/<path>/test_<name>.py`` tests the library module ``<path>/<name>.py``, the subpackage
    ``<path>/<name>/``, or (``<name>`` the last part of ``<path>``) the package ``<path>`` itself."""
    rel = test.relative_to(ROOT / "tests")
    folder, name = ROOT.joinpath(*rel.parts[:-1]), test.stem.removeprefix("test_")
    if not (folder / "__init__.py").is_file() or folder.relative_to(ROOT).parts[0] not in WINGS:
        return False
    return (folder / f"{name}.py").is_file() or (folder / name / "__init__.py").is_file() or name == folder.name


def test_tests_mirror_the_package():
    tests = sorted(p for p in (ROOT / "tests").rglob("test_*.py") if "data" not in p.relative_to(ROOT).parts)
    loose = {p.name for p in tests if p.parent == ROOT / "tests"}
    assert loose <= set(CROSS_CUTTING), f"top-level test files that name no module: {loose - set(CROSS_CUTTING)}"
    wrong = [str(p.relative_to(ROOT)) for p in tests if p.parent != ROOT / "tests" and not mirrors(p)]
    assert not wrong, "test files that name no module or package at their mirrored path:\n" + "\n".join(wrong)
    folders = {p.parent for p in tests} | {p for p in (ROOT / "tests").rglob("*") if p.is_dir()}
    mirrored = {f: ROOT.joinpath(*f.relative_to(ROOT / "tests").parts) for f in folders if f != ROOT / "tests"}
    stray = sorted(str(f.relative_to(ROOT)) for f, package in mirrored.items()
                   if "data" not in f.parts and f.name != "__pycache__" and not (package / "__init__.py").is_file())
    assert not stray, f"test folders that mirror no package: {stray}"



def test_the_library_is_the_packages_the_wheel_ships_never_a_virtual_environment(tmp_path):
    """The README's set-up makes ``.venv`` in the repository root; its site-packages (here a module that is
    not UTF-8, as joblib ships one) are no library module, nor are tests, build output or non-packages."""
    (tmp_path / "setup.py").write_text('NOT_LIBRARY = ["tests", "tests.*", "build", "build.*"]\n', encoding="utf-8")
    for folder in ("", "common", "tests", "build/lib/pmask", ".venv/lib/python3.11/site-packages/joblib/test",
                   "models/pmask-tiny-en", "common/data"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        if folder not in ("models/pmask-tiny-en", "common/data"):
            (tmp_path / folder / "__init__.py").write_text("", encoding="utf-8")
        (tmp_path / folder / "x.py").write_bytes(b"# -*- coding: latin-1 -*-\nname = '\xe9'\n")
    found = [str(p.relative_to(tmp_path)) for p in library_files(tmp_path)]
    assert found == ["__init__.py", "common/__init__.py", "common/x.py", "x.py"]
    assert {p.parent for p in library_files()} >= {ROOT, ROOT / "perturb" / "engine", ROOT / "eval" / "html"}
