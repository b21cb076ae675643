"""Corpus readers and writers (CoNLL-U, PTB brackets, 3-column dependencies, plain text)."""
from pmask.corpora.conll import format_conllu, read_conllu, write_conllu
from pmask.corpora.dep3 import read_dep3
from pmask.corpora.ptb import WORD_TAGS, read_brackets, read_ptb, write_brackets
from pmask.corpora.read import FORMATS, detect_format, read_corpus
from pmask.corpora.sentence import Sentence
from pmask.corpora.text import read_text

__all__ = [
    "FORMATS",
    "Sentence",
    "WORD_TAGS",
    "detect_format",
    "format_conllu",
    "read_brackets",
    "read_conllu",
    "read_corpus",
    "read_dep3",
    "read_ptb",
    "read_text",
    "write_brackets",
    "write_conllu",
]
