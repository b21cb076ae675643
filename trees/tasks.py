"""Per task (dependency, constituency): which decoders run when none is named (the entries that
:func:`pmask.pipeline.request.resolve` reads), and which baselines the short reports show. Every
caller asks :data:`TASK_TABLE` rather than naming decoders; its names are checked against
:data:`pmask.trees.registry.DECODERS` on import.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping, Sequence

from pmask.common.errors import DecodeError
from pmask.common.options import TASKS as TASK_NAMES
from pmask.corpora.sentence import Sentence
from pmask.trees.registry import decoder_names, decoder_task

__all__ = ["TASK_TABLE", "TaskInfo", "check_tasks", "corpus_task", "decoder_task", "task_info"]


@dataclass(frozen=True)
class TaskInfo:
    """What a task's callers ask of the registry, beyond its :class:`Decoder` entries.

    Attributes:
        name: "dependency" or "constituency".
        default_decoders: run when no decoder is named (``bench``); the first alone when one
            is needed (``sweep``).
        short_baselines: the baselines a many-row study reports next to the model (``bench``):
            the two fixed trees and one random tree.
        primary_baseline: the one baseline a model's best score is compared with.
        undirected_baselines: baselines of undirected trees (scored by UUAS), reported next to the rows of
            undirected decoders (``bench``); the first is their reference, as ``primary_baseline`` is the
            others'.
    """

    name: str
    default_decoders: tuple[str, ...]
    short_baselines: tuple[str, ...]
    primary_baseline: str
    undirected_baselines: tuple[str, ...] = ()

    def reference(self, undirected: bool = False) -> str:
        """The baseline a model's best score is compared with: the first undirected baseline for an
        undirected decoder (when the task has one), else :attr:`primary_baseline`."""
        return self.undirected_baselines[0] if undirected and self.undirected_baselines else self.primary_baseline

    @property
    def default_decoder(self) -> str:
        return self.default_decoders[0]

    @property
    def baselines(self) -> tuple[str, ...]:
        """Every baseline of the task, in table order (``eval --baselines``, ``sweep --baselines``)."""
        return decoder_names(self.name, baseline=True)


#: The one per-task table: task name -> :class:`TaskInfo` (names checked against :data:`DECODERS`).
TASK_TABLE: Mapping[str, TaskInfo] = MappingProxyType({t.name: t for t in (
    TaskInfo("dependency", default_decoders=("eisner", "cle"),
             short_baselines=("right-chain", "left-chain", "random-projective"), primary_baseline="right-chain",
             undirected_baselines=("connect-adjacent",)),
    TaskInfo("constituency", default_decoders=("mart",),
             short_baselines=("right-branching", "left-branching", "random-binary"),
             primary_baseline="right-branching"),
)})


def check_tasks(tasks: Mapping[str, TaskInfo]) -> None:
    """Raise ValueError unless ``tasks`` covers every task once and names only registered decoders
    of its own task: defaults among the model decoders, short and primary baselines among the
    baselines (run on import, so a renamed decoder cannot leave the table behind)."""
    if tuple(tasks) != TASK_NAMES:
        raise ValueError(f"the task table lists {tuple(tasks)}, not the tasks {TASK_NAMES}")
    for t in tasks.values():
        models, baselines = decoder_names(t.name, baseline=False), decoder_names(t.name, baseline=True)
        wrong = [n for n in t.default_decoders if n not in models] + [
            n for n in (*t.short_baselines, t.primary_baseline, *t.undirected_baselines) if n not in baselines]
        if wrong or not t.default_decoders or t.primary_baseline not in t.short_baselines:
            raise ValueError(f"task {t.name}: {', '.join(wrong) or 'its defaults or primary baseline'} "
                             f"do not fit its {'/'.join(models)} decoders and {'/'.join(baselines)} baselines")


check_tasks(TASK_TABLE)


def task_info(task: str) -> TaskInfo:
    """The :data:`TASK_TABLE` entry of ``task``; a :class:`DecodeError` naming the tasks otherwise.

    Example:
        >>> task_info("dependency").primary_baseline
        'right-chain'
        >>> task_info(decoder_task("mart")).short_baselines
        ('right-branching', 'left-branching', 'random-binary')
    """
    try:
        return TASK_TABLE[task]
    except KeyError:
        raise DecodeError(f"unknown task '{task}' (known: {', '.join(TASK_TABLE)})") from None


def corpus_task(sentences: Sequence[Sentence]) -> str:
    """The task of the gold trees ``sentences`` carry: "constituency" for bracketed trees (PTB), else
    "dependency" (CoNLL-U and .dp heads, and text, which holds neither)."""
    return "constituency" if sentences and sentences[0].tree is not None else "dependency"
