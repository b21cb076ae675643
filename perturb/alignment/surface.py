"""Surface tokenisation: the model reads the sentence's running text, not words one by one.

Mode ``"words"`` (the paper's, the default) tokenises every word separately
(:func:`pmask.perturb.alignment.words.align`). Mode ``"text"`` rebuilds the surface text from the
CoNLL-U tokens and ``SpaceAfter=No`` (:func:`surface_layout`), tokenises it as one string and
maps pieces to words by the fast tokenizer's character offsets (:func:`surface_align`), so the
model gets exactly the ids the tokenizer gives for the running text.

Rules of the ``"text"`` mode:

* **Units.** A surface unit is a multiword token (its form from the ``5-6`` range line) or a
  word outside any multiword token. Units are separated by one space unless ``SpaceAfter=No``
  (on the range line for a multiword token). Without CoNLL-U source, words are joined by spaces.
* **Straddling pieces.** A piece belongs to the unit where it starts (its first character that
  lies in a unit; a piece made only of whitespace belongs to the next unit).
* **Units without a piece.** When a piece straddles a boundary and the next unit has no piece
  starting in it, the model never saw the two apart: the units are merged into one group
  exactly like a multiword token (see below), and a warning names the sentence and word. Nothing
  is skipped and no piece is invented. A unit no piece even covers (characters the tokenizer
  drops) gets one unk piece, as in the ``"words"`` mode, with a warning.
* **Multiword tokens and merged groups.** The syntactic words of a group share all of its
  pieces: every word's ``pieces(k)`` is the group's pieces and ``word_index`` names the group's
  first word. Masking any word of a group masks the whole group (the engine masks by
  ``word_index`` of the word's first piece), and the impact between two words of the same
  group is 0 (the engine sets it: masking the second word changes nothing).
"""
from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Sequence

from pmask.common.errors import ModelError, PmaskError
from pmask.perturb.alignment.word_alignment import WordAlignment

logger = logging.getLogger(__name__)


@dataclass
class AlignmentNotes:
    """The words a run had to merge into a neighbour's pieces (``shared``) or give an unk piece
    (``unk``), each ``(where, word, other word or None)``; :meth:`flush` logs one line per kind."""

    shared: list[tuple[str, str, str | None]] = field(default_factory=list)
    unk: list[tuple[str, str, str | None]] = field(default_factory=list)

    def flush(self) -> None:
        """One warning per kind of note: how many words, in how many sentences, and three examples."""
        kinds = ((self.shared, "have no piece of their own (a piece straddles a word boundary) and share a "
                               "neighbour's pieces"),
                 (self.unk, "get no piece from the tokenizer and are given one unk piece each"))
        for notes, what in kinds:
            if not notes:
                continue
            sentences = len({where for where, _, _ in notes})
            examples = "; ".join(f"{where}: {word!r}" + (f" with {other!r}" if other else "")
                                 for where, word, other in notes[:3])
            logger.warning("tokenize text: %d %s in %d %s %s (e.g. %s%s)", len(notes),
                           "word" if len(notes) == 1 else "words", sentences,
                           "sentence" if sentences == 1 else "sentences", what, examples,
                           "; …" if len(notes) > 3 else "")
        self.shared.clear()
        self.unk.clear()


_collecting: list[AlignmentNotes] = []   # innermost last: where surface_align puts its notes instead of logging


@contextmanager
def grouped_alignment_notes() -> Iterator[AlignmentNotes]:
    """While open, :func:`surface_align`'s per-word warnings are collected; on leaving, one line per
    kind says how many words were affected, with examples (a corpus in an unsegmented script
    would otherwise give a warning per word)."""
    notes = AlignmentNotes()
    _collecting.append(notes)
    try:
        yield notes
    finally:
        _collecting.remove(notes)
        notes.flush()


@dataclass
class SurfaceLayout:
    """The surface text of a sentence and where each unit sits in it.

    ``units[u]`` is the list of 0-based syntactic words of unit ``u`` (several for a multiword
    token); ``spans[u]`` its ``(start, end)`` character offsets in ``text``.
    """

    text: str
    units: list[list[int]]
    spans: list[tuple[int, int]]

    @property
    def n_words(self) -> int:
        return sum(len(u) for u in self.units)


def _space_after(misc: Any) -> bool:
    return not (isinstance(misc, dict) and misc.get("SpaceAfter") == "No")


