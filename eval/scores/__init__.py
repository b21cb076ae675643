"""Scores, each counted sentence by sentence and added over corpora: the shared base (:mod:`.score`:
``Score``, ``Column``), percentages (:mod:`.percent`), punctuation (:mod:`.punct`), UAS/UUAS
(:mod:`.dependency_score`), bracket F1 (:mod:`.bracket_score`), Hoover et al.'s UUAS
(:mod:`.hoover_uuas`, computed when asked), the list of scores and the columns every table asks of
them (:mod:`.columns`), and the scores of one row, filled sentence by sentence (:mod:`.score_set`).

May import :mod:`pmask.eval.outputs` (and the wings below eval).
"""
