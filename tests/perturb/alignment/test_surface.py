"""Surface tokenisation (``--tokenize text``): layout, offsets, multiword tokens, straddling pieces."""
from __future__ import annotations

import logging
import re
from pathlib import Path

import numpy as np
import pytest

from pmask.cli import main
from pmask.corpora import read_corpus
from pmask.perturb.alignment import align_sentence, surface_align, surface_layout

UD = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "ud"
needs_pud = pytest.mark.skipif(not any(UD.glob("UD_*-PUD/*.conllu")), reason="PUD treebanks not available")

HEADER = "# sent_id = {sid}\n# text = {text}\n"


def _conllu(tmp_path: Path, name: str, sid: str, text: str, rows: list[tuple[str, str, str]]) -> Path:
    """rows: (ID, FORM, MISC); heads form a chain to the first word."""
    lines = [HEADER.format(sid=sid, text=text).rstrip("\n")]
    for tid, form, misc in rows:
        if "-" in tid:
            lines.append("\t".join([tid, form] + ["_"] * 7 + [misc]))
        else:
            k = int(tid)
            lines.append("\t".join([tid, form, "_", "X", "_", "_", str(k - 1), "root" if k == 1 else "dep", "_", misc]))
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n\n", encoding="utf-8")
    return path


# German "zum" = "zu dem", French "du" = "de le"
GERMAN = ("Er geht zum Haus.", [("1", "Er", "_"), ("2", "geht", "_"), ("3-4", "zum", "_"), ("3", "zu", "_"),
                                 ("4", "dem", "_"), ("5", "Haus", "SpaceAfter=No"), ("6", ".", "_")])
FRENCH = ("Il parle du livre.", [("1", "Il", "_"), ("2", "parle", "_"), ("3-4", "du", "_"), ("3", "de", "_"),
                                  ("4", "le", "_"), ("5", "livre", "SpaceAfter=No"), ("6", ".", "_")])
MWT_UNITS = {"de": ["Er", "geht", "zum", "Haus", "."], "fr": ["Il", "parle", "du", "livre", "."]}


@pytest.fixture(scope="session")
def vocab_texts():
    from pmask.perturb.testing.multilingual import pud_texts

    texts = pud_texts(UD, limit=150) if UD.is_dir() else []
    return texts + [GERMAN[0], FRENCH[0]] * 5


@pytest.fixture(scope="session", params=["wordpiece", "unigram"])
def tok(request, tmp_path_factory, vocab_texts):
    from pmask.perturb.models.load import load_tokenizer
    from pmask.perturb.testing.multilingual import train_vocabulary

    path = tmp_path_factory.mktemp(f"tok_{request.param}")
    train_vocabulary(vocab_texts, path, kind=request.param, vocab_size=2500)
    return load_tokenizer(str(path))


@pytest.fixture(scope="session")
def mwt_model(tmp_path_factory, vocab_texts):
    from pmask.perturb.models.load import load_model
    from pmask.perturb.testing.multilingual import make_tiny_multilingual

    path = make_tiny_multilingual(tmp_path_factory.mktemp("mwt_model"), vocab_texts, vocab_size=1500, hidden=16,
                                  layers=2, max_positions=128)
    return load_model(str(path), device="cpu", dtype="float32")


def test_layout_spaces_and_multiword_tokens(tmp_path):
    sent = read_corpus(_conllu(tmp_path, "de.conllu", "de1", *GERMAN), "conllu")[0]
    layout = surface_layout(sent)
    assert layout.text == "Er geht zum Haus."
    assert layout.units == [[0], [1], [2, 3], [4], [5]]
    assert [layout.text[s:e] for s, e in layout.spans] == MWT_UNITS["de"]
    assert surface_layout(["a", "b"]).text == "a b"     # plain word lists: spaces


@needs_pud
def test_layout_rebuilds_the_pud_text():
    """The rebuilt text equals ``# text`` for (nearly) every PUD sentence in every language."""
    for path in sorted(UD.glob("UD_*-PUD/*.conllu")):
        sents = read_corpus(path, "conllu", limit=100)
        same = sum(surface_layout(s).text == s.text for s in sents)
        assert same >= 0.9 * len(sents), (path.name, same)


