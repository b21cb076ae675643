"""Registries (``pmask.common.registry``): ordered, a second entry of one name refused, one-line lookups;
every registered entry of every registry keeps its kind's contract (``tests/entry_checks.py``, one test
parametrised over every entry, as scikit-learn's ``parametrize_with_checks``); and no library code branches
on a name any registry holds (behaviour is asked of the entry).

The guard reads the code (``ast``): a comparison (``==``, ``!=``, ``in``, ``not in``) or a ``match`` case
between a string constant that names an entry of a registry (every registry the library creates: a probe, a
metric, a decoder, a task, a model family, a unit, a corpus format or one of its suffixes, a tokenisation mode, a
score or a score's column, a command, ...) and any expression is a branch on that name, except in the module
that creates the entry (``ProbeEntry("pair", ...)``, ``Decoder("cky", ...)``). A name that is also an
ordinary word of another setting (:data:`AMBIGUOUS`) counts only when the other side speaks of the
registry's kind (``metric == "all"``, not ``layers == "all"``).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest

from pmask.common.errors import OptionError
from pmask.common.registry import EntryNames, EntryTable, Registry

from entry_checks import every_check, library_registries
from library_files import library_files

ROOT = Path(__file__).resolve().parents[2]

#: The classes whose instances are registry entries: a call of one names its entry (its first argument).
ENTRY_TYPES = {"ProbeEntry", "MetricEntry", "Decoder", "CorpusFormat", "TokenizeMode", "Column", "Command",
               "ModelFamily", "TaskEntry", "UnitEntry"}

#: Words besides a registry's own kind that speak of its entries (for the names of :data:`AMBIGUOUS`).
KIND_WORDS = {"metric": ("measure",), "decoder": ("dec",), "corpus format": ("fmt", "suffix"),
              "tokenisation mode": ("tokeni",), "score column": ("key", "column")}

#: Registered names that are also ordinary words of other settings, and why.
AMBIGUOUS = {"all": "--layers all (every layer)", "word": "a word of a sentence (a unit only where code says unit)"}


# ---------------------------------------------------------------------------- the registry itself

def test_a_registry_keeps_order_refuses_a_second_name_and_looks_up_in_one_line():
    reg = Registry[SimpleNamespace]("colour")
    red, blue = reg.register(SimpleNamespace(name="red")), reg.register(SimpleNamespace(name="blue"))
    assert list(reg) == ["red", "blue"] and reg["blue"] is blue and reg.lookup("red") is red and len(reg) == 2
    with pytest.raises(ValueError, match="colour 'red' is registered already"):
        reg.register(SimpleNamespace(name="red"))
    for name in ("green", None):
        with pytest.raises(OptionError) as err:
            reg.lookup(name)
        assert str(err.value) == f"unknown colour {name!r} (choose from red, blue)"
    assert reg.unregister("red") is red and list(reg) == ["blue"]


def test_registered_stands_in_for_an_entry_and_restores_it_in_place():
    reg = Registry[SimpleNamespace]("colour")
    for name in ("red", "green", "blue"):
        reg.register(SimpleNamespace(name=name, shade=0))
    names = EntryNames(lambda: tuple(reg))
    shades = EntryTable(lambda: {n: e.shade for n, e in reg.items()})
    with reg.registered(SimpleNamespace(name="green", shade=1), SimpleNamespace(name="grey", shade=2)):
        assert tuple(names) == ("red", "green", "blue", "grey") and shades["green"] == 1
    assert names == ("red", "green", "blue") and dict(shades) == {"red": 0, "green": 0, "blue": 0}
    with pytest.raises(RuntimeError), reg.registered(SimpleNamespace(name="grey", shade=2)):
        raise RuntimeError
    assert list(reg) == ["red", "green", "blue"]


# ---------------------------------------------------------------------------- the guard

@dataclass(frozen=True)
class Kind:
    """One registry: its names and the words code uses for its kind."""

    what: str
    names: frozenset[str]
    words: tuple[str, ...]


def registries() -> list[Kind]:
    """Every registry the library creates (:func:`entry_checks.library_registries`), with its entries' names
    (a corpus format's suffixes too) and the score columns, read after every entry is registered."""
    found = library_registries()
    kinds = []
    for kind, registry in found.items():
        names = set(registry)
        if kind == "corpus format":   # its suffixes select it as its name does
            names |= {s for f in registry.values() for s in (*f.suffixes, f.folder_suffix) if s}
        kinds.append(Kind(kind, frozenset(names), (*kind.split(), *KIND_WORDS.get(kind, ()))))
    columns = frozenset(c.key for score in found["score"].values() for c in score.columns)
    return [*kinds, Kind("score column", columns, ("score", *KIND_WORDS["score column"]))]


# ---------------------------------------------------------------------------- every entry's contract

@pytest.mark.parametrize("kind, name, check", every_check(), ids=lambda v: getattr(v, "__name__", v))
def test_every_registered_entry_keeps_its_kinds_contract(kind, name, check):
    check(library_registries()[kind][name])


def _strings(node: ast.AST) -> list[str]:
    """The string constants a comparison operand is: one, or the members of a literal tuple, list or set."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [s for e in node.elts for s in _strings(e) if isinstance(e, ast.Constant)]
    return []


def _words(node: ast.AST) -> set[str]:
    """The identifiers and string constants an expression is made of, lower case."""
    found = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            found.add(sub.id.lower())
        elif isinstance(sub, ast.Attribute):
            found.add(sub.attr.lower())
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            found.add(sub.value.lower())
    return found


def _own_names(tree: ast.AST) -> set[str]:
    """The names of the entries a module creates (and a corpus format's suffixes), which it may compare."""
    own = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            callee = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            if callee in ENTRY_TYPES:
                own.update(s for a in node.args[:1] for s in _strings(a))
                own.update(s for k in node.keywords if k.arg in ("name", "key", "suffixes", "folder_suffix")
                           for s in _strings(k.value))
    return own


def _branches(tree: ast.AST) -> list[tuple[int, ast.AST, ast.AST, list[str]]]:
    """(line, constant side, other side, the strings) of every comparison and ``match`` case on strings."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for op, a, b in zip(node.ops, operands, operands[1:]):
                if isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)):
                    found += [(node.lineno, c, other, _strings(c)) for c, other in ((a, b), (b, a)) if _strings(c)]
        elif isinstance(node, ast.Match):
            for case in node.cases:
                values = [p.value for p in ast.walk(case.pattern) if isinstance(p, ast.MatchValue)]
                found += [(case.pattern.lineno, v, node.subject, _strings(v)) for v in values if _strings(v)]
    return found


def offenders(files: list[Path], root: Path, kinds: list[Kind]) -> list[str]:
    """``file:line: code  [name: registry]`` for each branch on a registered name in ``files`` (under ``root``)."""
    wrong = []
    for path in files:
        rel = path.relative_to(root)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        own = _own_names(tree)
        for line, _, other, strings in _branches(tree):
            words = _words(other)
            for name in strings:
                if name in own:
                    continue
                hit = [k.what for k in kinds if name in k.names
                       and (name not in AMBIGUOUS or any(w in x for w in k.words for x in words))]
                if hit:
                    wrong.append(f"{rel}:{line}: {ast.unparse(other)} vs {name!r}  [{', '.join(hit)}]")
    return wrong


def test_no_library_code_branches_on_a_registered_name():
    """Behaviour is asked of the entry (``tokenize_mode(t).special_tokens``, ``FORMATS[f].task``,
    ``decoder.settings``), never of a name: a new entry then needs no edit elsewhere."""
    wrong = offenders(library_files(), ROOT, registries())
    assert not wrong, "branches on a registered name (ask the entry instead):\n" + "\n".join(wrong)


def test_the_guard_sees_what_it_must_and_nothing_else():
    kinds = registries()
    code = '''
if fmt == "ptb" or decoder == "distance-split" or metric in ("l1", "l2") or detect_format(x) == "conllu":
    pass
if path.suffix in (".conllu", ".conll") or mode.tokenize == "bare" or run.probe != "attention":
    pass
match key:
    case "uas":
        pass
if layers == "all" or text == "all" or colour == "red" or name == "words of a kind":
    pass
if metric == "all":
    pass
if task == "dependency" or tb.task != "constituency" or lm.family.name == "masked" or command == "eval":
    pass
if sent.unit == "edu" or getattr(s, "unit", "word") == "word" or text == "word":
    pass
'''
    wrong = _check_source(code, kinds)
    found = sorted({w.split(" vs ")[1].split()[0] for w in wrong})
    assert found == sorted(["'.conll'", "'.conllu'", "'all'", "'attention'", "'bare'", "'constituency'",
                            "'conllu'", "'dependency'", "'distance-split'", "'edu'", "'eval'", "'l1'", "'l2'",
                            "'masked'", "'ptb'", "'uas'", "'word'"]), wrong
    assert not any("layers" in w or "text ==" in w for w in wrong)
    own = "ProbeEntry('pair', 'x', ('dist',), runner=None, sequences=None)\nif probe == 'pair' or probe == 'single':\n"
    assert [w.split(" vs ")[1].split()[0] for w in _check_source(own + "    pass\n", kinds)] == ["'single'"]


def _check_source(code: str, kinds: list[Kind]) -> list[str]:
    """:func:`offenders` of one module holding ``code`` (written under a throw-away root)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "module.py").write_text(code, encoding="utf-8")
        return offenders([Path(tmp) / "module.py"], Path(tmp), kinds)
