"""Names a package exports but imports only on first use (so that, e.g., reading a store loads no torch).

Example:
    >>> __getattr__ = lazy_exports("pmask.perturb.engine", {"ImpactStats": ".stats"})
    >>> __getattr__("ImpactStats").__name__
    'ImpactStats'
"""
from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` giving each name of ``exports`` from its module.

    Args:
        package: the package's dotted name (its ``__name__``).
        exports: name -> the module holding it, relative to ``package`` (``".stats"``) or absolute.

    Returns:
        The function to bind as the package's ``__getattr__`` (an unknown name is an AttributeError).
    """
    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(exports[name], package), name)

    return __getattr__
