"""Scores, each counted sentence by sentence and added over corpora: the shared base (:mod:`.score`:
``Score``, ``Column``), percentages (:mod:`.percent`), punctuation (:mod:`.punct`), UAS/UUAS
(:mod:`.dependency_score`), bracket F1 (:mod:`.bracket_score`), Hoover et al.'s UUAS
(:mod:`.hoover_uuas`, computed when asked), the list of scores and the columns every table asks of
them (:mod:`.columns`), and the scores of one row, filled sentence by sentence (:mod:`.score_set`).

Importing this package imports each score module, in table order (dependency columns first), and each
registers its class in :data:`pmask.eval.scores.score.SCORES` as it is imported: their order here is their
order in every table.

May import :mod:`pmask.eval.outputs` (and the wings below eval).
"""
# isort: off
from pmask.eval.scores import dependency_score  # noqa: F401  attachment (UAS, UUAS)
from pmask.eval.scores import hoover_uuas  # noqa: F401  hoover_uuas (optional)
from pmask.eval.scores import bracket_score  # noqa: F401  brackets (bracket F1)
# isort: on

#: The modules that register scores, in table order.
SCORE_MODULES = (dependency_score, hoover_uuas, bracket_score)