def _expected_words(tokenizer, sent):
    """Independent oracle: the word where each real piece starts (offsets, not the module's code)."""
    layout = surface_layout(sent)
    enc = tokenizer(layout.text, return_offsets_mapping=True)
    start_word = {}
    for words, (s, e) in zip(layout.units, layout.spans):
        for c in range(s, e):
            start_word[c] = words[0]
    out = []
    for (s, e), seq in zip(enc["offset_mapping"], enc.sequence_ids()):
        if seq is None:
            continue
        c = next((c for c in range(s, max(e, s + 1)) if c in start_word), None)
        if c is None:   # whitespace-only piece: the next word
            c = min(k for k in start_word if k >= s)
        out.append(start_word[c])
    return enc["input_ids"], out


@needs_pud
@pytest.mark.parametrize("lang", ["Chinese", "Japanese", "Thai"])
def test_surface_ids_are_the_running_text_ids(tok, lang, caplog):
    path = next(UD.glob(f"UD_{lang}-PUD/*.conllu"))
    for sent in read_corpus(path, "conllu", limit=15):
        al = surface_align(tok, sent, warn=False)
        ids, starts = _expected_words(tok, sent)
        assert al.input_ids == ids                       # exactly the tokenizer's ids for the text
        assert al.n_words == len(sent.words)
        real = [w for w in al.word_index if w >= 0]
        # each piece belongs to the word where it starts, or to the first word of the group that word joined
        for got, start in zip(real, starts):
            assert got <= start and al.pieces(start) == al.pieces(got)
        for k in range(len(sent.words)):
            assert al.pieces(k), f"word {k} has no piece"


def test_multiword_tokens_share_the_surface_pieces(tmp_path, tok):
    for lang, (text, rows) in (("de", GERMAN), ("fr", FRENCH)):
        sent = read_corpus(_conllu(tmp_path, f"{lang}.conllu", lang, text, rows), "conllu")[0]
        al = surface_align(tok, sent)
        assert al.input_ids == tok(text)["input_ids"]
        mwt = tok(MWT_UNITS[lang][2], add_special_tokens=False)["input_ids"]
        assert [al.input_ids[p] for p in al.pieces(2)] == mwt      # the surface token's own pieces
        assert al.pieces(2) == al.pieces(3)                  # zu/dem, de/le share the pieces of zum/du
        assert {al.word_index[p] for p in al.pieces(3)} == {2}   # owned by the first word
        assert set(al.pieces(2)).isdisjoint(al.pieces(1)) and set(al.pieces(2)).isdisjoint(al.pieces(4))
        # the per-word mode keeps one set of pieces per syntactic word
        words_al = align_sentence(tok, sent, "words")
        assert words_al.pieces(2) != words_al.pieces(3)


def test_multiword_token_impacts(tmp_path, mwt_model):
    """Masking either word of a multiword token masks the token; impacts between its words are 0;
    with WordPiece, text mode equals per-word mode over the surface units, expanded to words."""
    from pmask.perturb.engine.runner import impact_matrices

    for lang, (text, rows) in (("de", GERMAN), ("fr", FRENCH)):
        sent = read_corpus(_conllu(tmp_path, f"{lang}.conllu", lang, text, rows), "conllu")[0]
        F = next(impact_matrices(mwt_model, [sent], layers=[1, 2], tokenize="text", metric="dist", subword="avg"))
        units = next(impact_matrices(mwt_model, [MWT_UNITS[lang]], layers=[1, 2], metric="dist", subword="avg",
                                     tokenize="words"))
        assert F.shape == (2, 6, 6)
        assert np.all(F[:, 2, 3] == 0) and np.all(F[:, 3, 2] == 0)
        np.testing.assert_allclose(F[:, 2, :], F[:, 3, :], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(F[:, :, 2], F[:, :, 3], rtol=1e-5, atol=1e-6)
        unit_of = [0, 1, 2, 2, 3, 4]
        expanded = units[:, unit_of][:, :, unit_of]
        expanded[:, 2, 3] = expanded[:, 3, 2] = 0
        np.testing.assert_allclose(F, expanded, rtol=1e-4, atol=1e-5)


def _hand_tokenizer(tmp_path: Path, pieces: list[str]):
    from transformers import BertTokenizerFast

    (tmp_path / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *pieces]) + "\n",
                                        encoding="utf-8")
    return BertTokenizerFast(str(tmp_path / "vocab.txt"), do_lower_case=False)


