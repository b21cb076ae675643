"""Issue 37: the cost line of documents of EDUs. The pair probe over a document of U units runs U(U+1)/2 inputs
(one input with {i, j} masked serves F[i][j] and F[j][i]), U = its EDUs, plus the [CLS] unit a store and
``--faithful`` mask like an EDU; ``--faithful`` without a store computes on the EDU texts as Wu et al.'s reader
leaves them. The old line counted a document by the word-level pair formula (1 + n + n(n-1)/2) on the clean
texts whatever the route. Every expectation is computed here: the SciDTB JSON read by the test, each EDU
tokenised alone by the tokenizer itself."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from pmask.cli import main

SCIDTB = Path(__file__).resolve().parents[2] / "data" / "scidtb"
LINE = re.compile(r"pmask: (\d+) (?:document|sentence)s? to compute: ([\d,]+) sequences, ([\d,]+) tokens, "
                  r"about .+ on this machine")
ENGINE = re.compile(r"\((\d+) sequences, (\d+) tokens")


def _edus(authors: bool) -> list[list[str]]:
    """Each fixture document's EDU texts (files by name, node 0 = ROOT left out): clean (the trailing ``<S>`` and
    outer spaces gone) or as the authors' reader leaves them (``<S>`` removed only where the raw text ends with it)."""
    docs = []
    for path in sorted(SCIDTB.glob("*.dep")):
        nodes = json.loads(path.read_text(encoding="utf-8-sig"))["root"][1:]
        texts = [n["text"] for n in nodes]
        if authors:
            docs.append([t[:-3] if t.endswith("<S>") else t for t in texts])
        else:
            docs.append([t.strip().removesuffix("<S>").strip() for t in texts])
    return docs


def _expected(tiny_dir: Path, docs: list[list[str]], cls_unit: bool) -> tuple[int, int, int]:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(tiny_dir))
    sequences = tokens = 0
    for edus in docs:
        units = len(edus) + cls_unit
        length = 2 + sum(len(tok(e, add_special_tokens=False)["input_ids"]) for e in edus)   # [CLS] … [SEP]
        sequences += units * (units + 1) // 2
        tokens += units * (units + 1) // 2 * length
    return len(docs), sequences, tokens


def _line(err: str) -> tuple[int, int, int]:
    found = LINE.search(err)
    assert found, err
    return int(found[1]), int(found[2].replace(",", "")), int(found[3].replace(",", ""))


@pytest.fixture(scope="module")
def doc_model(tmp_path_factory):
    """A tiny random BERT whose vocabulary holds the fixtures' words (and ``<``, ``s``, ``>``), 128 positions."""
    from pmask.perturb.testing import make_tiny_bert

    words = sorted({w.lower() for doc in _edus(True) for e in doc for w in re.findall(r"\w+|[^\w\s]", e)})
    return make_tiny_bert(tmp_path_factory.mktemp("docbert"), words, max_positions=128, seed=5)


