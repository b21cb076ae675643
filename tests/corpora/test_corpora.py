"""Corpus readers and writers: hand-made fixtures in tests/data, malformed input, shared gold data."""
from __future__ import annotations

import re
from pathlib import Path

import conllu
import nltk
import pytest

from pmask.common.errors import CorpusError, OutputError
from pmask.corpora import (
    Sentence,
    detect_format,
    read_brackets,
    read_conllu,
    read_corpus,
    read_dep3,
    read_ptb,
    read_text,
    write_brackets,
    write_conllu,
)
from pmask.corpora.brackets import to_brackets

DATA = Path(__file__).resolve().parents[1] / "data"
SHARED = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
PUD = SHARED / "ud" / "UD_English-PUD" / "en_pud-ud-test.conllu"
PUD_WU = SHARED / "ud" / "PUD-wu2020" / "PUD.conllu"
PTB_DIR = SHARED / "ptb-sample" / "combined"
DEP_DIR = SHARED / "ptb-sample" / "dependency"


def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"shared data absent: {path}")
    return path


def is_word_line(line: str) -> bool:
    return not line.startswith("#") and line.split("\t")[0].isdigit()


# --------------------------------------------------------------------------- CoNLL-U reading

def test_read_mini_conllu():
    sents = read_conllu(DATA / "mini.conllu")
    assert [s.id for s in sents] == ["s1", "s2", "3", "s4", "s5"]
    s1, s2, s3, s4, s5 = sents
    # multiword token 1-2 "I'm" is not a word; its parts are
    assert s1.words == ["I", "'m", "here", ",", "too", "."]
    assert s1.heads == [3, 3, 0, 5, 3, 3]
    assert s1.deprels == ["nsubj", "cop", "root", "punct", "advmod", "punct"]
    assert s1.upos == ["PRON", "AUX", "ADV", "PUNCT", "ADV", "PUNCT"]
    assert s1.xpos == ["PRP", "VBP", "RB", ",", "RB", "."]
    assert s1.text == "I'm here, too."
    assert s1.root == 3
    # the empty node 5.1 is not a word
    assert s2.words == ["Sue", "likes", "tea", "and", "Tom", "coffee", "."]
    assert s2.heads == [2, 0, 2, 5, 3, 5, 2]
    assert s3.words == ["...", "!"] and s3.heads == [0, 1] and s3.text == "... !"
    assert s4.words == ["Hello"] and s4.heads == [0]
    assert s5.words == ["Go", "home"] and s5.heads == [0, 1]
    lines = (DATA / "mini.conllu").read_text(encoding="utf-8").split("\n")
    assert [s.line for s in sents] == [1, 12, 23, 28, 32]
    for s in sents:
        assert s.path == str(DATA / "mini.conllu")
        assert lines[s.line - 1].startswith("#")
        assert isinstance(s.source, conllu.TokenList)
        assert s.source.metadata.get("text") == s.text
        assert s.where().startswith(f"{s.path}:{s.line}")


def test_read_conllu_limits():
    assert [s.id for s in read_conllu(DATA / "mini.conllu", max_words=2)] == ["3", "s4", "s5"]
    assert [s.id for s in read_conllu(DATA / "mini.conllu", limit=2)] == ["s1", "s2"]
    assert [s.id for s in read_corpus(DATA / "mini.conllu", max_words=2, limit=2)] == ["3", "s4"]


def test_read_conllu_without_heads():
    sents = read_conllu(DATA / "noheads.conllu")
    assert [s.words for s in sents] == [["Parse", "me", "please"], ["Do", "n't", "stop"]]
    assert all(s.heads is None and s.deprels is None and s.upos is None for s in sents)
    assert sents[0].root is None


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def tokline(i, form, head, deprel="dep", ncols=10):
    cols = [str(i), form, "_", "_", "_", "_", str(head), deprel, "_", "_"]
    return "\t".join(cols[:ncols])


