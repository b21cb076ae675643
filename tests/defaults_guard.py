"""The guard of the one resolver (issue 46 item 1): reads the library's code (``ast``) and lists every place
outside :func:`pmask.pipeline.request.resolve`'s module that chooses a default for a setting of a run.

A setting is one of :data:`SETTINGS` (the values :func:`~pmask.pipeline.request.resolve` chooses when they are
not given). A default is chosen by

- a parameter or dataclass field named for a setting with a default value: below the pipeline wing
  (``common``, ``corpora``, ``perturb``, ``trees``) with any default, ``None`` included (they take resolved
  settings); in the pipeline wing and the front ends above it (the ``pmask`` package's ``__init__``, ``eval``,
  ``cli``), which hold requests as given, with a default other than ``None`` (``None`` is "not given": the
  resolver chooses); a registry entry's fields declare what the entry fixes, which the resolver reads;
- ``SETTING or VALUE`` (``metric or default_metric(probe)``, ``probe or "pair"``, ``subword or "avg"``), and
  ``record.get("setting", VALUE)``;
- a call of a function that chose defaults outside the resolver (:data:`CHOOSERS`);
- the literal name of a default entry (:data:`DEFAULT_NAMES`: ``"pair"``) outside the module that registers
  it (a docstring may name it, and an entry's declaration may name the entries it applies to:
  ``UnitEntry(probes=("pair",))``), or where :data:`NOT_THE_PROBE` says the word means something else.

The only exemption is the one reader of old records (:data:`OLD_RECORDS`): what a store manifest or a
``.meta.json`` written before a setting was recorded meant is a fact about that record, not a default.
"""
from __future__ import annotations

import ast
from pathlib import Path

#: The settings whose value :func:`pmask.pipeline.request.resolve` chooses when it is not given.
SETTINGS = frozenset({"probe", "metric", "subword", "tokenize", "context", "decoder", "root", "symmetrize"})

#: Functions that chose defaults before the one resolver: a call of one anywhere else is a second resolver.
CHOOSERS = frozenset({"default_metric", "default_subword", "with_defaults", "impact_defaults", "model_defaults",
                      "or_default", "resolve_impact", "named"})

#: Names of the entries that are a setting's default, and the module allowed to spell them (it registers them).
DEFAULT_NAMES = {"pair": "perturb/probes/pair.py"}

#: The one module that chooses defaults.
RESOLVER = "pipeline/request.py"

#: ``(module, function)``: the one reader of old records (what a setting left out of an older one meant).
OLD_RECORDS = {("corpora/provenance.py", "recorded_impact")}

#: The pipeline wing and the front ends: they hold requests as given (None: not given).
FRONT_ENDS = ("__init__.py", "cli/", "eval/", "pipeline/")

#: ``(module, why)``: where the word of a default's name is not that entry (checked to stay few).
NOT_THE_PROBE = {"eval/html/impacts.py": "the report's chart kind of a word-pair map (its script reads it)"}

#: Registry entry types: their fields declare what an entry fixes (``AuthorsRecipe.metric``), which the resolver reads.
ENTRY_TYPES = frozenset({"ProbeEntry", "MetricEntry", "AuthorsRecipe", "Decoder", "TaskEntry", "UnitEntry",
                         "ModelFamily", "CorpusFormat", "TokenizeMode", "Command", "Column"})


def setting_values() -> dict[str, frozenset[object]]:
    """Each setting's values (its registry's names, its modes; ints for ``context``): a fallback to one of them
    (``root or "gold"``) chooses a default, a fallback to anything else (a label, ``""``) does not."""
    import pmask  # noqa: F401  registers every entry
    from pmask.common.options import ROOT_MODES, SUBWORD_POLICIES, SYMMETRIZE_MODES
    from pmask.common.probe_entries import METRIC_ENTRIES, PROBE_ENTRIES
    from pmask.common.tokenization import TOKENIZE_ENTRIES
    from pmask.trees.registry import DECODERS

    return {"probe": frozenset(PROBE_ENTRIES), "metric": frozenset(METRIC_ENTRIES),
            "subword": frozenset(SUBWORD_POLICIES), "tokenize": frozenset(TOKENIZE_ENTRIES),
            "decoder": frozenset(DECODERS), "root": frozenset(ROOT_MODES), "symmetrize": frozenset(SYMMETRIZE_MODES)}


def _words(node: ast.AST) -> set[str]:
    """The identifiers and string constants an expression is made of."""
    found = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            found.add(sub.id)
        elif isinstance(sub, ast.Attribute):
            found.add(sub.attr)
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            found.add(sub.value)
    return found


