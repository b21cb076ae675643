"""Read and write treebanks and text: the bottom wing above ``pmask.common``.

Readers and writers (CoNLL-U, PTB brackets, 3-column dependencies, plain text; one
:class:`~pmask.corpora.formats.CorpusFormat` entry each in :mod:`.formats`), the
:class:`Sentence` they yield, :class:`~pmask.corpora.corpus_spec.CorpusSpec` (a path with its format and
filters), head maps (:mod:`.head_maps`), bracket strings and spans (:mod:`.brackets`) and the
``<output>.meta.json`` record (:mod:`.provenance`). May import ``pmask.common`` only.

Every reader takes ``max_words`` (skip longer sentences, in every format) and ``limit`` (keep the
first N after that filter); both must be at least 1 (:func:`check_selection`). A path of ``-``
reads standard input; :func:`read_corpus` then tells the format from the content
(:func:`sniff_format`) unless one is named. Writers take ``-`` for standard output.
"""
from pmask.corpora._util import STDIN, check_selection
from pmask.corpora.conll import format_conllu, read_conllu, write_conllu
from pmask.corpora.dep3 import read_dep3
from pmask.corpora.formats import (
    CORPUS_FORMATS,
    FORMAT_TABLE,
    FORMATS,
    CorpusFormat,
    detect_format,
    prediction_format,
    sniff_format,
)
from pmask.corpora.ptb import WORD_TAGS, read_brackets, read_ptb, write_brackets
from pmask.corpora.read import read_corpus
from pmask.corpora.sentence import Sentence
from pmask.corpora.text import read_text

__all__ = [
    "CORPUS_FORMATS",
    "FORMATS",
    "FORMAT_TABLE",
    "CorpusFormat",
    "STDIN",
    "Sentence",
    "WORD_TAGS",
    "check_selection",
    "detect_format",
    "format_conllu",
    "prediction_format",
    "read_brackets",
    "read_conllu",
    "read_corpus",
    "read_dep3",
    "read_ptb",
    "read_text",
    "sniff_format",
    "write_brackets",
    "write_conllu",
]
