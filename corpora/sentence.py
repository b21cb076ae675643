"""The one sentence record every reader returns and every other part consumes."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pmask.common.units import unit_entry

#: A predicted head that is not there: a unit left out of the tree (``--faithful`` discourse drops the
#: last EDU, as Wu et al.'s code does); written as ``_`` (CoNLL-U) or ``null`` (SciDTB), scored as wrong.
NO_HEAD = -1


@dataclass
class Sentence:
    """A tokenised sentence with whatever gold annotation its source had.

    Word lists are 0-based Python lists of length n; ``heads`` follows the CoNLL-U HEAD
    column: ``heads[k-1]`` is the head of word k (1-based), 0 = ROOT. A document of elementary
    discourse units (``unit`` "edu", :mod:`pmask.corpora.scidtb`) is the same record whose
    "words" are its EDU texts (a unit of many words) and whose heads are the gold discourse parents; what
    a unit is, and what applies to it, its entry says (:class:`pmask.common.units.UnitEntry`).
    """

    id: str                                   # sent_id from the file, else the 1-based index as a string
    words: list[str]
    heads: list[int] | None = None            # gold heads (CoNLL-U convention), None when unknown
    deprels: list[str] | None = None          # gold relations, parallel to words
    upos: list[str] | None = None             # universal POS tags
    xpos: list[str] | None = None             # language-specific / PTB tags
    tree: Any = None                          # gold nltk.Tree over ``words`` (filtered as read), PTB only
    text: str | None = None                   # the sentence text (``# text``) when the source has one
    source: Any = None                        # format-specific original (conllu.TokenList) for write-back
    path: str | None = None                   # file it was read from
    line: int | None = None                   # 1-based line of its first line in that file
    meta: dict[str, Any] = field(default_factory=dict)
    unit: str = "word"                        # what ``words`` holds: a name of pmask.common.units.UNITS

    def __len__(self) -> int:
        return len(self.words)

    @property
    def root(self) -> int | None:
        """1-based index of the first word attached to ROOT in the gold tree, or None."""
        if not self.heads:
            return None
        for k, h in enumerate(self.heads, start=1):
            if h == 0:
                return k
        return None

    @property
    def noun(self) -> str:
        """What the record is: its unit's record noun, "sentence", or "document" for EDUs."""
        return unit_entry(self.unit).record

    def where(self) -> str:
        """'file:line (sentence ID)' for error messages ('(document ID)' for EDUs)."""
        place = f"{self.path}:{self.line}" if self.path and self.line else (self.path or "<input>")
        return f"{place} ({self.noun} {self.id})"
