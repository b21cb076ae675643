"""The data type every aligner returns: :class:`WordAlignment`, which model tokens each word owns."""
from __future__ import annotations

from dataclasses import dataclass

from pmask.common.errors import ModelError


@dataclass
class WordAlignment:
    """Model input for one sentence and which pieces each word owns.

    Args:
        input_ids: the model's tokens, special tokens included, length T.
        word_index: for each token, the 0-based word it belongs to (the first one if several
            words share it), or -1 for special tokens; length T.
        n_words: number of words n (default: ``max(word_index) + 1``).
        word_pieces: optional explicit piece positions of each word (n lists of token
            positions); needed when words share pieces. Default: derived from ``word_index``.
        key_pieces: optional positions at which a word is attended to, where they are not its own read
            pieces (the first copy of an echo layout, :mod:`pmask.perturb.alignment.echo`: word i is read in
            the second copy, attending to word j's first copy). Default: its pieces.

    Every word must own at least one piece (:func:`align` maps a word the tokenizer drops to
    the unk token).

    Example:
        >>> al = WordAlignment([101, 7, 8, 9, 102], [-1, 0, 1, 1, -1])
        >>> al.pieces(1), al.first_pieces
        ([2, 3], [1, 2])
    """

    input_ids: list[int]
    word_index: list[int]
    n_words: int = 0
    word_pieces: list[list[int]] | None = None
    key_pieces: list[list[int]] | None = None

    def __post_init__(self) -> None:
        if len(self.input_ids) != len(self.word_index):
            raise ModelError(f"alignment has {len(self.input_ids)} tokens but {len(self.word_index)} word indices")
        if not self.n_words:
            self.n_words = len(self.word_pieces) if self.word_pieces else max(self.word_index, default=-1) + 1
        if self.word_pieces is None:
            pieces: list[list[int]] = [[] for _ in range(self.n_words)]
            for t, w in enumerate(self.word_index):
                if w >= 0:
                    pieces[w].append(t)
            self.word_pieces = pieces
        if len(self.word_pieces) != self.n_words:
            raise ModelError(f"alignment lists pieces for {len(self.word_pieces)} of {self.n_words} words")
        for k, pcs in enumerate(self.word_pieces):
            if not pcs or not all(0 <= p < len(self.input_ids) and self.word_index[p] >= 0 for p in pcs):
                raise ModelError(f"word {k} has no model piece (or a piece outside the sentence's word tokens)")
        if self.key_pieces is not None and (len(self.key_pieces) != self.n_words or not all(self.key_pieces)):
            raise ModelError(f"alignment lists keys for {len(self.key_pieces)} of {self.n_words} words")

    def __len__(self) -> int:
        return len(self.input_ids)

    def pieces(self, k: int) -> list[int]:
        """Token positions (into ``input_ids``) of word ``k``'s pieces, in order."""
        assert self.word_pieces is not None   # set by __post_init__
        return self.word_pieces[k]

    def keys(self, k: int) -> list[int]:
        """Token positions at which word ``k`` is attended to: its :attr:`key_pieces`, else its pieces."""
        return self.key_pieces[k] if self.key_pieces is not None else self.pieces(k)

    @property
    def first_pieces(self) -> list[int]:
        """Position of each word's first piece."""
        assert self.word_pieces is not None   # set by __post_init__
        return [p[0] for p in self.word_pieces]
