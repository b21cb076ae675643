"""Checking outputs before any work (``pmask.common.output_checks``): an output that cannot be written, or that
would overwrite an input, is refused in one line and nothing is written."""
from __future__ import annotations

import os

import pytest

from pmask.common.errors import OutputError, PmaskError
from pmask.common.files import write_output
from pmask.common.output_checks import (
    Output,
    check_output,
    check_outputs,
    make_output_folder,
    refuse_overwriting_inputs,
)


def test_output_equal_to_an_input_is_refused(tmp_path):
    gold = tmp_path / "same.conllu"
    gold.write_text("x")
    with pytest.raises(OutputError, match="would overwrite the input"):
        refuse_overwriting_inputs(gold, [tmp_path / "other.conllu", gold])
    with pytest.raises(PmaskError, match="would overwrite the input"):
        refuse_overwriting_inputs(str(tmp_path / "." / "same.conllu"), [str(gold)])
    link = tmp_path / "link.conllu"
    link.symlink_to(gold)
    hard = tmp_path / "hard.conllu"
    os.link(gold, hard)
    for alias in (link, hard):
        with pytest.raises(OutputError, match="would overwrite the input"):
            refuse_overwriting_inputs(alias, [gold])
    refuse_overwriting_inputs(tmp_path / "new.conllu", [gold, None, "-"])
    refuse_overwriting_inputs("-", [gold])
    refuse_overwriting_inputs(None, [gold])



def test_output_inside_an_input_folder(tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    (store / "manifest.json").write_text("{}")
    with pytest.raises(OutputError, match="would overwrite a file of the input folder"):
        refuse_overwriting_inputs(store / "manifest.json", [store])
    with pytest.raises(OutputError, match="would overwrite the input"):
        refuse_overwriting_inputs(store, [store])
    refuse_overwriting_inputs(store / "report.png", [store])   # a new file beside the data is fine



def test_a_missing_folder_is_an_error_and_nothing_is_created(tmp_path):
    out = tmp_path / "new" / "deeper" / "out.txt"
    with pytest.raises(OutputError) as err:
        write_output(out, "data")
    assert str(err.value) == (f"{out}: cannot write: folder {out.parent} does not exist (outputs are written like "
                              "shell redirection: create the folder first)")
    assert not (tmp_path / "new").exists()
    with pytest.raises(OutputError, match="does not exist"):
        check_output(out)



def test_check_output_names_every_impossible_file(tmp_path):
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match="it is a folder, not a file$"):
        check_output(tmp_path / "folder")
    with pytest.raises(OutputError, match="file is a file, not a folder$"):
        check_output(tmp_path / "file" / "x.conllu")
    with pytest.raises(OutputError, match=r"unsupported file type '\.jpg'; use one of \.png, \.svg$"):
        check_output(Output(tmp_path / "plot.jpg", suffixes=(".png", ".svg")))
    check_output(Output(tmp_path / "plot.PNG", suffixes=(".png", ".svg")))
    check_output(tmp_path / "new.conllu")
    check_output("-")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "folder"]   # nothing written



def test_folders_a_command_creates_need_their_parent(tmp_path):
    (tmp_path / "file").write_text("x")
    check_output(Output(tmp_path / "new-store", folder=True))
    with pytest.raises(OutputError, match="it is a file, not a folder$"):
        check_output(Output(tmp_path / "file", folder=True))
    with pytest.raises(OutputError, match="does not exist"):
        check_output(Output(tmp_path / "a" / "b", folder=True))
    with pytest.raises(OutputError, match="standard output"):
        check_output(Output("-", folder=True))
    assert make_output_folder(tmp_path / "made").is_dir()
    assert make_output_folder(tmp_path / "made").is_dir()   # an existing folder is fine
    with pytest.raises(OutputError, match="does not exist"):
        make_output_folder(tmp_path / "a" / "b")
    assert not (tmp_path / "a").exists()



def test_check_outputs_refuses_inputs_and_skips_none(tmp_path):
    gold = tmp_path / "gold.conllu"
    gold.write_text("x")
    check_outputs([None, tmp_path / "a.json"], [gold])
    with pytest.raises(OutputError, match="would overwrite the input"):
        check_outputs([tmp_path / "a.json", gold], [gold])
