"""Issue 39, item 11, and issue 46 item 5 (the estimator in the library, ``pmask.estimate``): the cost of a run
before its model work (sentences, forward sequences, tokens,
rough time), and ``--dry-run`` (that line alone: nothing loaded but the tokenizer, nothing written).
Every expectation is computed here from the corpus file and the tokenizer, not by pmask."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from pmask.cli import main

MINI = Path(__file__).resolve().parents[2] / "data" / "mini.conllu"
LINE = re.compile(r"pmask: (\d+) sentences? to compute: ([\d,]+) sequences, ([\d,]+) tokens, about .+ on this machine")


def _sentences(path: Path) -> list[list[str]]:
    """The words of each sentence: integer-ID lines only (no multiword ranges, no empty nodes)."""
    out: list[list[str]] = [[]]
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            out.append([])
        elif not line.startswith("#") and line.split("\t")[0].isdigit():
            out[-1].append(line.split("\t")[1])
    return [s for s in out if s]


def _lengths(tiny_dir: Path, sentences: list[list[str]]) -> list[int]:
    """Each sentence's model input: every word tokenised alone, plus [CLS] and [SEP]."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(tiny_dir))
    return [2 + sum(len(tok(w, add_special_tokens=False)["input_ids"]) for w in s) for s in sentences]


def _pair(n: int) -> int:   # the unmasked input, each word masked, each pair masked (Wu et al. 2020)
    return 1 + n + n * (n - 1) // 2


def _expected(tiny_dir: Path, sentences: list[list[str]], per_sentence) -> tuple[int, int]:
    lengths = _lengths(tiny_dir, sentences)
    seqs = [per_sentence(len(s)) for s in sentences]
    return sum(seqs), sum(q * t for q, t in zip(seqs, lengths))


def _line(err: str) -> tuple[int, int, int]:
    found = LINE.search(err)
    assert found, err
    return int(found[1]), int(found[2].replace(",", "")), int(found[3].replace(",", ""))


def test_parse_dry_run_counts_the_pair_probe_and_writes_nothing(tiny_bert_dir, tmp_path, capsys):
    out = tmp_path / "x.conllu"
    code = main(["parse", str(MINI), "--model", str(tiny_bert_dir), "--dry-run", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert not out.exists() and not Path(str(out) + ".meta.json").exists()
    sentences = _sentences(MINI)
    assert _line(err) == (len(sentences), *_expected(tiny_bert_dir, sentences, _pair))
    assert "dry run: nothing was computed or written" in err


def test_the_line_comes_before_model_work_and_matches_the_engine(tiny_bert_dir, tmp_path, capsys):
    store = tmp_path / "st"
    code = main(["parse", str(MINI), "--model", str(tiny_bert_dir), "--store", str(store), "-o",
                 str(tmp_path / "x.conllu")])
    err = capsys.readouterr().err
    assert code == 0, err
    n, seqs, tokens = _line(err)
    done = re.search(r"\((\d+) sequences, (\d+) tokens", err)   # the engine's own counters, after the work
    assert done and (int(done[1]), int(done[2])) == (seqs, tokens), err
    assert err.index("to compute:") < err.index("computing ")   # said before the model ran


def test_a_resumed_store_counts_only_what_is_left(tiny_bert_dir, tmp_path, capsys):
    store = tmp_path / "st"
    assert main(["impact", str(MINI), "--model", str(tiny_bert_dir), "--limit", "2", "-q", "-o", str(store)]) == 0
    capsys.readouterr()
    code = main(["impact", str(MINI), "--model", str(tiny_bert_dir), "--resume", "--dry-run", "-o", str(store)])
    err = capsys.readouterr().err
    assert code == 0, err
    left = _sentences(MINI)[2:]
    assert _line(err) == (len(left), *_expected(tiny_bert_dir, left, _pair))


def test_bench_sums_its_probes(tiny_bert_dir, tmp_path, capsys):
    out = tmp_path / "bench"
    code = main(["bench", str(MINI), "--model", str(tiny_bert_dir), "--probes", "pair,single", "--dry-run",
                 "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert not out.exists()
    sentences = _sentences(MINI)
    pair, single = _expected(tiny_bert_dir, sentences, _pair), _expected(tiny_bert_dir, sentences, lambda n: n + 1)
    assert _line(err) == (2 * len(sentences), pair[0] + single[0], pair[1] + single[1])


# ---------------------------------------------------------------------------- records too long (issue 47 item 4)

SCIDTB = Path(__file__).resolve().parents[2] / "data" / "scidtb"


def test_a_document_longer_than_the_model_is_refused_by_the_dry_run_naming_it(tmp_path, capsys):
    """A document is never truncated nor left out: the dry run names it and fails, as the run does before any
    model work (the dry run used to count the other documents and exit 0, the run to refuse after loading)."""
    from pmask.perturb.testing import make_tiny_bert

    words = sorted({w for path in SCIDTB.glob("*.dep") for w in re.findall(r"\w+|[^\w\s]", path.read_text().lower())})
    small = make_tiny_bert(tmp_path / "small", words, max_positions=12)
    for flags in (["--dry-run"], []):
        code = main(["parse", str(SCIDTB), "--model", str(small), *flags, "-o", str(tmp_path / "x.conllu")])
        err = capsys.readouterr().err
        assert code == 1 and "exceed the 12 positions of" in err and "pmask never truncates a document" in err, err
        assert "to compute" not in err and "computing" not in err and len(err.strip().splitlines()) == 1, err


def test_the_dry_run_names_the_sentences_too_long_for_the_model(tmp_path, capsys):
    from pmask.perturb.testing import make_tiny_bert

    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat\n" + " ".join(["the cat sat on the mat"] * 4) + "\n", encoding="utf-8")
    small = make_tiny_bert(tmp_path / "small", max_positions=12)
    code = main(["parse", str(corpus), "--model", str(small), "--dry-run", "-o", str(tmp_path / "x.conllu")])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "pmask: 1 sentence to compute: 7 sequences" in err and "1 sentence too long for the model is left out: 2" \
        in err, err


def test_pmask_estimate_says_what_parse_would_compute(tiny_bert_dir, capsys):
    """``pmask.estimate`` (issue 46 item 5) counts what ``pmask parse --dry-run`` says for the same sentences and
    settings, its refusals are ``pmask.parse``'s, and it loads no weights."""
    import pmask
    from pmask.common.errors import SettingError

    sentences = _sentences(MINI)
    got = pmask.estimate(sentences, model=str(tiny_bert_dir))
    assert (got.sentences, got.sequences, got.tokens) == (len(sentences), *_expected(tiny_bert_dir, sentences, _pair))
    single = pmask.estimate(sentences, model=str(tiny_bert_dir), probe="single")
    assert single.sequences == _expected(tiny_bert_dir, sentences, lambda n: n + 1)[0]
    assert got.describe().startswith(f"{len(sentences)} sentences to compute")
    with pytest.raises(SettingError, match="probe distortion takes"):
        pmask.estimate(sentences, model=str(tiny_bert_dir), probe="distortion", metric="dist")
