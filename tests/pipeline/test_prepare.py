"""Tests for pmask.pipeline.prepare: the checks a request gets once the model's family is read from its config."""
from __future__ import annotations

import pytest

from pmask.cli import main


@pytest.fixture(scope="module")
def causal(tmp_path_factory):
    from family_impacts import causal_model

    return causal_model(tmp_path_factory)   # gpt2 with 2 layers (pmask.perturb.testing.llm_zoo)


def test_a_head_metric_off_the_last_layer_of_a_causal_model_is_refused_before_any_output(causal, tmp_path, capsys,
                                                                                          monkeypatch):
    """Issue 45, item 7: cpmi reads a causal model's next-token prediction, at its last layer only. sweep --store
    and impact -o at other layers (sweep's default 'all' too) were refused by the encoder after the store's
    manifest was written and the model loaded; now by with_family, from the config: one line, exit 1, no folder
    made, one already there untouched, no weights loaded."""
    from pmask.perturb.models import load

    folder, corpus = causal
    monkeypatch.setattr(load, "load_model", lambda *a, **k: pytest.fail("the model was loaded"))
    old = tmp_path / "old"
    old.mkdir()
    (old / "keep").write_text("kept\n")
    new = tmp_path / "new"
    line = (f"pmask: error: model '{folder}': a causal model's log-probabilities are read at its last layer (2) "
            "only, its own next-token prediction; use --layers -1")
    runs = [["sweep", str(corpus), "--metric", "cpmi", "--store", str(new)],   # sweep's layers: all
            ["sweep", str(corpus), "--metric", "cpmi", "--layers", "all", "--store", str(new)],
            ["sweep", str(corpus), "--metric", "cpmi", "--layers", "1", "--store", str(old)],
            ["impact", str(corpus), "--metric", "cpmi", "--layers", "all", "-o", str(new)],
            ["impact", str(corpus), "--metric", "cpmi", "--layers", "1,2", "-o", str(old), "--overwrite"],
            ["impact", str(corpus), "--metric", "cpmi", "--layers", "-2", "-o", str(new), "--dry-run"]]
    for args in runs:
        code = main([*args, "--model", str(folder), "-q"])
        err = capsys.readouterr().err
        assert code == 1 and err.strip() == line, (args, err)
        assert not new.exists(), args
        assert sorted(p.name for p in old.iterdir()) == ["keep"] and (old / "keep").read_text() == "kept\n"
    for layers in ("-1", "2"):   # the last layer, either way: through the gate (a dry run loads nothing)
        assert main(["impact", str(corpus), "--metric", "cpmi", "--layers", layers, "-o", str(new), "--dry-run",
                     "--model", str(folder), "-q"]) == 0, (layers, capsys.readouterr().err)
    assert not new.exists()