BAD_CONLLU = {
    "columns": ("# sent_id = a\n" + tokline(1, "x", 0, "root") + "\n" + tokline(2, "y", 1, ncols=9) + "\n\n",
                3, "expected 10 tab-separated columns, found 9", "a"),
    "head_not_int": ("# sent_id = b\n" + tokline(1, "x", "x", "root") + "\n\n", 2, "HEAD 'x' is not an integer", "b"),
    "head_range": ("# sent_id = c\n" + tokline(1, "x", 0, "root") + "\n" + tokline(2, "y", 7) + "\n\n",
                   3, "out of range 0..2", "c"),
    "cycle": ("# sent_id = d\n" + "\n".join([tokline(1, "a", 0, "root"), tokline(2, "b", 3), tokline(3, "c", 2)])
              + "\n\n", 3, "cycle through words 2 3", "d"),
    "no_root": ("# sent_id = e\n" + tokline(1, "a", 2) + "\n" + tokline(2, "b", 1) + "\n\n", 2, "ROOT", "e"),
    "bad_id": ("# sent_id = f\n" + tokline("x1", "a", 0) + "\n\n", 2, "bad ID 'x1'", "f"),
    "id_sequence": ("# sent_id = g\n" + tokline(1, "a", 0) + "\n" + tokline(3, "b", 1) + "\n\n", 3,
                    "out of sequence", "g"),
    "mixed_heads": ("# sent_id = h\n" + tokline(1, "a", 0) + "\n" + tokline(2, "b", "_") + "\n\n", 3,
                    "HEAD '_'", "h"),
    "second_sentence": (tokline(1, "a", 0) + "\n\n\n" + tokline(1, "b", 0) + "\n" + tokline(2, "c", 5) + "\n\n",
                        5, "out of range", "2"),
}


@pytest.mark.parametrize("kind", sorted(BAD_CONLLU))
def test_malformed_conllu(tmp_path, kind):
    text, line, what, sid = BAD_CONLLU[kind]
    path = write(tmp_path, f"{kind}.conllu", text)
    with pytest.raises(CorpusError) as info:
        read_corpus(path)
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith(f"{path}:{line}: "), msg
    assert what in msg and f"(sentence {sid})" in msg


@pytest.mark.parametrize("text", ["", "\n\n  \n"])
def test_empty_conllu(tmp_path, text):
    path = write(tmp_path, "empty.conllu", text)
    with pytest.raises(CorpusError, match=rf"^{path}:1: no sentences"):
        read_conllu(path)


def test_non_utf8(tmp_path):
    good = tokline(1, "a", 0) + "\n\n"
    path = write(tmp_path, "latin1.conllu", (good + "# text = caf\xe9\n").encode("latin-1") + b"1\tx\n")
    with pytest.raises(CorpusError, match=rf"^{path}:3: not UTF-8"):
        read_conllu(path)
    txt = write(tmp_path, "latin1.txt", "ok\n\nna\xefve\n".encode("latin-1"))
    with pytest.raises(CorpusError, match=rf"^{txt}:3: not UTF-8"):
        read_corpus(txt)


def test_conllu_library_errors_are_wrapped(tmp_path, monkeypatch):
    from conllu.exceptions import ParseException

    def boom(*args, **kwargs):
        raise ParseException("Failed parsing field 'feats'")

    monkeypatch.setattr(conllu, "parse", boom)
    path = write(tmp_path, "x.conllu", "# sent_id = z\n" + tokline(1, "a", 0) + "\n\n")
    with pytest.raises(CorpusError, match=rf"^{path}:1: Failed parsing field 'feats' \(sentence z\)$"):
        read_conllu(path)


def test_missing_file_and_unknown_format(tmp_path):
    with pytest.raises(CorpusError, match="no such file"):
        read_corpus(tmp_path / "nope.conllu")
    path = write(tmp_path, "a.txt", "a b\n")
    with pytest.raises(CorpusError, match="unknown corpus format"):
        read_corpus(path, fmt="xml")


# --------------------------------------------------------------------------- CoNLL-U writing