def test_straddling_piece_merges_the_words(tmp_path, caplog):
    tok = _hand_tokenizer(tmp_path, ["x", "abcd", "##e"])
    path = _conllu(tmp_path, "s.conllu", "s1", "x abcde", [("1", "x", "_"), ("2", "ab", "SpaceAfter=No"),
                                                          ("3", "cde", "_")])
    sent = read_corpus(path, "conllu")[0]
    with caplog.at_level(logging.WARNING, logger="pmask.perturb.alignment.surface"):
        al = surface_align(tok, sent)
    assert tok.convert_ids_to_tokens(al.input_ids) == ["[CLS]", "x", "abcd", "##e", "[SEP]"]
    # "abcd" starts in "ab"; "##e" starts in "cde" -> every word keeps a piece, nothing merged
    assert al.pieces(1) == [2] and al.pieces(2) == [3]
    assert not [r for r in caplog.records if r.name == "pmask.perturb.alignment.surface"]
    path = _conllu(tmp_path, "t.conllu", "s2", "x abcd", [("1", "x", "_"), ("2", "ab", "SpaceAfter=No"),
                                                         ("3", "cd", "_")])
    sent = read_corpus(path, "conllu")[0]
    with caplog.at_level(logging.WARNING, logger="pmask.perturb.alignment.surface"):
        al = surface_align(tok, sent)
    assert al.pieces(1) == al.pieces(2) == [2]              # "cd" borrows the straddling piece
    assert al.word_index == [-1, 0, 1, -1]
    assert any("s2" in r.getMessage() and "'cd'" in r.getMessage() for r in caplog.records)


def test_dropped_word_gets_an_unk_piece(tmp_path, caplog):
    tok = _hand_tokenizer(tmp_path, ["x", "y"])
    with caplog.at_level(logging.WARNING, logger="pmask.perturb.alignment.surface"):
        al = surface_align(tok, ["x", "\u200b", "y"])
    assert tok.convert_ids_to_tokens(al.input_ids) == ["[CLS]", "x", "[UNK]", "y", "[SEP]"]
    assert al.word_index == [-1, 0, 1, 2, -1]
    assert any("no piece" in r.getMessage() for r in caplog.records)


def test_unknown_mode_is_refused(tmp_path):
    from pmask.common.errors import PmaskError

    tok = _hand_tokenizer(tmp_path, ["x"])
    with pytest.raises(PmaskError, match="tokenisation mode"):
        align_sentence(tok, ["x"], "chars")


def test_tokenize_text_groups_its_per_word_warnings_into_one_line(tiny_bert_dir, tmp_path, capsys):
    rows = []
    japanese = [["ワシントン", "の", "キャピトルヒル", "で"], ["ソーシャル", "メディア", "を", "フォロー"]]
    for s, words in enumerate(japanese):
        rows.append(f"# sent_id = j{s}")
        rows += [f"{k}\t{w}\t_\t_\t_\t_\t{0 if k == 1 else 1}\t_\t_\tSpaceAfter=No"
                 for k, w in enumerate(words, start=1)]
        rows.append("")
    corpus = tmp_path / "ja.conllu"
    corpus.write_text("\n".join(rows) + "\n", encoding="utf-8")
    assert main(["impact", str(corpus), "--model", str(tiny_bert_dir), "--tokenize", "text",
                 "-o", str(tmp_path / "store")]) == 0
    err = capsys.readouterr().err.splitlines()
    grouped = [line for line in err if "tokenize text:" in line]
    per_word = [line for line in err if "(word " in line]
    assert not per_word, err
    assert len(grouped) == 1 and re.search(r"\d+ words in 2 sentences", grouped[0]), err



