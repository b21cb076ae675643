"""Encoder paths of the impact engine: hidden states (and MLM probabilities) at read positions.

- :class:`GenericEncoder` (``generic.py``): the model's own forward, exact for any masked LM;
- :class:`BertFamilyEncoder` (``bert.py``): the fast path for an explicit list of classes,
  verified against the generic path at load time (``select.py``).

Both take a :class:`PackedBatch` (``batch.py``: rows end to end, never padded) and return the
same numbers.
"""
from pmask.perturb.encoders.batch import PackedBatch, Segment, Work, pack
from pmask.perturb.encoders.bert import FAST_PATH_CLASSES, BertFamilyEncoder
from pmask.perturb.encoders.encoder import Encoder
from pmask.perturb.encoders.generic import GenericEncoder
from pmask.perturb.encoders.mlm_head import MlmHead
from pmask.perturb.encoders.select import ModelPaths, inspect_model, make_encoder

__all__ = ["Encoder", "PackedBatch", "Segment", "Work", "pack", "FAST_PATH_CLASSES", "BertFamilyEncoder",
           "GenericEncoder", "MlmHead", "ModelPaths", "inspect_model", "make_encoder"]
