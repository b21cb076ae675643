"""Tree induction from impact matrices: dependency decoders, MART, baselines and the registry (the
parse pipeline over an impact source is :mod:`pmask.pipeline.induce`). May import ``pmask.common``
and ``pmask.corpora``; never ``pmask.perturb`` (the two are independent).

Conventions (all modules):

- Dependency scores: (n+1)x(n+1) ``scores[dependent, head]``, index 0 = ROOT, words 1..n
  (row 0 and the diagonal unused).  From a word-level n x n impact matrix F (``F[i][j]`` =
  impact of word j on word i), "word j+1 heads word i+1" scores ``F[i][j]``.
- Dependency trees: ``heads``, int array of length n, ``heads[k-1]`` = head of word k,
  0 = ROOT (the CoNLL-U HEAD column).
- Constituency trees: ``nltk.Tree``, internal label "X", leaves = words; one-line strings via
  :func:`to_brackets`, spans via :func:`spans`.

Pure numpy/networkx/nltk (no torch).
"""
from pmask.corpora.brackets import from_brackets, spans, to_brackets
from pmask.trees.baselines import (
                                   balanced,
                                   left_branching,
                                   left_chain,
                                   random_binary,
                                   random_projective,
                                   random_scores,
                                   right_branching,
                                   right_chain,
)
from pmask.trees.cle import chu_liu_edmonds
from pmask.trees.eisner import eisner
from pmask.trees.faithful import faithful_cle, faithful_eisner
from pmask.trees.mart import mart
from pmask.trees.registry import (
                                   DECODERS,
                                   DecodeInput,
                                   Decoder,
                                   decode,
                                   decode_constituency,
                                   decode_dependencies,
                                   decoder_names,
                                   get_decoder,
)
from pmask.trees.scores import dependency_scores, tree_score
from pmask.trees.validate import is_valid_tree, tree_errors

__all__ = [
    "eisner", "chu_liu_edmonds", "mart", "dependency_scores", "tree_score",
    "faithful_eisner", "faithful_cle",
    "right_chain", "left_chain", "random_projective", "random_scores",
    "right_branching", "left_branching", "balanced", "random_binary",
    "to_brackets", "from_brackets", "spans",
    "DECODERS", "Decoder", "DecodeInput", "decode", "decoder_names", "get_decoder",
    "decode_dependencies", "decode_constituency",
    "is_valid_tree", "tree_errors",
]
