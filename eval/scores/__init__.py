"""Scores, each counted sentence by sentence and added over corpora: the shared base (:mod:`.score`:
``Score``, ``Column``), percentages (:mod:`.percent`), punctuation (:mod:`.punct`), UAS/UUAS
(:mod:`.dependency_score`), bracket F1 (:mod:`.bracket_score`), Hoover et al.'s UUAS
(:mod:`.hoover_uuas`), and the columns every table asks of the score classes (:mod:`.columns`).

May import :mod:`pmask.eval.outputs` (and the wings below eval).
"""
