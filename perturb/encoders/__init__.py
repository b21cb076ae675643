"""Running a model: one module per model family, each registering its entry
(:class:`pmask.common.model_families.ModelFamily`) beside the code that runs it, and the encoder paths.

- :mod:`.masked`: the ``masked`` family (BERT and its kin);
- :mod:`.causal`: the ``causal`` family (GPT-2, Llama, Qwen2, ...: decoder-only LLMs), run by
  :class:`~pmask.perturb.encoders.causal_encoder.CausalEncoder`;
- :mod:`.seq2seq`: the ``seq2seq`` family (BART), run by
  :class:`~pmask.perturb.encoders.seq2seq_encoder.Seq2SeqEncoder`;
- :mod:`.permutation`: the ``permutation`` family (XLNet), run by
  :class:`~pmask.perturb.encoders.permutation_encoder.PermutationEncoder`;
- :class:`~pmask.perturb.encoders.generic.GenericEncoder` (``generic.py``): the model's own forward, exact for
  any masked LM;
- :class:`~pmask.perturb.encoders.bert.BertFamilyEncoder` (``bert.py``): the fast path for an explicit list of
  classes, verified against the generic path at load time (``select.py``).

Both paths take a :class:`~pmask.perturb.encoders.batch.PackedBatch` (``batch.py``: rows end to end, never
padded) and return the same numbers (:class:`~pmask.perturb.encoders.encoder.Encoder`).

Importing this package imports each family module, which registers its family (torch-free: the code that
runs a family imports torch when a model is loaded); ``pmask/__init__.py`` imports it, so the registry is
complete once ``pmask`` is imported. Import every other name from its module.
"""
# The family modules, in documentation order: each registers its family as it is imported.
from pmask.perturb.encoders import (
    causal,  # noqa: F401  family causal
    masked,  # noqa: F401  family masked
    permutation,  # noqa: F401  family permutation
    seq2seq,  # noqa: F401  family seq2seq
)

#: The modules that register model families, in the order they register them.
FAMILY_MODULES = (masked, causal, seq2seq, permutation)
