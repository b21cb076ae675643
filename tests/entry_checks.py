"""The contract of every registry entry, one list of checks per kind of entry (as scikit-learn's
``parametrize_with_checks``): ``tests/common/test_registry.py`` runs each check on every registered entry of
its kind, and a recipe test runs :func:`check_entry` on the made-up entry it registers, so an entry that
breaks its kind's contract fails by name whichever test added it.

Registries are found in the library's code (:func:`library_registries`: every module-level
``NAME = Registry(...)``), so a new kind of entry without checks here fails too (:data:`CHECKS` is keyed by
the registry's ``kind``). Imported by bare name (``from entry_checks import check_entry``).
"""
from __future__ import annotations

import ast
import importlib
import inspect
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from library_files import ROOT, library_files


def library_registries() -> dict[str, Any]:
    """``{kind: registry}`` of every :class:`~pmask.common.registry.Registry` a library module creates at its
    top level, read from the code (``X = Registry(...)`` or ``X: Registry[...] = Registry(...)``) and imported
    after every registry is complete (``pmask`` and its commands)."""
    import pmask  # noqa: F401  registers the probes, metrics, modes, families, formats, decoders, tasks
    import pmask.cli.commands  # noqa: F401  registers the commands
    import pmask.eval.scores  # noqa: F401  registers the scores
    from pmask.common.registry import Registry

    found: dict[str, Any] = {}
    for path in library_files():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
            if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "Registry":
                target = node.targets[0] if isinstance(node, ast.Assign) else node.target
                rel = path.relative_to(ROOT).with_suffix("")
                module = ".".join(("pmask", *rel.parts))
                registry = getattr(importlib.import_module(module), target.id)
                assert isinstance(registry, Registry)
                found[registry.kind] = registry
    return found


# ---------------------------------------------------------------------------- the checks, kind by kind

def _one_line(text: str) -> None:
    assert text and "\n" not in text, repr(text)


def probe_is_whole(entry: Any) -> None:
    from pmask.common import options
    from pmask.common.probe_entries import METRIC_ENTRIES, SPAN_CHART, WORD_PAIRS
    from pmask.trees.registry import DECODERS

    assert entry.description.split(":", 1)[0].strip()
    assert entry.metrics and set(entry.metrics) <= set(METRIC_ENTRIES)
    assert set(entry.attention_head_metrics) <= set(entry.metrics)
    assert set(entry.subwords or ()) <= set(options.SUBWORD_POLICIES)
    assert entry.yields in (WORD_PAIRS, SPAN_CHART)
    cost = entry.sequences(5)
    assert isinstance(cost, int) and cost >= 1
    if entry.faithful:
        for decoder in entry.faithful.decoders:      # its pipeline's decoders exist and read what it yields
            assert decoder in DECODERS and DECODERS[decoder].needs_model and DECODERS[decoder].supports_faithful
            assert DECODERS[decoder].spans == entry.spans
        assert entry.faithful.metric in (None, *entry.metrics)
        assert set(entry.faithful.renames) <= set(entry.metrics) >= set(entry.faithful.renames.values())
        assert entry.faithful.tokenize in (None, *options.TOKENIZE_MODES)


def probe_lives_beside_its_code(entry: Any) -> None:
    """Its runner and cost are in the module that registers it, one module of perturb/probes/ per probe."""
    from pmask.perturb.probes import PROBE_MODULES

    module = importlib.import_module(entry.runner.__module__)
    assert module in PROBE_MODULES and entry.sequences.__module__ == module.__name__
    assert module.PROBE is entry


def runner_misfits(fn: Callable, protocol: Any = None) -> list[str]:
    """How ``fn``'s signature fails ``protocol.__call__``'s (:class:`pmask.common.probe_entries.ProbeRunner`):
    each parameter of the protocol must be taken by name and kind (positional, keyword-only, ``**kwargs``), and
    every other parameter of ``fn`` needs a default."""
    from pmask.common.probe_entries import ProbeRunner

    want = [p for p in inspect.signature((protocol or ProbeRunner).__call__).parameters.values() if p.name != "self"]
    have = inspect.signature(fn).parameters
    wrong = [f"{p.name} ({p.kind.description})" for p in want if p.kind is not p.VAR_KEYWORD
             and (p.name not in have or have[p.name].kind is not p.kind)]
    if any(p.kind is p.VAR_KEYWORD for p in want) and not any(p.kind is p.VAR_KEYWORD for p in have.values()):
        wrong.append("**kwargs")
    wrong += [f"{name} (not in the protocol, no default)" for name, p in have.items()
              if name not in {w.name for w in want} and p.default is p.empty and p.kind not in (p.VAR_POSITIONAL,
                                                                                              p.VAR_KEYWORD)]
    return wrong


