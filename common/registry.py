"""A registry of named entries, and read-only views of one (torch-free): the one shape of every extension point.

Every extension point of pmask is a :class:`Registry`: probes and impact metrics
(:mod:`pmask.common.probe_entries`), tokenisation modes (:mod:`pmask.common.tokenization`), model families
(:mod:`pmask.common.model_families`), corpus formats (:mod:`pmask.corpora.formats`), decoders
(:mod:`pmask.trees.registry`), tasks (:mod:`pmask.trees.tasks`), scores (:mod:`pmask.eval.scores.score`) and
commands (:mod:`pmask.cli.commands.command`). An entry is created and registered in the module that holds its
code (``PROBE_ENTRIES.register(ProbeEntry(...))``), so that module's import is what makes it known; whoever
reads a registry must be sure that module was imported (``pmask/__init__.py`` imports
:mod:`pmask.perturb.probes`, whose ``__init__`` imports each probe module). Nothing keeps a copy of a
registry's entries made at import (a module-level dict or tuple of them): readers use the registry or a live
view of it.

A registry keeps its entries in the order they were registered (the order of CLI choices, help and
tables), refuses a second entry of one name, and says in one line which names it knows when asked
for another. Choices, help, validation and manifests read it through live views
(:class:`EntryTable`, :class:`EntryNames`), so an entry registered later (a test's) shows at once.

Example:
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Colour:
    ...     name: str
    >>> colours = Registry[Colour]("colour")
    >>> red = colours.register(Colour("red"))
    >>> list(colours), colours.lookup("red") is red
    (['red'], True)
    >>> colours.lookup("blue")
    Traceback (most recent call last):
    ...
    pmask.common.errors.OptionError: unknown colour 'blue' (choose from red)
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Generic, Protocol, TypeVar, overload

from pmask.common.errors import OptionError


class Named(Protocol):
    """What a registry holds: anything with a ``name``."""

    @property
    def name(self) -> str: ...


E = TypeVar("E", bound=Named)
V = TypeVar("V")


class Registry(Mapping[str, E], Generic[E]):
    """Named entries of one kind, in the order they were registered.

    Args:
        kind: what an entry is, for messages ("probe", "corpus format").
        error: the exception a lookup of an unknown name raises (a :class:`~pmask.common.errors.PmaskError`
            subclass taking one message: the decoders' and tasks' :class:`~pmask.common.errors.DecodeError`).
    """

    def __init__(self, kind: str, error: type[Exception] = OptionError):
        self.kind = kind
        self.error = error
        self._entries: dict[str, E] = {}

    def register(self, entry: E) -> E:
        """Add ``entry`` after the others and return it; a ``ValueError`` if its name is taken."""
        if entry.name in self._entries:
            raise ValueError(f"{self.kind} {entry.name!r} is registered already")
        self._entries[entry.name] = entry
        return entry

    def unregister(self, name: str) -> E:
        """Remove and return the entry ``name`` (tests and tools; a ``KeyError`` if there is none)."""
        return self._entries.pop(name)

    @contextmanager
    def registered(self, *entries: E) -> Iterator[None]:
        """Register ``entries`` for the ``with`` block only; an entry of a name already taken stands in for
        the registered one, at its place, and the registered one is back afterwards (tests and tools).

        Example:
            >>> from types import SimpleNamespace
            >>> colours = Registry[SimpleNamespace]("colour")
            >>> with colours.registered(SimpleNamespace(name="red")):
            ...     list(colours)
            ['red']
            >>> list(colours)
            []
        """
        before = dict(self._entries)
        try:
            for entry in entries:
                self._entries[entry.name] = entry
            yield
        finally:
            self._entries.clear()
            self._entries.update(before)

    def lookup(self, name: str | None) -> E:
        """The entry ``name``; an :attr:`error` (:class:`OptionError`) listing the names otherwise (None included)."""
        if name is None or name not in self._entries:
            raise self.error(f"unknown {self.kind} {name!r} (choose from {', '.join(self._entries)})")
        return self._entries[name]

    def __getitem__(self, name: str) -> E:
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self._entries)})"


class EntryTable(Mapping[str, V]):
    """A read-only table computed from a registry each time it is read, so an entry registered later
    shows at once (the tables of :mod:`pmask.common.options` are these)."""

    def __init__(self, make: Callable[[], Mapping[str, V]]):
        self._make = make

    def __getitem__(self, key: str) -> V:
        return self._make()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._make())

    def __len__(self) -> int:
        return len(self._make())

    def __repr__(self) -> str:
        return repr(dict(self._make()))


class EntryNames(Sequence[V]):
    """A read-only tuple computed from a registry each time it is read."""

    def __init__(self, make: Callable[[], tuple[V, ...]]):
        self._make = make

    @overload
    def __getitem__(self, index: int) -> V: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[V]: ...

    def __getitem__(self, index: int | slice) -> V | Sequence[V]:
        return self._make()[index]

    def __len__(self) -> int:
        return len(self._make())

    def __eq__(self, other: object) -> bool:
        return tuple(self) == (tuple(other) if isinstance(other, (tuple, EntryNames)) else other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return repr(self._make())
