"""The tasks, one :class:`TaskEntry` each: the kinds of tree pmask induces and scores (dependency heads,
bracketed constituency trees).

A task entry owns what differs between the kinds of tree: where a sentence holds its trees (``heads`` or
``tree``: the field of :class:`pmask.corpora.sentence.Sentence` and of ``pmask.pipeline.induce.Parsed``), its
prediction writer and reader, its headline score, its default decoders and its baselines, the settings every
decoder of the task reads (a dependency tree's root), and the words of its messages. Every caller asks the
entry (``task_entry(name).write(...)``, ``entry.default_decoder``), never the task's name; a new task is one entry
registered here (its decoders say their ``task``, its score class its ``task``).

:data:`TASKS` is a :class:`~pmask.common.registry.Registry`, read by
:func:`pmask.pipeline.request.resolve` (the default decoder), the parse pipeline (writing trees), ``eval``
(reading and pairing predictions, baselines), ``sweep`` and ``bench``; whether its decoder names exist is
checked with every entry (``tests/entry_checks.py``).

Example:
    >>> task_entry("dependency").primary_baseline, task_entry("constituency").field
    ('right-chain', 'tree')
    >>> task_entry("constituency").short_baselines
    ('right-branching', 'left-branching', 'random-binary')
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pmask.common.errors import DecodeError
from pmask.common.registry import Registry
from pmask.common.units import unit_of
from pmask.corpora.formats import output_format
from pmask.corpora.ptb import parse_brackets, read_brackets, write_brackets
from pmask.corpora.sentence import Sentence

__all__ = ["TASKS", "TaskEntry", "corpus_task", "plain_task", "task_entry"]

#: How a task writes predicted trees: (sentences, their trees, output path or "-", the CoNLL-U DEPREL).
Writer = Callable[[Sequence[Sentence], Sequence[Any], "str | Path", str], None]


@dataclass(frozen=True)
class TaskEntry:
    """One task: a kind of tree, how it is written, read, decoded by default and compared.

    Attributes:
        name, description: the task's name (in outputs' ``task``) and one line for docs.
        field: the attribute of a ``Sentence`` (its gold) and of a ``Parsed`` record (its prediction) that holds
            this task's tree: ``"heads"`` (int heads, 0 = ROOT) or ``"tree"`` (an ``nltk.Tree``).
        trees: its trees in messages ("dependency heads (CoNLL-U or .dp)").
        counts: what its score counts, in messages ("word", "sentence").
        headline: the key of its headline score (``uas``, ``f1_sentence``: the first column of its score class,
            :mod:`pmask.eval.scores.columns`).
        default_decoders: run when no decoder is named (``bench``); the first alone when one is needed.
        short_baselines: the baselines a many-row study reports next to the model (``bench``): the two fixed
            trees and one random tree.
        primary_baseline: the one baseline a model's best score is compared with.
        undirected_baselines: baselines of undirected trees (scored by UUAS), reported next to the rows of
            undirected decoders (``bench``); the first is their reference, as ``primary_baseline`` is the others'.
        settings: the parse settings every decoder of the task reads besides a model decoder's (a dependency
            tree's ``root``, ``faithful``, ``multiroot``); an empty tuple: none.
        scoring: the settings its scores read (``punct``: punctuation words scored or left out).
        write: its prediction writer (:data:`Writer`).
        writes, output_hint, written_as: its output in the one-line refusal of an output named for another task
            ("dependency trees as CoNLL-U, which ...", "the output .conllu", "CoNLL-U").
        read, parse: its reader of predictions in no corpus format (a file; standard input's text and a name
            for messages), None where its predictions are read through their corpus format
            (:func:`pmask.corpora.prediction_format`).
        empty: what decoding an empty sentence would be, for the refusal ("decode an empty sentence").
        punctuation: how punctuation is treated where its scores read no ``punct`` (the report's note).
        unpredicted: what a prediction lacks when it predicts nothing, for the refusal of a score over nothing
            ("head (every HEAD is '_')").
        per_word: a tree is one value per word (heads): a decoder's output is checked to have one per word.
    """

    name: str
    description: str
    field: str
    trees: str
    counts: str
    headline: str
    default_decoders: tuple[str, ...]
    short_baselines: tuple[str, ...]
    primary_baseline: str
    write: Writer
    writes: str
    output_hint: str
    written_as: str
    empty: str
    unpredicted: str
    undirected_baselines: tuple[str, ...] = ()
    settings: tuple[str, ...] = ()
    scoring: tuple[str, ...] = ()
    read: Callable[[Path], list] | None = None
    parse: Callable[[str, str], list] | None = None
    per_word: bool = False
    punctuation: str = ""

    def reference(self, undirected: bool = False) -> str:
        """The baseline a model's best score is compared with: the first undirected baseline for an
        undirected decoder (when the task has one), else :attr:`primary_baseline`."""
        return self.undirected_baselines[0] if undirected and self.undirected_baselines else self.primary_baseline

    @property
    def default_decoder(self) -> str:
        return self.default_decoders[0]

    def tree_of(self, record: Any) -> Any:
        """The task's tree a ``Sentence`` (its gold) or a ``Parsed`` record (its prediction) holds (None: none)."""
        return getattr(record, self.field, None)


#: The tasks, in documentation order (the first is the task of a corpus that holds no trees).
TASKS: Registry[TaskEntry] = Registry("task", error=DecodeError)


def _write_heads(sentences: Sequence[Sentence], heads: Sequence[Any], output: str | Path, deprel: str) -> None:
    """Heads in the format the output names (:func:`pmask.corpora.formats.output_format`: CoNLL-U, SciDTB)."""
    written = output_format(output, "dependency", unit_of(sentences).discourse)   # documents of EDUs: SciDTB too
    assert written.write is not None   # output_format picks among the formats that write
    written.write(sentences, heads, output, deprel)


def _write_brackets(sentences: Sequence[Sentence], trees: Sequence[Any], output: str | Path, deprel: str) -> None:
    write_brackets(trees, output)




TASKS.register(TaskEntry(
    "dependency", "dependency trees: one head per word (CoNLL-U HEAD, 0 = ROOT)", field="heads",
    trees="dependency heads (CoNLL-U or .dp)", counts="word", headline="uas",
    default_decoders=("eisner", "cle"), short_baselines=("right-chain", "left-chain", "random-projective"),
    primary_baseline="right-chain", undirected_baselines=("connect-adjacent",),
    settings=("root", "faithful", "multiroot"), scoring=("punct",), write=_write_heads,
    writes="dependency trees as CoNLL-U, which is read back from a .conllu or .conll file only",
    output_hint=".conllu", written_as="CoNLL-U", empty="decode an empty sentence", per_word=True,
    unpredicted="head (every HEAD is '_')"))
TASKS.register(TaskEntry(
    "constituency", "constituency trees: unlabelled brackets over the words (an nltk.Tree)", field="tree",
    trees="bracketed trees (PTB .mrg)", counts="sentence", headline="f1_sentence",
    default_decoders=("mart",), short_baselines=("right-branching", "left-branching", "random-binary"),
    primary_baseline="right-branching", write=_write_brackets,
    writes="bracketed trees, one per line, not CoNLL-U", output_hint="e.g. .txt", written_as="bracketed trees",
    read=read_brackets, parse=parse_brackets, empty="build a tree over an empty sentence",
    unpredicted="tree (every line is empty)",
    punctuation="removed on reading the treebank (only word POS tags are kept: no punctuation, -NONE- traces, $ or "
                "#; the WSJ10 convention); --punct has no effect"))


def task_entry(task: str | None) -> TaskEntry:
    """The entry of ``task``; a one-line :class:`DecodeError` naming the tasks otherwise.

    Example:
        >>> task_entry("dependency").headline
        'uas'
    """
    return TASKS.lookup(task)


def plain_task() -> TaskEntry:
    """The task whose predictions are read in no corpus format (bracketed trees, one per line): what a prediction
    file in no format pmask writes predictions in holds."""
    return next(t for t in TASKS.values() if t.read is not None)


def corpus_task(sentences: Sequence[Sentence]) -> str:
    """The task of the gold trees ``sentences`` carry: the first task whose tree the first sentence holds
    (bracketed trees: constituency; heads: dependency), else the first task (text holds no tree)."""
    first = sentences[0] if sentences else None
    return next((t.name for t in TASKS.values() if first is not None and t.tree_of(first) is not None),
                next(iter(TASKS)))