def probe_runner_satisfies_the_protocol(entry: Any) -> None:
    assert runner_misfits(entry.runner) == []


def metric_is_whole(entry: Any) -> None:
    from pmask.common import options
    from pmask.common.probe_entries import PROBE_ENTRIES
    from pmask.perturb.engine.jobs import SentenceJob
    from pmask.perturb.probes import PROBE_MODULES
    from pmask.trees.registry import DECODERS

    _one_line(entry.description)
    assert any(entry.name in p.metrics for p in PROBE_ENTRIES.values()), f"no probe takes metric {entry.name}"
    assert entry.mlm_head or not entry.log_prob
    assert entry.subword in (None, *options.SUBWORD_POLICIES) and bool(entry.subword) == bool(entry.subword_reason)
    if entry.job:
        assert issubclass(entry.job, SentenceJob)
    if entry.faithful:
        assert all(d in DECODERS and not DECODERS[d].spans for d in entry.faithful.decoders)
        assert entry.faithful.symmetrize in (None, *options.SYMMETRIZE_MODES)
    modules = {m.__name__ for m in PROBE_MODULES}      # its computation beside it, in perturb/probes/
    for code in (entry.compare, entry.between_words, entry.job):
        assert code is None or code.__module__ in modules, code


def tokenisation_mode_is_whole(entry: Any) -> None:
    _one_line(entry.description)
    assert callable(entry.aligner) and "warn" in inspect.signature(entry.aligner).parameters
    assert entry.special_tokens or not entry.takes_context   # without separators no context can be laid out


def model_family_is_whole(entry: Any) -> None:
    import transformers

    from pmask.common.probe_entries import METRIC_ENTRIES, PROBE_ENTRIES
    from pmask.trees.registry import DECODERS

    _one_line(entry.description)
    assert hasattr(transformers, entry.loader), entry.loader
    assert entry.noun and entry.accepts and entry.hides
    assert set(entry.probes or ()) <= set(PROBE_ENTRIES) and set(entry.metrics or ()) <= set(METRIC_ENTRIES)
    assert all(DECODERS[d].task == task and DECODERS[d].needs_model for task, d in entry.decoders.items())
    assert entry.recognises(SimpleNamespace(model_type="made-up")) is False   # reads a config, needs nothing else
    assert callable(entry.inspect) and callable(entry.encoder)
    from pmask.perturb.alignment.subword_lists import SUBWORD_LISTS
    from pmask.perturb.engine.jobs import SentenceJob

    assert entry.subword_lists in SUBWORD_LISTS
    assert entry.prepare_tokenizer is None or callable(entry.prepare_tokenizer)
    jobs = [*entry.readings, *entry.readings.values(), *entry.metric_jobs.values()]
    assert all(issubclass(job, SentenceJob) for job in jobs), "a reading is a sentence job the engine runs"
    assert all(callable(count) and count([1, 2, 1]) > 0 for count in entry.costs.values())


def model_family_lives_beside_its_code(entry: Any) -> None:
    from pmask.perturb.encoders import FAMILY_MODULES

    modules = [m for m in FAMILY_MODULES if getattr(m, "FAMILY", None) is entry]
    assert len(modules) == 1, "registered beside its code, in a module of perturb/encoders listed in FAMILY_MODULES"


def corpus_format_is_whole(entry: Any) -> None:
    from pmask.trees.tasks import TASKS

    _one_line(entry.description)
    assert callable(entry.read) and callable(entry.parse)
    assert entry.task is None or entry.task in TASKS
    assert all(s.startswith(".") and s == s.lower() for s in entry.suffixes)
    assert entry.folder_suffix is None or entry.folder_suffix in entry.suffixes
    assert entry.write is None or entry.task is not None, "a format that writes trees holds trees of a task"
    assert not entry.predictions or entry.task is not None


def decoder_is_whole(entry: Any) -> None:
    from pmask.trees.tasks import TASKS

    _one_line(entry.description)
    assert entry.task in TASKS and callable(entry.fn)
    assert entry.baseline != entry.needs_model                     # a baseline reads no impacts; the others do
    assert not entry.spans or entry.needs_model
    assert not entry.undirected or "root" in TASKS[entry.task].settings   # undirected edges are directed by --root
    assert set(entry.ignores) <= {"symmetrize", "absolute", "bias", "root", "multiroot", "faithful"}


