"""Whether a store is finished, who is writing it, and the command that finishes it.

A store that holds fewer sentences than its corpus (an interrupted ``pmask impact``, or one that
another process is still writing) gives corpus-level results (trees, scores) over only part of
the corpus. :func:`check_finished` is what readers run first: it refuses such a store in one line
that says how much it holds, whether a process is writing it now (:mod:`.lock`) and the exact
``pmask impact … --resume`` that finishes it, unless the caller accepts part of a corpus, in
which case it warns once and returns the :class:`StoreState` (its :meth:`~StoreState.coverage`
goes into the outputs' records). Reads the manifest and the index parts only, no shard.

Example:
    >>> print(store_state("pud-store/").describe())   # doctest: +SKIP
    unfinished: 64 of 200 sentences (its run was interrupted)
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pmask.common.command_line import spell_command
from pmask.common.errors import UnfinishedStoreError
from pmask.common.files import read_json
from pmask.common.labels import plural
from pmask.common.options import RANDOM_PREFIX
from pmask.corpora.corpus_spec import CorpusSpec
from pmask.corpora.provenance import recorded_impact
from pmask.perturb.engine.impact_settings import UNSET, resolved_impact
from pmask.perturb.store.layout import read_manifest
from pmask.perturb.store.lock import WriterCheck, current_writer
from pmask.perturb.store.parts import part_files

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class StoreState:
    """How far a store is: sentences of its corpus stored or skipped, who writes it, how to finish it."""

    path: Path
    corpus: int              # sentences the store is made for
    stored: int              # sentences with matrices
    skipped: int             # sentences recorded as too long for the model
    unmerged: int            # sentences in index parts of an interrupted torchrun run (--resume merges them)
    complete: bool
    writer: WriterCheck
    resume: str              # the command that finishes the store

    @property
    def held(self) -> int:
        """Sentences the store has dealt with (stored or skipped): what a reader of it gets."""
        return self.stored + self.skipped

    def counts(self) -> str:
        """``64 of 200 sentences`` (with the skipped and the unmerged ones when there are any)."""
        skipped = f", {self.skipped} of them skipped as too long" if self.skipped else ""
        unmerged = (f"; {self.unmerged} more are in index parts left by an interrupted torchrun run, "
                    f"which --resume merges" if self.unmerged else "")
        return f"{self.held} of {plural(self.corpus, 'sentence')}{skipped}{unmerged}"

    def why(self) -> str:
        """Why it is unfinished: a writer at work, one that may be, or an interrupted run."""
        if self.writer.writing:
            return f"{self.writer.who()} is writing it now"
        if self.writer.writing is None:
            return (f"{self.writer.who()} noted itself as its writer, and from this host its lock cannot be "
                    f"seen: it may still be writing it")
        return "its run was interrupted"

    def describe(self) -> str:
        """``complete`` or ``unfinished: 64 of 200 sentences (its run was interrupted)``."""
        if self.complete:
            return "complete" + (f" ({self.why()})" if self.writer.writing else "")
        return f"unfinished: {self.counts()} ({self.why()})"

    def refusal(self) -> str:
        """The one-line refusal (a :class:`~pmask.common.errors.SettingError` template: ``{allow_incomplete}``)."""
        use = f"give {{allow_incomplete}} to use the {self.held} sentences it holds"
        if self.writer.writing:
            how = f"wait for that run to finish, or {use} so far"
        elif self.writer.writing is None:
            how = f"if that run has ended, finish the store with: {self.resume}; or {use}"
        else:
            how = f"finish it with: {self.resume}; or {use}"
        return f"{self.path}: unfinished store: it holds {self.counts()}, and {self.why()}; {how}"

    def warning(self) -> str:
        """The one-line warning when an unfinished store is read anyway."""
        later = "" if self.writer.writing else f" (finish it with: {self.resume})"
        return (f"{self.path}: unfinished store ({self.why()}): using the {self.held} of {self.corpus} sentences "
                f"it holds; results cover only those{later}")

    def coverage(self) -> dict[str, Any]:
        """What outputs record about the part of the corpus they cover."""
        return {"store": str(self.path), "complete": self.complete, "sentences": self.held, "of": self.corpus}


def resume_settings(path: str | os.PathLike, manifest: dict[str, Any]) -> dict[str, Any]:
    """The settings of the ``pmask impact`` run that finishes the store at ``path``, as data
    (setting name -> value, in command-line order; :func:`pmask.common.command_line.spell_command`
    spells them).

    Built from the manifest: the corpus (``input``) and its selection, the model (``random:NAME``
    for random weights), every impact setting that differs from what the resolver would choose for that model
    and corpus when it is left out (the bundled model's metric, say: see :func:`_differing`), the dtype when it
    is not float32, the requested layers unless [-1], the store (``output``) and ``resume``.

    Example:
        >>> resume_settings("st", manifest)   # doctest: +SKIP
        {'input': 'c.txt', 'limit': 5, 'model': 'bert-base-uncased', 'layers': [1, -1], 'output': 'st', 'resume': True}
    """
    corpus, model = manifest["corpus"], manifest["model"]
    selection = corpus.get("selection") or {"limit": corpus.get("n_sentences")}   # older stores: their size
    source = str(corpus.get("path") or "CORPUS")
    settings: dict[str, Any] = {"input": source}
    fmt = selection.get("format")
    if fmt and fmt != "auto" and fmt != CorpusSpec(Path(source)).resolved_format():
        settings["format"] = fmt
    for key in ("limit", "max_words"):
        if selection.get(key):
            settings[key] = selection[key]
    settings["model"] = (RANDOM_PREFIX if model.get("random_init") else "") + str(model.get("name"))
    settings.update(_differing(settings["model"], str(corpus.get("unit") or "word"), recorded_impact(manifest)))
    if model.get("dtype") not in (None, "float32"):
        settings["dtype"] = model["dtype"]
    requested = manifest["layers"].get("requested")
    if requested not in (None, [-1]):
        settings["layers"] = requested
    return {**settings, "output": str(path), "resume": True}


def _differing(model: str, unit: str, recorded: dict[str, Any]) -> dict[str, Any]:
    """The recorded impact settings that ``pmask impact`` with ``model`` over ``unit`` records would not choose when
    left out, in command-line order: each asked of the resolver
    (:func:`~pmask.perturb.engine.impact_settings.resolved_impact`) with the ones spelled before it (a probe decides
    its metric, a metric its subword policy); every one when no resolver is connected."""
    spelled, order = UNSET, ("probe", "metric", "subword", "tokenize", "context")
    for key in order:
        chosen = resolved_impact(model, unit, spelled)
        if recorded[key] is not None and (chosen is None or getattr(chosen, key) != recorded[key]):
            spelled = replace(spelled, **{key: recorded[key]})
    return {key: getattr(spelled, key) for key in order if getattr(spelled, key) is not None}


def _unmerged(path: Path, done: set[int]) -> int:
    """Sentences listed in index parts (of an interrupted distributed run) that the manifest lacks."""
    found: set[int] = set()
    for part in part_files(path):
        try:
            entries = read_json(part, encoding="ascii").get("sentences") or []
            found |= {int(e["index"]) for e in entries} - done
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            continue   # an unreadable part is dealt with (and reported) when the store is resumed
    return len(found)


def store_state(path: str | os.PathLike, manifest: dict[str, Any] | None = None) -> StoreState:
    """The :class:`StoreState` of the store at ``path`` (``manifest``: its manifest, when already read).

    Raises:
        StoreError: not a store, or an unreadable manifest.
    """
    path = Path(path)
    manifest = manifest if manifest is not None else read_manifest(path)
    entries = manifest["sentences"]
    skipped = sum(1 for e in entries if "skipped" in e)
    return StoreState(path=path, corpus=int(manifest["corpus"].get("n_sentences") or 0),
                      stored=len(entries) - skipped, skipped=skipped,
                      unmerged=_unmerged(path, {e["index"] for e in entries}),
                      complete=bool(manifest.get("complete")), writer=current_writer(path),
                      resume=spell_command("impact", resume_settings(path, manifest)))


def check_finished(path: str | os.PathLike, manifest: dict[str, Any] | None = None, *,
                   allow_incomplete: bool = False) -> StoreState:
    """The store's state; an unfinished store is refused, or with ``allow_incomplete`` read with a warning.

    Args:
        path: the store directory.
        manifest: its manifest, when already read.
        allow_incomplete: accept a store that holds only part of its corpus (warns once, naming how much).

    Returns:
        The :class:`StoreState` (``coverage()`` says what part of the corpus a result covers).

    Raises:
        UnfinishedStoreError: an unfinished store without ``allow_incomplete``: the message says how
            many sentences it holds, whether a process is writing it now, and how to finish it.
    """
    state = store_state(path, manifest)
    if state.complete:
        return state
    if not allow_incomplete:
        raise UnfinishedStoreError(state.refusal())
    logger.warning("%s", state.warning())
    return state