def _is_none(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings (a module's, a class's or a function's)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _exempt(tree: ast.AST, rel: str) -> set[int]:
    """ids of the nodes inside the old-record reader of this module."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (rel, node.name) in OLD_RECORDS:
            found.update(id(sub) for sub in ast.walk(node))
    return found


def _defaults(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[str, ast.AST]]:
    """``(parameter, default)`` of every parameter that has a default."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    return [(a.arg, d) for a, d in pairs]


def _fallback(node: ast.AST, setting: str, values: dict[str, frozenset[object]]) -> bool:
    """Whether ``node``, the value a setting falls back to, is one of that setting's values (or a default's name,
    or a call of a chooser)."""
    words = _words(node)
    if any("default" in w.lower() for w in words if w.isidentifier()) or words & CHOOSERS:
        return True
    if not isinstance(node, ast.Constant) or node.value is None or node.value == "":
        return False
    if setting == "context":
        return isinstance(node.value, int)
    return node.value in values.get(setting, ())


def _setting_of(node: ast.AST) -> str | None:
    """The setting a value expression reads (``impact.metric``, ``metric``, ``r.get("probe")``,
    ``x["root"]``), None for anything else (a comparison, a call of another function)."""
    if isinstance(node, ast.Name):
        return node.id if node.id in SETTINGS else None
    if isinstance(node, ast.Attribute):
        return node.attr if node.attr in SETTINGS else None
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return node.slice.value if node.slice.value in SETTINGS else None
    if (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "get" and node.args
            and isinstance(node.args[0], ast.Constant)):
        return node.args[0].value if node.args[0].value in SETTINGS else None
    return None


def _root_word(annotation: ast.AST | None) -> bool:
    """A parameter ``root`` annotated as an int is the gold root *word* of a tree (trees/), not the root mode."""
    return annotation is not None and "int" in ast.unparse(annotation)


def offenders_in(source: str, rel: str, values: dict[str, frozenset[object]]) -> list[str]:
    """``rel:line: what`` for each default chosen in one module's ``source`` (``rel``: its path in the package)."""
    if rel == RESOLVER:
        return []
    tree = ast.parse(source)
    front = rel.startswith(FRONT_ENDS)
    docs, exempt = _docstrings(tree), _exempt(tree, rel)
    declared = {id(sub) for node in ast.walk(tree) if isinstance(node, ast.Call)
                and (node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")) in ENTRY_TYPES
                for sub in ast.walk(node)}   # an entry's declaration names the entries it applies to
    found: list[tuple[int, str]] = []

    def default(name: str, value: ast.AST, annotation: ast.AST | None, line: int, what: str) -> None:
        if name in SETTINGS and not (front and _is_none(value)) and not (name == "root" and _root_word(annotation)):
            found.append((line, f"{what} {name} = {ast.unparse(value)}"))

    for node in ast.walk(tree):
        if id(node) in exempt:
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = {a.arg: a.annotation for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)}
            for name, value in _defaults(node):
                default(name, value, args.get(name), node.lineno, f"parameter of {node.name}():")
        elif isinstance(node, ast.ClassDef) and node.name not in ENTRY_TYPES:
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.value is not None:
                    default(item.target.id, item.value, item.annotation, item.lineno, f"field of {node.name}:")
        elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            setting = _setting_of(node.values[0])
            if setting is not None and any(_fallback(v, setting, values) for v in node.values[1:]):
                found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Call):
            callee = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            setting = _setting_of(node)
            if callee in CHOOSERS:
                found.append((node.lineno, f"{ast.unparse(node.func)}(...) chooses defaults"))
            elif setting is not None and len(node.args) == 2 and _fallback(node.args[1], setting, values):
                found.append((node.lineno, ast.unparse(node)))
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs | declared
              and node.value in DEFAULT_NAMES and DEFAULT_NAMES[node.value] != rel and rel not in NOT_THE_PROBE):
            found.append((node.lineno, f"{node.value!r}: a default's name"))
    return [f"{rel}:{line}: {what}" for line, what in sorted(set(found))]


def offenders(files: list[Path], root: Path) -> list[str]:
    """:func:`offenders_in` of every module of ``files`` (under ``root``, the package)."""
    values = setting_values()
    return [o for path in files for o in offenders_in(path.read_text(encoding="utf-8"),
                                                      path.relative_to(root).as_posix(), values)]