def test_write_conllu_keeps_everything_else(tmp_path):
    src = DATA / "mini.conllu"
    sents = read_conllu(src)
    preds = [[2, 3, 0, 5, 6, 0], [2, 0, 4, 5, 6, 7, 0], [0, 1], None, [0, 1]]
    (tmp_path / "out").mkdir()
    out = tmp_path / "out" / "pred.conllu"
    write_conllu(sents, preds, out)
    before = [line for line in src.read_text(encoding="utf-8").split("\n")
              if not re.match(r"[0-9]+\.[0-9]+\t", line)]   # empty nodes go with the enhanced graph (issue 33)
    after = out.read_text(encoding="utf-8").split("\n")
    assert len(before) == len(after)
    words = iter([(i, k) for i, s in enumerate(sents) for k in range(len(s))])
    for old, new in zip(before, after):
        if not is_word_line(old):
            assert new == old  # comments, MWT lines, blank lines: byte for byte
            continue
        o, n = old.split("\t"), new.split("\t")
        assert o[:6] + o[9:] == n[:6] + n[9:]
        i, k = next(words)
        pred = preds[i]
        assert n[6] == ("_" if pred is None else str(pred[k]))
        assert n[7] == "_" and n[8] == "_"
    back = read_conllu(out)
    assert [s.words for s in back] == [s.words for s in sents]
    assert [s.heads for s in back[:3]] == preds[:3] and back[3].heads is None
    assert list(tmp_path.joinpath("out").iterdir()) == [out]  # no temporary file left behind


def test_write_conllu_dep_labels(tmp_path):
    sents = read_conllu(DATA / "mini.conllu")
    out = tmp_path / "dep.conllu"
    write_conllu(sents, [s.heads for s in sents], out, deprel="dep")
    back = read_conllu(out)
    for s, b in zip(sents, back):
        assert b.heads == s.heads
        assert b.deprels == ["root" if h == 0 else "dep" for h in s.heads]
        assert all(t["deps"] is None for t in b.source if isinstance(t["id"], int))


def test_write_conllu_from_plain_text(tmp_path):
    sents = read_text(DATA / "mini.txt")
    out = tmp_path / "t.conllu"
    write_conllu(sents, [[2, 3, 0, 3], None], out, deprel="dep")
    back = read_conllu(out)
    assert [b.words for b in back] == [s.words for s in sents]
    assert back[0].heads == [2, 3, 0, 3] and back[1].heads is None
    assert [b.id for b in back] == ["1", "3"]


def test_write_conllu_rejects_bad_heads(tmp_path):
    sents = read_conllu(DATA / "mini.conllu")[:1]
    for bad in ([0, 1], [0, 1, 2, 3, 4, 9], [0, 1, 2, 3, 4, "x"]):
        with pytest.raises(CorpusError, match="sentence s1"):
            write_conllu(sents, [bad], tmp_path / "bad.conllu")
    with pytest.raises(ValueError):
        write_conllu(sents, [[0] * 6], tmp_path / "bad.conllu", deprel="nsubj")
    assert not (tmp_path / "bad.conllu").exists()
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match=r"cannot write: .*file is a file, not a folder$"):
        write_conllu(sents, [[2, 3, 0, 5, 6, 0]], tmp_path / "file" / "sub.conllu")


def test_byte_order_mark_and_crlf(tmp_path):
    text = "\ufeff# sent_id = b\r\n" + tokline(1, "a", 0, "root") + "\r\n" + tokline(2, "b", 1) + "\r\n\r\n"
    path = write(tmp_path, "bom.conllu", text)
    (sent,) = read_conllu(path)
    assert sent.id == "b" and sent.words == ["a", "b"] and sent.heads == [0, 1]


def test_pud_counts():
    pud = read_corpus(need(PUD))
    assert len(pud) == 1000 and sum(len(s) for s in pud) == 21180
    wu = read_corpus(need(PUD_WU))
    assert len(wu) == 1000 and sum(len(s) for s in wu) == 21176
    assert all(s.heads is not None and s.deprels and s.upos for s in pud)


