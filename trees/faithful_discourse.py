"""Wu et al.'s discourse decoding (``--faithful`` on documents of EDUs), reproduced step by step.

Input ``F_cls`` ((n+1)x(n+1)) is the document probe's ``include_cls`` matrix
(:mod:`pmask.perturb.engine.documents`): node 0 is the ``[CLS]`` unit, **masked like any EDU** (their
ROOT), EDUs are 1..n, ``F_cls[i][j]`` = impact of masking j on i. ``root`` is the gold root EDU (the
first EDU with parent 0, as their ``find_root``). Output: heads of length n, ``heads[k-1]`` = head
of EDU k, 0 = ROOT, and :data:`~pmask.corpora.sentence.NO_HEAD` for the last EDU. Their
``dis_parsing.py``, line for line:

- *Cut*: ``F = F_cls[:-1, :-1]`` (commented "cut SEP", but F has no SEP row: the **last EDU is
  dropped**, gets no head and is scored wrong). A gold root that is the last EDU is refused (their
  code fails there).
- *Eisner*: ``F[r, :] = 0; F[r, 0] = 1``, **no softmax** (commented out, unlike their dependency
  pipeline), then ``parse_proj`` on ``F.T`` read as ``scores[head, dep]``: ROOT may take several
  children, ties go to the first maximum (:func:`pmask.trees.eisner.eisner_core` with
  ``single_root=False``, checked head for head against their code on SciDTB test).
- *CLE*: ``F[0, :] = 0; F[r, :] = 0; F[r, 0] = 1``, then Dozat's ``chuliu_edmonds``: zero diagonal,
  the greedy tree (first maximum of each row); when it has no cycle that is the answer, else the
  maximum-product arborescence (:func:`pmask.trees.faithful.faithful_cle`, exact, equal to Dozat's
  contraction on every SciDTB test document).
- *Chains*: right: EDU k -> k+1 (EDU n-1 -> the dropped EDU n), left: EDU k -> k-1; the gold root
  -> 0 in both; the last EDU has no head. (Their right chain also lists ROOT's own entry (0, 1),
  which their UUAS counts against a gold root of EDU 1; pmask scores EDUs only.)

Each decoder of their pipeline is a function ``(F_cls, root, *, n, where) -> heads`` here, which its
entry in :data:`pmask.trees.registry.DECODERS` holds as its ``discourse`` mode (the registry reads no
list of names): :func:`wu_eisner`, :func:`wu_cle` and the chains :data:`wu_right_chain`, :data:`wu_left_chain`.

Example:
    >>> import numpy as np
    >>> wu_left_chain(np.zeros((5, 5)), 2).tolist()
    [0, 0, 2, -1]
    >>> wu_eisner(np.zeros((5, 5)), 2).tolist()   # a zero matrix: pure tie-breaking
    [2, 0, 2, -1]
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from pmask.common.errors import DecodeError, at
from pmask.corpora.head_maps import find_cycle
from pmask.corpora.sentence import NO_HEAD
from pmask.trees.eisner import eisner_core
from pmask.trees.faithful import faithful_cle
from pmask.trees.validate import check_impact

#: One decoder of their discourse pipeline: ``(F_cls or None, gold root, *, n, where)`` -> heads, the last NO_HEAD.
DiscourseDecoder = Callable[..., np.ndarray]


def _cut(F_cls: np.ndarray | None, n: int | None, root: int | None, where: str | None) -> tuple[np.ndarray, int, int]:
    """Their cut matrix (float64 copy, nodes 0..n-1), the number of EDUs n and the gold root."""
    if F_cls is not None:
        F = check_impact(F_cls, where=where, name="F_cls").astype(np.float64)
        n = F.shape[0] - 1
    else:
        assert n is not None
        F = np.zeros((n + 1, n + 1))
    if root is None:
        raise DecodeError(f"{at(where)}the authors' discourse pipeline (--faithful) needs the gold root EDU")
    if n < 2:
        raise DecodeError(f"{at(where)}a document needs at least two EDUs, found {n}")
    if not 1 <= root <= n:
        raise DecodeError(f"{at(where)}gold root {root} is out of range 1..{n}")
    if root == n:
        raise DecodeError(f"{at(where)}--faithful drops the last EDU (the authors' \"cut SEP\"), which is this "
                          f"document's gold root")
    return F[:-1, :-1].copy(), n, root


def dozat_cle(F: np.ndarray, root: int, where: str | None = None) -> np.ndarray:
    """Their CLE on the cut matrix ``F`` (m x m, node 0 = ROOT): heads of nodes 1..m-1."""
    scores = F.copy()
    scores[0] = 0
    scores[root] = 0
    scores[root, 0] = 1
    scores *= 1 - np.eye(len(scores))
    greedy = np.argmax(scores[1:], axis=1)          # first maximum of each row
    if find_cycle(greedy.tolist()) is None:
        return greedy.astype(np.int64)
    return faithful_cle(F, root, where=where)


def _wu(decode: Callable[[Any, int, int, str | None], np.ndarray], reads_F: bool) -> DiscourseDecoder:
    """One decoder of their pipeline: the cut (:func:`_cut`), then ``decode`` on nodes 0..n-1 after it."""
    def run(F_cls: np.ndarray | None, root: int | None, *, n: int | None = None,
            where: str | None = None) -> np.ndarray:
        """Heads (length n, the last :data:`NO_HEAD`) on ``F_cls`` ([n+1, n+1] with the [CLS] unit 0; the chains
        read only ``n``, the number of EDUs, when it is None) with the gold ``root`` EDU (1-based).

        Raises:
            DecodeError: no gold root, the gold root is the last EDU, or a bad or missing matrix.
        """
        if reads_F and F_cls is None:
            raise DecodeError(f"{at(where)}the authors' discourse pipeline (--faithful) needs the [CLS]-including "
                              "impact matrix (F_cls)")
        F, m, r = _cut(F_cls if reads_F else None, n if F_cls is None else F_cls.shape[0] - 1, root, where)
        return np.append(decode(F, r, m, where).astype(np.int64), NO_HEAD)
    return run


def _eisner(F: np.ndarray, r: int, m: int, where: str | None) -> np.ndarray:
    F[r, :] = 0   # their gold-root nudge: the root EDU's row zeroed, its entry for ROOT set to 1
    F[r, 0] = 1
    return eisner_core(F.T, single_root=False)[1:]


def _cle(F: np.ndarray, r: int, m: int, where: str | None) -> np.ndarray:
    return dozat_cle(F, r, where)


def _chain(step: int) -> Callable[[Any, int, int, str | None], np.ndarray]:
    def chain(F: Any, r: int, m: int, where: str | None) -> np.ndarray:
        return np.array([0 if k == r else k + step for k in range(1, m)], dtype=np.int64)
    return chain


#: Their Eisner (no softmax, ROOT may take several children), on the cut matrix.
wu_eisner = _wu(_eisner, reads_F=True)
#: Their CLE (Dozat's greedy tree, else the maximum-product arborescence), on the cut matrix.
wu_cle = _wu(_cle, reads_F=True)
#: Their right and left chains over the EDUs the cut keeps.
wu_right_chain = _wu(_chain(1), reads_F=False)
wu_left_chain = _wu(_chain(-1), reads_F=False)
