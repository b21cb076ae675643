"""Where a parse writes its trees: the output name decides the format, checked before any work.

Dependency trees go to CoNLL-U; bracketed trees one per line; discourse trees of documents (a unit whose
entry says ``discourse``: EDUs) also to SciDTB JSON (a ``.dep``/``.json`` file for one document, or a folder
of ``.dep`` files), the input's own format (:func:`pmask.corpora.scidtb.write_scidtb`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from pmask.common.errors import SettingError
from pmask.common.files import is_stdout
from pmask.common.units import unit_of
from pmask.corpora import Sentence, prediction_format, write_brackets, write_conllu
from pmask.corpora.scidtb import write_scidtb
from pmask.trees.registry import decoder_task
from pmask.trees.tasks import task_info


def is_scidtb_output(output: str | Path) -> bool:
    """A file name of a documents format pmask writes (SciDTB's ``.dep``/``.json``), or a folder (an
    existing one, or a name without a suffix)."""
    path = Path(output)
    written = prediction_format(output)
    return (written is not None and written.documents) or path.is_dir() or not path.suffix


def _conllu(output: str | Path) -> bool:
    """Whether ``output`` names a file of word-level dependency predictions (CoNLL-U)."""
    written = prediction_format(output)
    return written is not None and written.task == "dependency" and not written.documents


def check_trees_file(output: str | Path, decoder: str, sentences: Sequence[Sentence] = ()) -> None:
    """Refuse an output named for the other kind of tree than ``decoder`` writes (standard output takes
    either): dependency trees are CoNLL-U, which is read back from a .conllu or .conll name only
    (:func:`pmask.corpora.prediction_format`), and bracketed trees must not take such a name. Documents of
    EDUs may also be written as SciDTB (:func:`is_scidtb_output`).

    Raises:
        SettingError: naming the output and ``{decoder}``.
    """
    if is_stdout(output):
        return
    conllu = _conllu(output)
    task = decoder_task(decoder)
    if task == "dependency" and unit_of(sentences).discourse and not conllu:
        if not is_scidtb_output(output):
            raise SettingError(f"{output}: discourse trees are written as CoNLL-U (.conllu, one EDU per line) or "
                               f"SciDTB (a .dep file for one document, or a folder)")
        if not Path(output).is_dir() and Path(output).suffix and len(sentences) > 1:
            raise SettingError(f"{output}: one SciDTB file holds one document, not {len(sentences)}; name a folder "
                               f"to write one .dep file per document")
        return
    if task == "dependency" and not conllu:
        other = task_info("constituency").default_decoder
        raise SettingError(f"{output}: {{decoder}} {decoder} writes dependency trees as CoNLL-U, which is read back "
                           f"from a .conllu or .conll file only; name the output .conllu (or choose a constituency "
                           f"decoder such as {other} for bracketed trees)")
    if task == "constituency" and conllu:
        other = task_info("dependency").default_decoder
        raise SettingError(f"{output}: {{decoder}} {decoder} writes bracketed trees, one per line, not CoNLL-U; name "
                           f"the output e.g. .txt (or choose a dependency decoder such as {other} for CoNLL-U)")


def write_trees(parsed: Sequence[Any], output: Path, task: str, deprel: str = "_") -> None:
    """Write ``parsed`` (``Parsed`` records) as CoNLL-U, SciDTB or bracketed trees (see :func:`check_trees_file`)."""
    sentences = [p.sentence for p in parsed]
    if task != "dependency":
        write_brackets([p.tree for p in parsed], output)
    elif unit_of(sentences).discourse and not is_stdout(output) and not _conllu(output) and is_scidtb_output(output):
        write_scidtb(sentences, [p.heads for p in parsed], output)
    else:
        write_conllu(sentences, [p.heads for p in parsed], output, deprel=deprel)
