"""Issue 39, item 4: inputs that cannot fit the model's window are refused before any model work, in one
line naming the window; a run that would skip every sentence never ends with an empty output and exit 0.

The window of the tiny test model is read here from its ``config.json`` (``max_position_embeddings``),
never from pmask."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pmask.cli import main


def window_of(model_dir: Path) -> int:
    return json.loads((Path(model_dir) / "config.json").read_text(encoding="utf-8"))["max_position_embeddings"]


def conllu(path: Path, sentences: list[list[str]]) -> Path:
    blocks = []
    for k, words in enumerate(sentences):
        lines = [f"# sent_id = s{k}"] + [f"{i}\t{w}\t{w}\tX\tX\t_\t{0 if i == 1 else 1}\tdep\t_\t_"
                                         for i, w in enumerate(words, 1)]
        blocks.append("\n".join(lines))
    path.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    return path


@pytest.fixture()
def twelve(tmp_path) -> Path:
    """7 sentences of 12 one-piece words (84 words): any context of N words makes inputs of >= N + 2 tokens."""
    return conllu(tmp_path / "twelve.conllu", [["the", "news", "was", "home"] * 3] * 7)


@pytest.fixture()
def no_model_work(monkeypatch):
    """Loading a model, or running one, fails the test: the refusals come first."""
    import pmask.perturb.probes as probes
    from pmask.perturb.models import load

    def forbidden(*args, **kwargs):
        raise AssertionError("model work before the refusal")

    monkeypatch.setattr(load, "load_model", forbidden)
    monkeypatch.setattr(probes, "probe_matrices", forbidden)


def errors(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("pmask: error:")]


@pytest.mark.parametrize("command", ["parse", "impact"])
def test_a_context_larger_than_the_window_is_refused_before_the_model_loads(command, twelve, tmp_path, capsys,
                                                                            tiny_bert_dir, no_model_work):
    window = window_of(tiny_bert_dir)   # 64
    out = tmp_path / ("p.conllu" if command == "parse" else "st")
    code = main([command, str(twelve), "--model", str(tiny_bert_dir), "--metric", "cpmi", "--context",
                 str(window - 1), "-o", str(out)])
    err = capsys.readouterr().err
    (line,) = errors(err)
    assert code == 1 and not out.exists() and "Traceback" not in err
    assert f"--context {window - 1} needs inputs of at least {window + 1} tokens" in line
    assert f"takes at most {window} (max_position_embeddings" in line and f"--context {window - 2} or less" in line


def test_no_input_fits_with_its_context_refused_before_any_forward_pass(twelve, tmp_path, capsys, tiny_bert_dir,
                                                                       monkeypatch):
    import pmask.perturb.probes as probes

    def forbidden(*args, **kwargs):
        raise AssertionError("a forward pass before the refusal")

    monkeypatch.setattr(probes, "probe_matrices", forbidden)
    window = window_of(tiny_bert_dir)
    for command, out in (("parse", tmp_path / "p.conllu"), ("impact", tmp_path / "st")):
        # 62 words of context: every input holds 72 words (all 6 neighbours) plus 2 or 3 special tokens
        code = main([command, str(twelve), "--model", str(tiny_bert_dir), "--metric", "cpmi", "--context",
                     str(window - 2), "-o", str(out)])
        (line,) = errors(capsys.readouterr().err)
        assert code == 1 and not out.exists(), command
        assert f"no sentence fits model {tiny_bert_dir}'s window of {window} tokens" in line
        assert f"with --context {window - 2}: all 7 inputs hold 74 to 75 tokens" in line


def test_a_run_in_which_every_sentence_is_too_long_is_refused(tmp_path, capsys, tiny_bert_dir):
    """Without context: it used to write an empty tree file (every sentence "skipped (too long)") and exit 0."""
    window = window_of(tiny_bert_dir)
    corpus = conllu(tmp_path / "long.conllu", [["the"] * (window + 1), ["news"] * (window + 5)])
    out = tmp_path / "p.conllu"
    code = main(["parse", str(corpus), "--model", str(tiny_bert_dir), "-o", str(out)])
    (line,) = errors(capsys.readouterr().err)
    assert code == 1 and not out.exists()
    assert f"window of {window} tokens (its maximum positions): all 2 inputs hold {window + 3} to {window + 7}" in line


def test_one_sentence_that_fits_is_enough(tmp_path, capsys, tiny_bert_dir):
    window = window_of(tiny_bert_dir)
    corpus = conllu(tmp_path / "mixed.conllu", [["the"] * (window + 1), ["news", "was", "home"]])
    out = tmp_path / "p.conllu"
    assert main(["parse", str(corpus), "--model", str(tiny_bert_dir), "-o", str(out)]) == 0
    assert "1 dependency tree, 1 skipped (too long): s0" in capsys.readouterr().err


def test_the_window_bound_is_read_without_loading_the_model(tiny_bert_dir, tiny_roberta_dir):
    from pmask.perturb.fill.window import window_bound

    assert window_bound(str(tiny_bert_dir))[0] == window_of(tiny_bert_dir)
    assert window_bound(f"random:{tiny_bert_dir}")[0] == window_of(tiny_bert_dir)
    # RoBERTa's position table is 2 longer than its window: a bound, never a refusal of what fits
    assert window_bound(str(tiny_roberta_dir))[0] >= 64
    assert window_bound("no/such/model") is None