def task_is_whole(entry: Any) -> None:
    from pmask.eval.scores.columns import headline_key
    from pmask.trees.registry import DECODERS, decoder_names

    name = entry.name
    _one_line(entry.description)
    assert all(DECODERS[d].task == name and not DECODERS[d].baseline for d in entry.default_decoders)
    assert entry.default_decoders
    assert all(DECODERS[d].task == name and DECODERS[d].baseline
               for d in (*entry.short_baselines, *entry.undirected_baselines))
    assert entry.primary_baseline in entry.short_baselines
    assert set(entry.short_baselines) <= set(decoder_names(name, baseline=True))
    assert entry.field in ("heads", "tree"), "a field of Sentence and of Parsed"
    assert headline_key(name) == entry.headline                  # its headline is its own score's first column
    assert callable(entry.write) and (entry.read is None) == (entry.parse is None)


def score_is_whole(entry: Any) -> None:
    from pmask.trees.tasks import TASKS

    assert entry.name and entry.task in TASKS and entry.columns
    assert len({c.key for c in entry.columns}) == len(entry.columns)
    empty = entry()
    assert set(c.key for c in entry.columns) <= set(empty.to_dict())   # its columns are figures it gives
    assert (empty + entry()).to_dict() == empty.to_dict()


def score_lives_beside_its_code(entry: Any) -> None:
    from pmask.eval.scores import SCORE_MODULES

    module = importlib.import_module(entry.__module__)
    assert module in SCORE_MODULES and getattr(module, entry.__name__) is entry, "beside its code, in eval/scores/"


def command_is_whole(entry: Any) -> None:
    from pmask.cli.commands import COMMAND_MODULES

    _one_line(entry.help)
    assert entry.description and entry.epilog.startswith(("example:", "examples:"))
    module = importlib.import_module(entry.run.__module__)
    assert module in COMMAND_MODULES and module.COMMAND is entry and module.__name__.endswith(f".{entry.name}")


def unit_is_whole(entry: Any) -> None:
    """A unit's nouns, what applies to it named by registered entries, its job with its count."""
    from pmask.common import options
    from pmask.common.probe_entries import METRIC_ENTRIES, PROBE_ENTRIES
    from pmask.common.tokenization import TOKENIZE_ENTRIES
    from pmask.perturb.engine.jobs import SentenceJob

    _one_line(entry.description)
    assert entry.record and entry.noun and entry.least >= 1 and entry.why_least
    assert entry.split("a b") and entry.labels(["a"]) and entry.records(2).startswith("2 ")
    assert set(entry.probes or ()) <= set(PROBE_ENTRIES) and set(entry.subwords or ()) <= set(options.SUBWORD_POLICIES)
    assert set(entry.tokenize or ()) <= set(TOKENIZE_ENTRIES)
    assert (entry.job is None) == (entry.sequences is None), "a unit with a job of its own counts its sequences"
    assert entry.job is None or issubclass(entry.job, SentenceJob)
    assert not entry.pooled or entry.pooling and any(m.pools for m in METRIC_ENTRIES.values()), "pooled: says how"
    for probe in entry.probes or PROBE_ENTRIES:   # every probe it takes has a metric it takes
        assert entry.metrics(probe), probe


def unit_lives_beside_its_code(entry: Any) -> None:
    """``word`` with the registry; any other beside its job, in a module ``pmask/__init__.py`` imports."""
    from pmask.common.units import UNITS

    if entry.job is not None:
        assert importlib.import_module(entry.job.__module__).__dict__.get(entry.name.upper()) is entry
    else:
        assert next(iter(UNITS.values())) is entry, "a unit without a job of its own is the first, words"


#: The checks of each kind of entry, by the registry's ``kind``.
CHECKS: dict[str, tuple[Callable[[Any], None], ...]] = {
    "probe": (probe_is_whole, probe_lives_beside_its_code, probe_runner_satisfies_the_protocol),
    "metric": (metric_is_whole,),
    "tokenisation mode": (tokenisation_mode_is_whole,),
    "model family": (model_family_is_whole, model_family_lives_beside_its_code),
    "corpus format": (corpus_format_is_whole,),
    "decoder": (decoder_is_whole,),
    "task": (task_is_whole,),
    "score": (score_is_whole, score_lives_beside_its_code),
    "command": (command_is_whole,),
    "unit": (unit_is_whole, unit_lives_beside_its_code),
}


def check_entry(kind: str, entry: Any) -> None:
    """Run every check of ``kind`` on ``entry`` (a made-up entry of a recipe test, registered for the test)."""
    for check in CHECKS[kind]:
        check(entry)


def every_check() -> list[tuple[str, str, Callable[[Any], None]]]:
    """``(kind, name, check)`` for every registered entry of every library registry and every check of its kind
    (a kind without checks gets one that fails, naming it)."""
    def missing(entry: Any) -> None:
        raise AssertionError("no checks for this kind of entry: add them to tests/entry_checks.py CHECKS")

    return [(kind, name, check) for kind, registry in library_registries().items() for name in registry
            for check in CHECKS.get(kind, (missing,))]
