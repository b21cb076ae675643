"""Corpus formats, one :class:`CorpusFormat` entry each: its name and description (``--format``
choices and help), the trees its files hold (its task), the suffixes that select it, how its content is
recognised on standard input, and its reader. :func:`pmask.corpora.read.read_corpus`,
:func:`detect_format`, :func:`sniff_format`, the reading of predictions and gold trees
(``pmask eval``), ``bench``'s treebanks and the CLI derive from :data:`FORMATS`; a new format is one
entry registered here plus its reader module.

The entries stay together here, not beside their readers: how standard input is sniffed depends on
all of them at once (``sniff_order``), which one table shows.

Example:
    >>> list(FORMATS)
    ['conllu', 'ptb', 'dep3', 'scidtb', 'edus', 'text']
    >>> sniff_format("a\\tDT\\t0\\n"), detect_format("wsj_0001.mrg"), detect_format("notes.txt")
    ('dep3', 'ptb', 'text')
    >>> FORMATS["ptb"].task, FORMATS["text"].task
    ('constituency', None)
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pmask.common.errors import CorpusError
from pmask.common.registry import EntryNames, EntryTable, Registry
from pmask.corpora._util import first_content_line, looks_like_conllu, looks_like_dep3, looks_like_ptb
from pmask.corpora.conll import parse_conllu, read_conllu, write_conllu
from pmask.corpora.dep3 import parse_dep3, read_dep3
from pmask.corpora.edus import parse_edus, read_edus
from pmask.corpora.ptb import parse_ptb, read_ptb
from pmask.corpora.scidtb import parse_scidtb, read_scidtb, write_scidtb
from pmask.corpora.sentence import Sentence
from pmask.corpora.text import parse_text, read_text

#: What a reader is called with: (path, max_words, limit, filter_punct); filter_punct is PTB's only.
Reader = Callable[[str | os.PathLike, int | None, int | None, bool], list[Sentence]]
#: What parses standard input's text: (text, name for messages, filter_punct).
Parser = Callable[[str, str, bool], Iterable[Sentence]]
#: What writes predicted trees in a format: (sentences, their trees (None: skipped), path or "-", the DEPREL
#: written where the format has one).
Writer = Callable[[Sequence[Sentence], Sequence[Any], "str | os.PathLike", str], None]


@dataclass(frozen=True)
class CorpusFormat:
    """One corpus format.

    Attributes:
        name: the ``--format`` value.
        description: its one-line help.
        read: reads a file, a folder (when ``folder_suffix`` is set) or ``-``.
        parse: parses standard input's text (``--format auto`` on ``-``).
        task: the gold trees its files hold, ``"dependency"`` (heads) or ``"constituency"`` (bracketed
            trees); None for a format of words only (text), which scores nothing.
        suffixes: file suffixes that select it under ``auto`` (lower case).
        folder_suffix: a folder holding files of this suffix is read in this format (one corpus).
        looks_like: whether the first content line of standard input is in this format.
        sniff_order: the order ``looks_like`` is tried in (a dep3 line may start with ``(``).
        predictions: pmask writes its predicted trees of ``task`` in this format, and reads a prediction
            in it back (CoNLL-U); a prediction in any other format is bracketed trees, one per line.
        looks_as_text: how its rows look, for the warning given when a file of it is read as plain text
            (each row would become a sentence).
        language: the language of every corpus in this format (PTB: the Wall Street Journal's English).
        documents: its files hold documents of elementary discourse units (one "sentence" = a document).
        write: writes predicted trees of its ``task`` in this format (None: pmask writes none in it).
        fallback: what a file or standard input that no entry claims is read as (one entry: text).
    """

    name: str
    description: str
    read: Reader
    parse: Parser
    task: str | None = None
    suffixes: tuple[str, ...] = ()
    folder_suffix: str | None = None
    looks_like: Callable[[str], bool] | None = None
    sniff_order: int = 0
    predictions: bool = False
    looks_as_text: str | None = None
    language: str | None = None
    documents: bool = False
    write: Writer | None = None
    fallback: bool = False

    def holds(self, path: Path) -> bool:
        """Whether the file name ``path`` selects this format (by its suffix, any case)."""
        return path.suffix.lower() in self.suffixes


#: The formats by name, in documentation order (the ``--format`` choices).
FORMATS: Registry[CorpusFormat] = Registry("corpus format")

FORMATS.register(CorpusFormat(
    "conllu", "CoNLL-U (syntactic words only: multiword-token ranges and empty nodes are skipped)",
    read=lambda path, max_words, limit, _: read_conllu(path, max_words=max_words, limit=limit),
    parse=lambda text, name, _: parse_conllu(text, name), task="dependency",
    suffixes=(".conllu", ".conll"), looks_like=looks_like_conllu, sniff_order=0, predictions=True,
    looks_as_text="CoNLL-U (10 tab-separated columns)",
    write=lambda sentences, heads, path, deprel: write_conllu(sentences, heads, path, deprel=deprel)))
FORMATS.register(CorpusFormat(
    "ptb", "Penn Treebank bracketed trees (.mrg file or folder)",
    read=lambda path, max_words, limit, punct: read_ptb(path, max_words=max_words, limit=limit, filter_punct=punct),
    parse=lambda text, name, punct: parse_ptb(text, name, "stdin", filter_punct=punct), task="constituency",
    suffixes=(".mrg",), folder_suffix=".mrg", looks_like=looks_like_ptb, sniff_order=2, language="English (PTB)"))
FORMATS.register(CorpusFormat(
    "dep3", "three columns form, POS, head; blank line between sentences (.dp)",
    read=lambda path, max_words, limit, _: read_dep3(path, max_words=max_words, limit=limit),
    parse=lambda text, name, _: parse_dep3(text, name, "stdin"), task="dependency",
    suffixes=(".dp",), folder_suffix=".dp", looks_like=looks_like_dep3, sniff_order=1))
FORMATS.register(CorpusFormat(
    "scidtb", "SciDTB discourse trees: JSON documents of EDUs (.dep/.json file or a folder of .dep; any .json "
              "is read as SciDTB)",
    read=lambda path, max_words, limit, _: read_scidtb(path, max_words=max_words, limit=limit),
    parse=lambda text, name, _: iter([parse_scidtb(text, name, "stdin")]), task="dependency",
    suffixes=(".dep", ".json"), folder_suffix=".dep", looks_like=lambda line: line.lstrip().startswith("{"),
    sniff_order=3, predictions=True, documents=True, language="English (SciDTB)",
    write=lambda sentences, heads, path, _: write_scidtb(sentences, heads, path)))
FORMATS.register(CorpusFormat(
    "edus", "documents of elementary discourse units: one EDU per line, blank line between documents (.edus)",
    read=lambda path, max_words, limit, _: read_edus(path, max_words=max_words, limit=limit),
    parse=lambda text, name, _: parse_edus(text, name), suffixes=(".edus",), documents=True))
FORMATS.register(CorpusFormat(
    "text", "one whitespace-tokenised sentence per line",
    read=lambda path, max_words, limit, _: read_text(path, max_words=max_words, limit=limit),
    parse=lambda text, name, _: parse_text(text, name), fallback=True))

#: The entries in order (a live view of :data:`FORMATS`).
FORMAT_TABLE: Sequence[CorpusFormat] = EntryNames(lambda: tuple(FORMATS.values()))

def fallback_format() -> CorpusFormat:
    """What a file or standard input that no entry claims is read as (the entry marked ``fallback``: text)."""
    return next(f for f in FORMATS.values() if f.fallback)


def auto_help() -> str:
    """The help of ``--format auto``, from the entries: each format's suffixes (and its folders), then the fallback.

    Example:
        >>> auto_help()[:67]
        'from the file suffix (.conllu/.conll, .mrg or a folder of them, .dp'
    """
    claims = [f"{'/'.join(f.suffixes)}{' or a folder of them' if f.folder_suffix else ''}"
              for f in FORMATS.values() if f.suffixes]
    return f"from the file suffix ({', '.join([*claims, f'else {fallback_format().name}'])})"


#: ``--format`` choices and their help: "auto" and every entry.
CORPUS_FORMATS: Mapping[str, str] = EntryTable(lambda: {
    "auto": auto_help(),
    **{f.name: f.description for f in FORMATS.values()},
})


def detect_format(path: str | os.PathLike) -> str:
    """The format a path's name selects: 'conllu' (.conllu/.conll), 'ptb' (.mrg or a directory of
    .mrg), 'dep3' (.dp or a directory of .dp), else 'text'. Standard input (``-``) has no name to go
    by: see :func:`pmask.corpora.read.read_corpus`."""
    path = Path(path)
    if path.is_dir():
        suffixes = {p.suffix for p in path.iterdir() if p.is_file()}
        folders = [f for f in FORMATS.values() if f.folder_suffix]
        for fmt in folders:
            if fmt.folder_suffix in suffixes:
                return fmt.name
        raise CorpusError(f"{path}: directory holds no {' or '.join(str(f.folder_suffix) for f in folders)} files")
    return next((f.name for f in FORMATS.values() if f.holds(path)), fallback_format().name)


def sniff_format(text: str) -> str:
    """The corpus format ``text`` looks like, from its first line that is neither blank nor a
    ``#`` comment: "conllu" (10 tab-separated columns, numeric ID), "dep3" (3 tab-separated
    columns, numeric last), "ptb" (starts with ``(``), else "text"."""
    line = first_content_line(text)
    if line is None:
        return fallback_format().name
    sniffers = sorted((f for f in FORMATS.values() if f.looks_like), key=lambda f: f.sniff_order)
    return next((f.name for f in sniffers if f.looks_like and f.looks_like(line)), fallback_format().name)


def unsniffable() -> list[CorpusFormat]:
    """The formats standard input cannot be recognised in by its content (no ``looks_like``): read as the
    fallback unless named (``--format``)."""
    return [f for f in FORMATS.values() if f.looks_like is None and not f.fallback]


def prediction_format(path: str | os.PathLike) -> CorpusFormat | None:
    """The format a prediction named ``path`` is read in (CoNLL-U for ``.conllu``/``.conll``, SciDTB for
    ``.dep``/``.json`` or a folder of ``.dep``: dependency trees), None for bracketed trees one per line (any
    other name or folder); standard input
    (``-``) goes by its content (:func:`sniff_format`) and is not looked at here.

    Example:
        >>> prediction_format("parsed.conllu").task, prediction_format("trees.txt")
        ('dependency', None)
    """
    try:
        found = FORMATS[detect_format(path)]
    except CorpusError:   # a folder of no corpus files: bracketed trees
        return None
    return found if found.predictions else None


def output_format(output: str | os.PathLike, task: str, documents: bool) -> CorpusFormat:
    """The format predicted trees of ``task`` are written in to ``output``: the format its name selects when
    pmask writes that format and it holds what is written (documents or sentences); for documents, a folder
    (an existing one, or a name without a suffix) of the documents format that is read from folders; else the
    first format that writes the task's trees (CoNLL-U for dependency trees; also standard output).

    Example:
        >>> output_format("out.dep", "dependency", True).name, output_format("out.dep", "dependency", False).name
        ('scidtb', 'conllu')
    """
    writers = [f for f in FORMATS.values() if f.write is not None and f.task == task]
    if os.fspath(output) != "-":
        path = Path(output)
        named = prediction_format(output)
        if named in writers and named is not None and named.documents == documents:
            return named
        folder = next((f for f in writers if f.documents and f.folder_suffix), None)
        if documents and folder is not None and (path.is_dir() or not path.suffix):
            return folder
    return next(f for f in writers if not f.documents)
