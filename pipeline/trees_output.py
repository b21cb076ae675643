"""Where a parse writes its trees: the output name decides the format, checked before any work.

Each task writes its trees (:attr:`pmask.trees.tasks.TaskEntry.write`): dependency trees to CoNLL-U, or
discourse trees of documents (a unit whose entry says ``discourse``: EDUs) to SciDTB JSON (a ``.dep``/``.json``
file for one document, or a folder of ``.dep`` files), the input's own format (the formats' writers,
:func:`pmask.corpora.formats.output_format`); bracketed trees one per line.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from pmask.common.errors import SettingError
from pmask.common.files import is_stdout
from pmask.common.units import unit_of
from pmask.corpora import FORMATS, Sentence, prediction_format
from pmask.trees.registry import decoder_task
from pmask.trees.tasks import TASKS, task_entry


def documents_output(output: str | Path) -> bool:
    """Whether ``output`` may be written as a documents format pmask writes (SciDTB): a file of its suffix, or a
    folder (an existing one, or a name without a suffix) where the format is read from folders."""
    path, named = Path(output), prediction_format(output)
    return any(f.documents and f.write is not None and (named is f or bool(f.folder_suffix)
                                                        and (path.is_dir() or not path.suffix))
               for f in FORMATS.values())


def written_task(output: str | Path) -> str:
    """The task whose trees an output's name is for: the task of the sentence-level format pmask writes that the
    name selects (``.conllu``: dependency), else the task whose predictions are read in no corpus format
    (bracketed trees, one per line)."""
    named = prediction_format(output)
    if named is not None and named.task and named.write is not None and not named.documents:
        return named.task
    return next(t.name for t in TASKS.values() if t.read is not None)


def check_trees_file(output: str | Path, decoder: str, sentences: Sequence[Sentence] = ()) -> None:
    """Refuse an output named for another kind of tree than ``decoder`` writes (standard output takes any):
    dependency trees are CoNLL-U, which is read back from a .conllu or .conll name only
    (:func:`pmask.corpora.prediction_format`), and bracketed trees must not take such a name. Documents of
    EDUs may also be written as SciDTB (:func:`documents_output`).

    Raises:
        SettingError: naming the output and ``{decoder}``.
    """
    if is_stdout(output):
        return
    task = task_entry(decoder_task(decoder))
    named = written_task(output)
    writes_documents = any(f.documents and f.write is not None and f.task == task.name for f in FORMATS.values())
    if writes_documents and unit_of(sentences).discourse and named != task.name:
        if not documents_output(output):
            raise SettingError(f"{output}: discourse trees are written as CoNLL-U (.conllu, one EDU per line) or "
                               f"SciDTB (a .dep file for one document, or a folder)")
        if not Path(output).is_dir() and Path(output).suffix and len(sentences) > 1:
            raise SettingError(f"{output}: one SciDTB file holds one document, not {len(sentences)}; name a folder "
                               f"to write one .dep file per document")
        return
    if named != task.name:
        other = task_entry(named)
        raise SettingError(f"{output}: {{decoder}} {decoder} writes {task.writes}; name the output "
                           f"{task.output_hint} (or choose a {other.name} decoder such as {other.default_decoder} "
                           f"for {other.written_as})")


def write_trees(parsed: Sequence[Any], output: Path, task: str, deprel: str = "_") -> None:
    """Write ``parsed`` (``Parsed`` records) as their task writes its predictions (CoNLL-U, SciDTB or bracketed
    trees, see :func:`check_trees_file`)."""
    entry = task_entry(task)
    entry.write([p.sentence for p in parsed], [entry.tree_of(p) for p in parsed], output, deprel)
