"""The decoders' registry (``pmask.trees.registry``): the recipe of docs/architecture.md, "A decoder", holds.
A decoder registered as one ``Decoder`` entry, and nowhere else, keeps the decoders' contract, is a
``--decoder`` choice, is decoded by name, and parses a corpus through ``pmask parse``, which records it."""
from __future__ import annotations

import json

import numpy as np
import pytest

from pmask.cli import main
from pmask.cli.dispatch import build_parser
from pmask.corpora import read_corpus
from pmask.trees.registry import DECODERS, DecodeInput, Decoder, decode, decoder_names

from entry_checks import check_entry

WORDS = ["She", "walked", "home", "."]


def _nearest_left(x: DecodeInput) -> np.ndarray:
    """Each word headed by its left neighbour, the first by ROOT; reads F only to check it is there."""
    assert x.F is not None and x.F.shape == (x.n, x.n)
    return np.arange(x.n, dtype=np.int64)


FAKE = Decoder("nearest-left", "dependency", _nearest_left, True, "a made-up decoder of the recipe's test")


@pytest.fixture
def fake():
    with DECODERS.registered(FAKE):
        check_entry("decoder", FAKE)
        yield FAKE


def test_a_new_decoder_is_a_choice_and_decodes_by_name(fake):
    assert DECODERS["nearest-left"] is fake and "nearest-left" in decoder_names("dependency", baseline=False)
    assert "nearest-left" not in decoder_names("constituency")
    assert decode("nearest-left", DecodeInput(words=WORDS, F=np.zeros((4, 4)))).tolist() == [0, 1, 2, 3]
    args = build_parser().parse_args(["parse", "x.conllu", "-o", "y.conllu", "--decoder", "nearest-left"])
    assert args.decoder == "nearest-left"


def test_a_new_decoder_parses_a_corpus(fake, tiny_bert_dir, tmp_path, capsys):
    text = tmp_path / "in.txt"
    text.write_text("She walked home .\nHe said so .\n", encoding="utf-8")
    out = tmp_path / "out.conllu"
    code = main(["parse", str(text), "--model", str(tiny_bert_dir), "--decoder", "nearest-left", "--root", "free",
                 "-q", "-o", str(out)])
    assert code == 0, capsys.readouterr().err
    assert [list(s.heads) for s in read_corpus(out)] == [[0, 1, 2, 3], [0, 1, 2, 3]]
    meta = json.loads((tmp_path / "out.conllu.meta.json").read_text(encoding="utf-8"))
    assert meta["settings"]["decoder"] == "nearest-left"


def test_without_the_entry_the_name_is_refused(capsys):
    assert "nearest-left" not in DECODERS
    with pytest.raises(SystemExit):
        build_parser().parse_args(["parse", "x.conllu", "-o", "y.conllu", "--decoder", "nearest-left"])
    assert "argument --decoder/-d: invalid choice: 'nearest-left'" in capsys.readouterr().err
