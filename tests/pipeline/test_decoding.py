"""The settings of decoding (``pmask.pipeline.decoding.Decoding``, one type: issue 46 item 5): what a decoder's
record holds, one layer at a time."""
from __future__ import annotations

import pytest

from pmask.pipeline.decoding import Decoding


def test_the_record_holds_what_the_decoder_reads_and_faithful_where_it_has_a_faithful_mode():
    assert Decoding("cky", faithful=True, root="gold", symmetrize="none").to_dict() == {
        "decoder": "cky", "layer": -1, "faithful": True, "seed": 0}
    assert Decoding("distance-split", faithful=True, bias=1.5, root="gold", symmetrize="none").to_dict() == {
        "decoder": "distance-split", "layer": -1, "faithful": True, "seed": 0, "bias": 1.5, "symmetrize": "none",
        "absolute": False}
    assert Decoding("mart", root="gold", symmetrize="none").to_dict() == {
        "decoder": "mart", "layer": -1, "seed": 0, "symmetrize": "none", "absolute": False}   # no faithful mode
    assert Decoding("eisner", root="gold", symmetrize="none").to_dict() == {
        "decoder": "eisner", "layer": -1, "root": "gold", "faithful": False, "multiroot": False, "seed": 0,
        "symmetrize": "none", "absolute": False}   # the keys and order of the records made before the merge


def test_several_layers_are_decoded_one_at_a_time():
    several = Decoding("eisner", [1, 3], "gold", symmetrize="none")
    with pytest.raises(ValueError, match="one at a time"):
        print(several.layer)
    assert several.at(3).layer == 3 and several.at(3).to_dict()["layer"] == 3 and several.layers == [1, 3]