def test_pud_roundtrip(tmp_path):
    src = need(PUD)
    sents = read_conllu(src)
    out = tmp_path / "pud.conllu"
    write_conllu(sents, [s.heads for s in sents], out)
    before = src.read_text(encoding="utf-8").splitlines()
    empty = [line for line in before if re.match(r"[0-9]+\.[0-9]+\t", line)]
    assert len(empty) == 7   # PUD's empty nodes, left out with the enhanced graph
    before = [line for line in before if line not in empty]
    after = out.read_text(encoding="utf-8").splitlines()
    assert len(before) == len(after)
    for old, new in zip(before, after):
        if is_word_line(old):
            o, n = old.split("\t"), new.split("\t")
            assert o[:7] + o[9:] == n[:7] + n[9:] and n[7:9] == ["_", "_"]
        else:
            assert old == new
    assert [s.heads for s in read_conllu(out)] == [s.heads for s in sents]


# --------------------------------------------------------------------------- PTB / dep3 / text

def test_read_mini_ptb():
    sents = read_ptb(DATA / "mini.mrg")
    assert [s.id for s in sents] == ["mini#1", "mini#2", "mini#4", "mini#5"]  # #3 is punctuation only
    assert [s.line for s in sents] == [1, 7, 14, 15]
    assert [s.words for s in sents] == [["The", "cat", "sat", "on", "the", "mat"], ["It", "was", "said"],
                                        ["Yes"], ["5", "bill"]]
    assert sents[0].xpos == ["DT", "NN", "VBD", "IN", "DT", "NN"]
    assert to_brackets(sents[0].tree) == \
        "(S (NP (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))))"
    assert to_brackets(sents[1].tree) == "(S (NP (PRP It)) (VP (VBD was) (VP (VBN said))))"
    assert to_brackets(sents[3].tree) == "(NP (QP (CD 5)) (NN bill))"
    assert all(s.tree.leaves() == s.words for s in sents)
    assert sents[0].meta["raw_tree"].leaves()[-1] == "."
    assert sents[0].heads is None


def test_read_ptb_options():
    raw = read_ptb(DATA / "mini.mrg", filter_punct=False)
    assert [s.words for s in raw] == [["The", "cat", "sat", "on", "the", "mat", "."], ["It", "was", "said", "."],
                                      ["--", "."], ["Yes", "."], ["$", "5", "bill"]]
    assert [s.id for s in read_ptb(DATA / "mini.mrg", max_words=2)] == ["mini#4", "mini#5"]
    assert [s.id for s in read_ptb(DATA / "mini.mrg", limit=1)] == ["mini#1"]
    kept = read_ptb(DATA / "mini.mrg", strip_labels=False)
    assert kept[0].tree[0].label() == "NP-SBJ"


@pytest.mark.parametrize("text,line,what", [
    ("(S (NN a))\n\n(S (NN b)\n", 3, "not closed"),
    ("(S (NN a)))\n", 1, "unbalanced ')'"),
    ("(S (NN a))\nstray\n", 2, "outside brackets"),
    ("", 1, "no trees"),
    ("(S (NN a))\n(S (NP the (NN dog)))\n", 2, "word 'the' is not under a POS tag"),
    ("(S (NN a))\n(S (NP (NN a)) (VP (V b))\n(X c)))\n", 3, "unbalanced ')'"),
])
def test_malformed_ptb(tmp_path, text, line, what):
    path = write(tmp_path, "bad.mrg", text)
    with pytest.raises(CorpusError) as info:
        read_corpus(path)
    assert str(info.value).startswith(f"{path}:{line}: ") and what in str(info.value)


def test_ptb_sample_wsj10():
    sents = read_corpus(need(PTB_DIR), max_words=10)
    assert len(sents) == 555  # the paper's WSJ10 subset of the NLTK sample
    assert all(1 <= len(s) <= 10 and s.tree.leaves() == s.words for s in sents)
    assert len(read_ptb(PTB_DIR)) == 3914


def test_dep3():
    sents = read_dep3(DATA / "mini.dp")
    assert [(s.id, s.words, s.xpos, s.heads) for s in sents] == [
        ("mini#1", ["The", "cat", "sat", "."], ["DT", "NN", "VBD", "."], [2, 3, 0, 3]),
        ("mini#2", ["Yes"], ["UH"], [0]),
    ]
    assert [s.line for s in sents] == [1, 6]