@pytest.mark.parametrize("route, flags, cls_unit, authors", [
    ("parse", [], False, False),                         # in memory, clean: the EDUs alone
    ("parse", ["--faithful", "--decoder", "eisner"], True, True),   # the [CLS] unit, the authors' texts
    ("impact", [], True, False),                         # a store: the [CLS] unit, the clean texts
])
def test_the_dry_run_counts_documents_by_their_units(doc_model, tmp_path, capsys, route, flags, cls_unit, authors):
    out = tmp_path / ("st" if route == "impact" else "x.conllu")
    code = main([route, str(SCIDTB), "--model", str(doc_model), *flags, "--dry-run", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert not out.exists()
    assert _line(err) == _expected(doc_model, _edus(authors), cls_unit)
    assert "3 documents to compute" in err


def test_the_line_matches_the_engine_after_a_real_run(doc_model, tmp_path, capsys):
    store = tmp_path / "st"
    code = main(["parse", str(SCIDTB), "--model", str(doc_model), "--store", str(store), "-o",
                 str(tmp_path / "x.conllu")])
    err = capsys.readouterr().err
    assert code == 0, err
    counted = _line(err)
    assert counted == _expected(doc_model, _edus(False), True)
    done = ENGINE.search(err)   # the engine's own counters, after the work
    assert done and (int(done[1]), int(done[2])) == counted[1:], err
    assert err.index("to compute:") < err.index("computing ")   # said before the model ran


def test_a_resumed_store_counts_only_the_documents_it_lacks(doc_model, tmp_path, capsys):
    corpus = tmp_path / "gold"
    shutil.copytree(SCIDTB, corpus)
    store = tmp_path / "st"
    assert main(["impact", str(corpus), "--model", str(doc_model), "--limit", "1", "-q", "-o", str(store)]) == 0
    capsys.readouterr()
    code = main(["impact", str(corpus), "--model", str(doc_model), "--resume", "--dry-run", "-o", str(store)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert _line(err) == _expected(doc_model, _edus(False)[1:], True)


def test_a_sentence_as_long_as_the_model_is_counted_and_a_longer_one_left_out_and_named(tiny_bert_dir):
    """The cost count's boundary (issue 47 item 15, a planted bug no test caught: ``>`` made ``>=``): a sentence
    whose input is exactly ``max_length`` long runs and is counted, a longer one is left out (as the engine does)
    and named (issue 47 item 4). The input lengths are counted here with the tokenizer."""
    from transformers import AutoTokenizer

    from pmask.corpora import Sentence
    from pmask.perturb.probes.cost import estimate

    tok = AutoTokenizer.from_pretrained(str(tiny_bert_dir))
    fits = Sentence(id="fits", words=["the", "cat", "sat", "on", "the", "mat"])
    longer = Sentence(id="longer", words=fits.words + ["."])
    length = 2 + sum(len(tok(w, add_special_tokens=False)["input_ids"]) for w in fits.words)
    assert 2 + sum(len(tok(w, add_special_tokens=False)["input_ids"]) for w in longer.words) > length
    got = estimate([fits, longer], "pair", "dist", tok, tokenize="words", context=0, max_length=length)
    n = len(fits.words)
    assert (got.sentences, got.sequences, got.tokens) == (1, 1 + n + n * (n - 1) // 2, (1 + n + n * (n - 1) // 2)
                                                          * length)
    assert got.too_long == ("longer",) and got.describe().endswith(
        "; 1 sentence too long for the model is left out: longer")


# ---------------------------------------------------------------------------- a causal model's own readings

PUD = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "ud" / "UD_English-PUD" / "en_pud-ud-test.conllu"


@pytest.fixture(scope="module")
def causal_model(tmp_path_factory):
    """A tiny random Llama whose tokenizer puts ``<s>`` in front of a text itself."""
    from pmask.perturb.testing.llm_zoo import make_tiny_llm

    return make_tiny_llm("llama", tmp_path_factory.mktemp("llama"))


@pytest.mark.skipif(not PUD.is_file(), reason="shared PUD data not present")
@pytest.mark.parametrize("probe, metric, per_sentence", [
    ("pair", "cpmi", lambda n: n),                        # one input per source word (but the last) + the clean one
    ("single", "dist", lambda n: n),
    ("pair", "dist", lambda n: n + n * (n - 1) // 2),     # each word hidden, each pair
])
def test_the_dry_run_counts_a_causal_models_inputs(causal_model, tmp_path, capsys, probe, metric, per_sentence):
    from transformers import AutoTokenizer

    from pmask.corpora import read_corpus

    tok = AutoTokenizer.from_pretrained(str(causal_model))
    sentences = read_corpus(PUD, limit=3)
    sequences = sum(per_sentence(len(s.words)) for s in sentences)
    tokens = sum(per_sentence(len(s.words)) * len(tok(list(s.words), is_split_into_words=True)["input_ids"])
                 for s in sentences)
    store = tmp_path / "st"
    args = ["impact", str(PUD), "--limit", "3", "--model", str(causal_model), "--probe", probe, "--metric", metric,
            "--layers", "-1", "-o", str(store)]
    assert main([*args, "--dry-run"]) == 0
    assert _line(capsys.readouterr().err) == (3, sequences, tokens) and not store.exists()
    assert main(args) == 0
    err = capsys.readouterr().err
    done = ENGINE.search(err)   # the engine's own counters, after the work
    assert done and (int(done[1]), int(done[2])) == (sequences, tokens), err
