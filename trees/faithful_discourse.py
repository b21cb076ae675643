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

Example:
    >>> import numpy as np
    >>> faithful_discourse("left-chain", np.zeros((5, 5)), 2).tolist()
    [0, 0, 2, -1]
    >>> faithful_discourse("eisner", np.zeros((5, 5)), 2).tolist()   # a zero matrix: pure tie-breaking
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

#: The decoders of Wu et al.'s discourse pipeline.
DISCOURSE_DECODERS = ("eisner", "cle", "right-chain", "left-chain")


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


def faithful_discourse(decoder: str, F_cls: np.ndarray | None, root: int | None, *, n: int | None = None,
                       where: str | None = None) -> np.ndarray:
    """Heads (length n, the last :data:`NO_HEAD`) from their ``decoder`` on ``F_cls`` with gold ``root``.

    Args:
        decoder: one of :data:`DISCOURSE_DECODERS`.
        F_cls: [n+1, n+1] impacts with the [CLS] unit 0 (None for the chains, which then need ``n``).
        root: the gold root EDU (1-based).
        n: the number of EDUs when ``F_cls`` is None.
        where: names the document in messages.

    Raises:
        DecodeError: no gold root, the gold root is the last EDU, an unknown decoder or a bad matrix.
    """
    if decoder not in DISCOURSE_DECODERS:
        raise DecodeError(f"{at(where)}--faithful on documents is Wu et al.'s discourse pipeline: "
                          f"{', '.join(DISCOURSE_DECODERS)}, not {decoder}")
    reads_F, decode = _WU_DECODERS[decoder]
    F, n, r = _cut(F_cls if reads_F else None, n if F_cls is None else F_cls.shape[0] - 1, root, where)
    heads = decode(F, r, n, where)   # nodes 0..n-1 after the cut
    return np.append(heads.astype(np.int64), NO_HEAD)


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


#: Wu et al.'s decoders: (whether it reads the cut matrix, how it decodes (F, root, nodes, where)).
_WU_DECODERS: dict[str, tuple[bool, Callable[[Any, int, int, str | None], np.ndarray]]] = {
    "eisner": (True, _eisner), "cle": (True, _cle), "right-chain": (False, _chain(1)),
    "left-chain": (False, _chain(-1))}
