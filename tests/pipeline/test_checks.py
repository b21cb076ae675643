"""The refusals of a resolved run (``pmask.pipeline.checks``), which the one gate
(:func:`pmask.pipeline.request.check_request`) runs in its order, before any cost line and any model work.

Issue 47 items 2, 3, 8 and 12: a setting that does not apply to documents of EDUs (their unit's entry says what
does) is refused in one line that names it, never a metric or a decoder the user did not name, before any cost
line and any model work, in the CLI and in the API. (The module imports only what every release has, so that
these tests run against the tree before the fix.)"""
from __future__ import annotations

from pathlib import Path

import pytest

import pmask
from pmask.cli import main
from pmask.common.errors import SettingError
from pmask.corpora import read_corpus

DATA = Path(__file__).resolve().parents[1] / "data"
SCIDTB = DATA / "scidtb"
TINY = "pmask-tiny-en"


def test_a_span_decoder_refuses_symmetrize_and_absolute_in_one_line():
    from pmask.pipeline.checks import check_decoding
    from pmask.pipeline.decoding import Decoding

    for given, named in (({"symmetrize": "tril"}, "{symmetrize}"), ({"absolute": True}, "{absolute}"),
                         ({"symmetrize": "sum", "absolute": True}, "{symmetrize} or {absolute}")):
        decoding = Decoding(**{"decoder": "cky", "root": "gold", "symmetrize": "none", **given})
        with pytest.raises(SettingError) as error:
            check_decoding(decoding, [], "distortion")
        assert error.value.template.startswith(f"{{decoder}} cky takes no {named}") and "\n" not in str(error.value)
    check_decoding(Decoding("cky", root="gold", symmetrize="none"), [], "distortion")
    check_decoding(Decoding("mart", root="gold", symmetrize="tril", absolute=True), [], "pair")   # read there


def test_faithful_paper_decoders_refuse_symmetrization():
    from pmask.pipeline.checks import check_decoding
    from pmask.pipeline.decoding import Decoding

    with pytest.raises(SettingError, match="symmetrize"):
        check_decoding(Decoding("eisner", root="gold", faithful=True, symmetrize="sum"), [], None)
    check_decoding(Decoding("mst", root="gold", faithful=True, symmetrize="sum", absolute=True), [], None)


@pytest.fixture
def no_model(monkeypatch):
    """Any model loaded (model work) fails the test."""
    from pmask.perturb.models import load

    def refuse(*args, **kwargs):
        raise AssertionError("a model was loaded")

    monkeypatch.setattr(load, "load_model", refuse)


@pytest.mark.parametrize("flags, line", [
    (["--probe", "single"], "documents of EDUs take --probe pair only, not single"),
    (["--probe", "distortion"], "documents of EDUs take --probe pair only, not distortion"),
    (["--probe", "attention"], "documents of EDUs take --probe pair only, not attention"),
    (["--metric", "prob"], "documents of EDUs take --metric dist or cos (on the mean of each EDU's piece states), "
                           "not prob"),
    (["--metric", "cpmi", "--faithful"], "documents of EDUs take --metric dist or cos (on the mean of each EDU's "
                                         "piece states), not cpmi"),
    (["--subword", "first"], "documents of EDUs take --subword avg only (on the mean of each EDU's piece states), "
                             "not first"),
    (["--tokenize", "text"], "documents of EDUs take --tokenize words only (each EDU is tokenised on its own), "
                             "not text"),
    (["--context", "5"], "documents of EDUs take no --context (each document is read whole, on its own); leave it "
                         "out"),
])
@pytest.mark.parametrize("dry_run", [False, True])
def test_a_setting_documents_do_not_take_is_refused_in_one_line_naming_it(no_model, tmp_path, capsys, flags, line,
                                                                          dry_run):
    """Issue 47 items 2, 3, 8, 12: the line names the setting given (never a metric or decoder the user did not
    name), comes before any cost line and any model work, alone."""
    out = tmp_path / "x.conllu"
    code = main(["parse", str(SCIDTB), "--model", TINY, *flags, *(["--dry-run"] if dry_run else []), "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 1 and err == f"pmask: error: {line}\n", err
    assert not out.exists()


@pytest.mark.parametrize("given, setting", [({"probe": "distortion"}, "{probe}"), ({"metric": "prob"}, "{metric}"),
                                            ({"tokenize": "text"}, "{tokenize}"), ({"context": 5}, "{context}")])
def test_the_api_refuses_them_naming_the_setting_before_model_work(no_model, given, setting):
    docs = read_corpus(SCIDTB)
    with pytest.raises(SettingError) as error:
        pmask.parse(docs, model=TINY, **given)
    assert error.value.template.startswith(f"documents of EDUs take {'no ' if 'context' in given else ''}{setting}")
    with pytest.raises(SettingError):
        pmask.impacts(docs, model=TINY, **given)