@pytest.mark.parametrize("text,line,what", [
    ("a\tDT\t0\nb\tNN\n", 2, "expected 3 tab-separated columns"),
    ("a\tDT\tx\n", 1, "HEAD 'x' is not an integer"),
    ("a\tDT\t2\nb\tNN\t1\n", 1, "ROOT"),
    ("a\tDT\t0\nb\tNN\t3\n", 2, "out of range"),
])
def test_malformed_dep3(tmp_path, text, line, what):
    path = write(tmp_path, "bad.dp", text)
    with pytest.raises(CorpusError) as info:
        read_corpus(path)
    assert str(info.value).startswith(f"{path}:{line}: ") and what in str(info.value)


def test_dep3_matches_ptb_sample():
    deps = read_corpus(need(DEP_DIR))
    ptb = read_ptb(need(PTB_DIR), filter_punct=False)
    assert len(deps) == len(ptb) == 3914
    assert all(d.id == p.id and d.words == p.words for d, p in zip(deps, ptb))


def test_plain_text():
    sents = read_text(DATA / "mini.txt")
    assert [(s.id, s.words, s.line) for s in sents] == [("1", ["The", "cat", "sat", "."], 1), ("3", ["Yes"], 3)]
    assert read_text(DATA / "mini.txt", max_words=1)[0].id == "3"


def test_detect_format(tmp_path):
    assert detect_format(DATA / "mini.conllu") == "conllu"
    assert detect_format(DATA / "mini.mrg") == "ptb"
    assert detect_format(DATA / "mini.dp") == "dep3"
    assert detect_format(DATA / "mini.txt") == "text"
    assert detect_format(tmp_path / "x.CONLL") == "conllu"
    (tmp_path / "a.mrg").write_text("(S (NN a))\n")
    assert detect_format(tmp_path) == "ptb"
    assert [s.words for s in read_corpus(tmp_path)] == [["a"]]
    assert len(read_corpus(DATA / "mini.conllu", fmt="text")) == 31  # explicit format wins
    assert all(isinstance(s, Sentence) for s in read_corpus(DATA / "mini.dp"))


# --------------------------------------------------------------------------- brackets writer

def test_write_brackets(tmp_path):
    trees = [nltk.Tree("X", ["a", nltk.Tree("X", ["(", "b)"])]), None, read_ptb(DATA / "mini.mrg")[0].tree]
    out = tmp_path / "trees.txt"
    write_brackets(trees, out)
    lines = out.read_text(encoding="utf-8").split("\n")
    assert lines[0] == "(X a (X -LRB- b-RRB-))" and lines[1] == "" and lines[3] == ""
    assert nltk.Tree.fromstring(lines[2]) == trees[2]
    back = read_brackets(out)
    assert back[0] == nltk.Tree("X", ["a", nltk.Tree("X", ["(", "b)"])]) and back[1] is None
    assert back[2] == trees[2] and len(back) == 3


@pytest.mark.parametrize("text,line", [("(X a b)\n(X a\n", 2), ("(X a) (X b)\n", 1), ("\n\n", 1),
                                       ("(X a)\nstray\n", 2)])
def test_read_brackets_errors(tmp_path, text, line):
    path = write(tmp_path, "pred.txt", text)
    with pytest.raises(CorpusError) as info:
        read_brackets(path)
    assert str(info.value).startswith(f"{path}:{line}: ")


def test_write_conllu_drops_the_enhanced_graph_with_its_empty_nodes(tmp_path):
    """Issue 33, item 5: the gold's enhanced graph would contradict the predicted tree; no line of
    the output keeps it (PUD's empty nodes kept DEPS pointing into the cleared graph)."""
    sents = read_conllu(DATA / "mini.conllu")   # s2 holds the empty node 5.1 with DEPS 2:conj
    out = tmp_path / "pred.conllu"
    write_conllu(sents, [s.heads for s in sents], out)
    rows = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()
            if line and not line.startswith("#")]
    assert rows and all(cols[8] == "_" for cols in rows)
    assert not any("." in cols[0] for cols in rows)   # no empty node without its graph
    parsed = conllu.parse(out.read_text(encoding="utf-8"))   # still valid CoNLL-U, same words and heads
    assert [[t["form"] for t in s if isinstance(t["id"], int)] for s in parsed] == [s.words for s in sents]
