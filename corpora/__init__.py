"""Corpus readers and writers (CoNLL-U, PTB brackets, plain text)."""
from pmask.corpora.sentence import Sentence

__all__ = ["Sentence"]
