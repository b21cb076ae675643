"""Old import paths of modules that moved in the second and third layout steps, kept for one release.

``import pmask.sweep`` still works: it warns (``DeprecationWarning``, naming the new path) and
gives the module at its new place. Installed by ``pmask/__init__.py``; remove in 0.3.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from types import ModuleType
from typing import Any, Sequence

#: old dotted path -> new dotted path
MOVED: dict[str, str] = {
    "pmask.errors": "pmask.common.errors",
    "pmask.options": "pmask.common.options",
    "pmask.files": "pmask.common.files",
    "pmask.heads": "pmask.corpora.heads",
    "pmask.provenance": "pmask.corpora.provenance",
    "pmask.specs": "pmask.corpora.spec",
    "pmask.trees.brackets": "pmask.corpora.brackets",
    "pmask.source": "pmask.perturb.source",
    "pmask.testing": "pmask.perturb.testing",
    "pmask.testing_multilingual": "pmask.perturb.testing.multilingual",
    "pmask.testing_zoo": "pmask.perturb.testing.zoo",
    "pmask.perturb.surface": "pmask.perturb.alignment.text",
    "pmask.perturb.pipeline": "pmask.perturb.fill.compute",
    "pmask.perturb.store_layers": "pmask.perturb.fill.add_layers",
    "pmask.perturb.encoders.heads": "pmask.perturb.encoders.mlm_head",
    "pmask.induce": "pmask.trees.induce",
    "pmask.sweep": "pmask.eval.sweep",
    "pmask.maps": "pmask.eval.impact_maps",
    "pmask.bench": "pmask.eval.bench.run",
    "pmask.bench_report": "pmask.eval.bench.files",
    "pmask.bench_scoring": "pmask.eval.bench.scoring",
    "pmask.cli_args": "pmask.cli.args",
    "pmask.eval.brackets": "pmask.eval.bracket_score",
    "pmask.eval.dependency": "pmask.eval.dependency_score",
    "pmask.eval.html_report": "pmask.eval.html",
    "pmask.eval.html_data": "pmask.eval.html.data",
    "pmask.eval.html_impacts": "pmask.eval.html.impacts",
    "pmask.eval.html_trees": "pmask.eval.html.trees",
    "pmask.eval.html_bench": "pmask.eval.bench.html",
    # the third layout step: perturb/ grouped by role; pmask.perturb.engine and
    # pmask.perturb.fill became packages that re-export their old names
    "pmask.perturb.model": "pmask.perturb.models.load",
    "pmask.perturb.model_spec": "pmask.perturb.fill.spec",
    "pmask.perturb.tokenizer": "pmask.perturb.models.tokenizer",
    "pmask.perturb.checkpoint": "pmask.perturb.models.checkpoint",
    "pmask.perturb.bundled": "pmask.perturb.models.bundled",
    "pmask.perturb.jobs": "pmask.perturb.engine.jobs",
    "pmask.perturb.rewrite": "pmask.perturb.engine.rewrite",
    "pmask.perturb.impact_settings": "pmask.perturb.engine.settings",
    "pmask.perturb.impact_stats": "pmask.perturb.engine.stats",
    "pmask.perturb.build": "pmask.perturb.fill.stores",
    "pmask.perturb.add_layers": "pmask.perturb.fill.add_layers",
    "pmask.perturb.store_record": "pmask.perturb.fill.record",
    "pmask.perturb.distributed": "pmask.perturb.fill.distributed",
    "pmask.perturb.context": "pmask.perturb.alignment.neighbours",
    "pmask.perturb.store_corpus": "pmask.perturb.store.corpus",
    "pmask.perturb.impact_source": "pmask.perturb.source",
    # the third layout step: a command is one module of pmask.cli.commands, the shared steps derive from them
    "pmask.cli.parsers": "pmask.cli.dispatch",
    "pmask.cli.checks": "pmask.cli.dispatch",
    "pmask.cli.interrupt": "pmask.cli.dispatch",
    # the third layout step (eval/)
    "pmask.eval.metric": "pmask.eval.score",
    "pmask.eval.report": "pmask.eval.tables",
    "pmask.eval.probes": "pmask.eval.bench.heads",
}


class _Alias(importlib.abc.Loader):
    def __init__(self, old: str, new: str):
        self.old, self.new = old, new

    def create_module(self, spec: Any) -> ModuleType:
        warnings.warn(f"{self.old} moved to {self.new}; the old path goes away in pmask 0.3",
                      DeprecationWarning, stacklevel=4)
        return importlib.import_module(self.new)

    def exec_module(self, module: ModuleType) -> None:
        sys.modules[self.old] = module


class MovedFinder(importlib.abc.MetaPathFinder):
    """Finds the old paths of :data:`MOVED` and loads the module at its new place."""

    def find_spec(self, name: str, path: Sequence[str] | None = None, target: Any = None) -> Any:
        if name not in MOVED:
            return None
        return importlib.util.spec_from_loader(name, _Alias(name, MOVED[name]))


def install() -> None:
    """Put the finder on ``sys.meta_path`` once."""
    if not any(isinstance(f, MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(MovedFinder())
