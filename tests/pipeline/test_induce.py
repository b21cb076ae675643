"""The parse pipeline (``pmask.pipeline.induce``): what a parsed sentence shows of itself, the settings a
decoder refuses and what its record holds."""
from __future__ import annotations


def test_repr_of_a_parsed_sentence_is_short():
    import numpy as np

    from pmask.corpora import Sentence
    from pmask.perturb.source import Impact
    from pmask.pipeline.induce import Parsed

    n = 60
    words = [f"w{k}" for k in range(n)]
    parsed = Parsed(Sentence(id="s1", words=words), heads=np.arange(n), impact=Impact(F=np.random.rand(n, n)))
    text = repr(parsed)
    assert len(text) < 200 and "\n" not in text and "s1" in text and "60 words" in text


# ------------------------------------------------- what a decoder reads is what is recorded (issue 39, items 5 and 13)

def test_a_span_decoder_refuses_symmetrize_and_absolute_in_one_line():
    import pytest

    from pmask.common.errors import SettingError
    from pmask.pipeline.induce import ParseSettings, check_settings

    for given, named in (({"symmetrize": "tril"}, "{symmetrize}"), ({"absolute": True}, "{absolute}"),
                         ({"symmetrize": "sum", "absolute": True}, "{symmetrize} or {absolute}")):
        with pytest.raises(SettingError) as error:
            check_settings(ParseSettings(decoder="cky", **given), [], "distortion")
        assert error.value.template.startswith(f"{{decoder}} cky takes no {named}") and "\n" not in str(error.value)
    check_settings(ParseSettings(decoder="cky"), [], "distortion")
    check_settings(ParseSettings(decoder="mart", symmetrize="tril", absolute=True), [], "pair")   # read there


def test_the_record_holds_what_the_decoder_reads_and_faithful_where_it_has_a_faithful_mode():
    from pmask.pipeline.induce import ParseSettings

    assert ParseSettings(decoder="cky", faithful=True).to_dict() == {"decoder": "cky", "layer": -1, "faithful": True,
                                                                     "seed": 0}
    assert ParseSettings(decoder="distance-split", faithful=True, bias=1.5).to_dict() == {
        "decoder": "distance-split", "layer": -1, "faithful": True, "seed": 0, "bias": 1.5, "symmetrize": "none",
        "absolute": False}
    assert ParseSettings(decoder="mart").to_dict() == {"decoder": "mart", "layer": -1, "seed": 0, "symmetrize": "none",
                                                       "absolute": False}   # no faithful mode: nothing to record
    assert ParseSettings(decoder="eisner").to_dict() == {"decoder": "eisner", "layer": -1, "root": "gold",
                                                         "faithful": False, "multiroot": False, "seed": 0,
                                                         "symmetrize": "none", "absolute": False}   # unchanged
