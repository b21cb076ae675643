"""The tokenisation modes are one table (``pmask.common.tokenization``): what a mode reads and what its input
holds are asked of its entry, each mode has its aligner, and the settings it cannot take are refused in one
line before any model work."""
from __future__ import annotations

import pytest

from pmask.common.errors import OptionError, SettingError
from pmask.common.options import TOKENIZE_MODES
from pmask.common.tokenization import TOKENIZE_ENTRIES, tokenize_mode
from pmask.perturb.engine.impact_settings import ImpactSettings


def test_the_modes_are_the_cli_choices_and_an_unknown_one_is_refused_in_one_line():
    assert list(TOKENIZE_ENTRIES) == list(TOKENIZE_MODES)
    with pytest.raises(OptionError) as info:
        tokenize_mode("chars")
    assert str(info.value) == f"unknown tokenisation mode 'chars' (choose from {', '.join(TOKENIZE_ENTRIES)})"


@pytest.mark.parametrize("mode", ["text", "bare"])
def test_context_is_refused_where_a_mode_cannot_lay_it_out(mode):
    """``bare`` has no special tokens to separate a sentence from its neighbours: its aligner left the context out
    (a store recorded context it did not have); now refused as ``text`` is."""
    probe = "distance" if mode == "bare" else "pair"
    metric = "l2" if mode == "bare" else "dist"
    with pytest.raises(SettingError, match=rf"it takes tokenize words or words-ptb, not {mode}$"):
        ImpactSettings(metric, "avg", mode, probe, 5).check()
    assert ImpactSettings(metric, "avg", mode, probe, 0).check().tokenize == mode
    assert ImpactSettings("dist", "avg", "words-ptb", "pair", 5).check().context == 5


def test_a_mode_without_special_tokens_is_for_the_probes_that_take_bare_input():
    with pytest.raises(SettingError, match=r"tokenize bare \(no special tokens, Kim et al.'s input\) is for probe "
                                           r"distance, not pair"):
        ImpactSettings("dist", "avg", "bare", "pair", 0).check()