def _source_units(source: Any, n_words: int, where: str) -> list[tuple[str, list[int], bool]]:
    """(form, words, space after) per surface unit of a ``conllu.TokenList``."""
    out: list[tuple[str, list[int], bool]] = []
    covered_to = 0          # last 1-based word covered by a multiword token
    for tok in source:
        tid = tok["id"]
        if isinstance(tid, tuple):
            if len(tid) == 3 and tid[1] == "-":
                first, last = int(tid[0]), int(tid[2])
                if first <= covered_to or last < first or last > n_words:
                    raise PmaskError(f"{where}: bad multiword token range {first}-{last}")
                out.append((str(tok["form"]), list(range(first - 1, last)), _space_after(tok["misc"])))
                covered_to = last
            continue        # empty nodes are not words
        if tid > covered_to:
            out.append((str(tok["form"]), [tid - 1], _space_after(tok["misc"])))
    return out


def surface_layout(sentence: Any) -> SurfaceLayout:
    """Rebuild the surface text of ``sentence`` and locate its units.

    Args:
        sentence: a :class:`pmask.corpora.Sentence` (its CoNLL-U ``source`` gives SpaceAfter and
            multiword tokens) or a plain list of words (joined by single spaces).

    Returns:
        A :class:`SurfaceLayout`; ``text`` has no trailing space.

    Example:
        >>> surface_layout(["Hello", "world"]).text
        'Hello world'
    """
    words = [str(w) for w in getattr(sentence, "words", sentence)]
    source = getattr(sentence, "source", None)
    where = sentence.where() if hasattr(sentence, "where") else "<input>"
    if isinstance(source, list) and source and isinstance(source[0], dict) and "id" in source[0]:  # conllu
        units = _source_units(source, len(words), where)
        if sum(len(w) for _, w, _ in units) != len(words):
            raise PmaskError(f"{where}: surface tokens cover {sum(len(w) for _, w, _ in units)} "
                             f"of {len(words)} words")
    else:
        units = [(w, [k], True) for k, w in enumerate(words)]
    text = ""
    spans: list[tuple[int, int]] = []
    for form, _, space in units:
        spans.append((len(text), len(text) + len(form)))
        text += form + (" " if space else "")
    return SurfaceLayout(text=text.rstrip(" "), units=[w for _, w, _ in units], spans=spans)


def _unit_of_char(layout: SurfaceLayout) -> list[int]:
    """Unit of each character of the text (-1 for spaces between units)."""
    owner = [-1] * len(layout.text)
    for u, (s, e) in enumerate(layout.spans):
        for c in range(s, min(e, len(owner))):
            owner[c] = u
    return owner


def _piece_units(offsets: Sequence[tuple[int, int]], char_unit: list[int], n_units: int) -> list[int]:
    """Unit each piece starts in (-1 for none: zero-width pieces after the last unit)."""
    out = []
    for s, e in offsets:
        u = next((char_unit[c] for c in range(s, e) if char_unit[c] >= 0), -1)
        if u < 0:   # whitespace-only or zero-width piece: it introduces the next unit
            u = next((char_unit[c] for c in range(s, len(char_unit)) if char_unit[c] >= 0), n_units - 1)
        out.append(u)
    return out


def _covering_piece(offsets: Sequence[tuple[int, int]], pos: int) -> int | None:
    return next((t for t, (s, e) in enumerate(offsets) if s <= pos < e), None)


def surface_align(tokenizer: Any, sentence: Any, *, warn: bool = True) -> WordAlignment:
    """Tokenise ``sentence``'s surface text and align pieces to syntactic words (see the module rules).

    Args:
        tokenizer: a fast Hugging Face tokenizer (offsets are needed).
        sentence: a :class:`pmask.corpora.Sentence` or a list of words.
        warn: log a warning for each unit that had to be merged or given an unk piece (inside
            :func:`grouped_alignment_notes`, as the engine runs it: one line for them all).

    Returns:
        A :class:`WordAlignment` over the syntactic words: ``input_ids`` are the tokenizer's ids
        for the text (plus unk pieces only for units the tokenizer dropped entirely);
        ``word_index[t]`` is the first word of the group of piece ``t`` (-1 for specials);
        ``pieces(k)`` of every word of a group are the group's pieces.

    Example:
        >>> al = surface_align(tok, ["zum", "Haus"])   # doctest: +SKIP
    """
    if not getattr(tokenizer, "is_fast", False):
        raise ModelError(f"tokenizer {type(tokenizer).__name__} is not a fast tokenizer; surface alignment "
                         "needs character offsets")
    layout = surface_layout(sentence)
    where = sentence.where() if hasattr(sentence, "where") else "sentence"
    short = f"sentence {sentence.id}" if getattr(sentence, "id", None) else where   # in a grouped line's examples
    words = [str(w) for w in getattr(sentence, "words", sentence)]
    enc = tokenizer(layout.text, add_special_tokens=True, return_offsets_mapping=True, truncation=False,
                    verbose=False)
    ids = list(enc["input_ids"])
    seq = enc.sequence_ids()
    real = [t for t in range(len(ids)) if seq[t] is not None]
    offsets = [tuple(enc["offset_mapping"][t]) for t in real]
    n_units = len(layout.units)
    piece_unit = _piece_units(offsets, _unit_of_char(layout), n_units)
    has_piece = set(piece_unit)
    group = list(range(n_units))          # unit -> group representative (the earlier unit)
    unk_after: dict[int, int] = {}        # unit without any covering piece -> insert after this real piece
    for u in range(n_units):
        if u in has_piece:
            continue
        form = layout.text[layout.spans[u][0]:layout.spans[u][1]]
        t = _covering_piece(offsets, layout.spans[u][0])
        if t is not None and piece_unit[t] != u:
            group[u] = group[piece_unit[t]]
            other = words[layout.units[piece_unit[t]][0]]
            if warn and _collecting:
                _collecting[-1].shared.append((short, form, other))
            elif warn:
                logger.warning("%s: word %r (word %d) has no piece of its own (a piece straddles the boundary); "
                               "it shares the pieces of %r", where, form, layout.units[u][0] + 1, other)
        else:
            unk_after[u] = max((k for k, pu in enumerate(piece_unit) if pu < u), default=-1)
            if warn and _collecting:
                _collecting[-1].unk.append((short, form, None))
            elif warn:
                logger.warning("%s: the tokenizer gives no piece for word %r (word %d); it gets one unk piece",
                               where, form, layout.units[u][0] + 1)
    return _build(tokenizer, ids, real, piece_unit, group, unk_after, layout)


def _body_start(tokenizer: Any) -> int:
    """Where a sentence's pieces go between the special tokens (for a text with no piece at all)."""
    probe = tokenizer("a", add_special_tokens=True, verbose=False)
    return next((t for t, s in enumerate(probe.sequence_ids()) if s is not None), 0)


def _build(tokenizer: Any, ids: list[int], real: list[int], piece_unit: list[int], group: list[int],
           unk_after: dict[int, int], layout: SurfaceLayout) -> WordAlignment:
    if real and real != list(range(real[0], real[0] + len(real))):
        raise ModelError(f"tokenizer {type(tokenizer).__name__} puts special tokens inside the text")
    unk = tokenizer.unk_token_id if tokenizer.unk_token_id is not None else tokenizer.mask_token_id
    owner = [layout.units[group[u]][0] for u in range(len(layout.units))]   # unit -> owning word
    body_ids: list[int] = []
    body_words: list[int] = []

    def unks(after: int) -> None:
        for u in sorted(k for k, a in unk_after.items() if a == after):
            body_ids.append(unk)
            body_words.append(owner[u])

    unks(-1)
    for r, t in enumerate(real):
        body_ids.append(ids[t])
        body_words.append(owner[piece_unit[r]])
        unks(r)
    split = real[0] if real else _body_start(tokenizer)
    rest = split + len(real)
    input_ids = ids[:split] + body_ids + ids[rest:]
    word_index = [-1] * split + body_words + [-1] * (len(ids) - rest)
    by_owner: dict[int, list[int]] = {}
    for t, w in enumerate(word_index):
        if w >= 0:
            by_owner.setdefault(w, []).append(t)
    pieces: list[list[int]] = [[] for _ in range(layout.n_words)]
    for u, words in enumerate(layout.units):
        for k in words:
            pieces[k] = by_owner[owner[u]]
    return WordAlignment(input_ids=input_ids, word_index=word_index, n_words=layout.n_words, word_pieces=pieces)
