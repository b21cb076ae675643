"""pmask owns its output: what a checkpoint lacks is said in pmask's words (-q silent, -vv in
full), bars only on a terminal, each summary once on stderr, short model names in tables and
titles, and --threads."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from pmask.cli import main
from pmask.perturb.testing import make_tiny_bert

TEXT = """# sent_id = a1
1\tThe\tthe\tDET\t_\t_\t2\tdet\t_\t_
2\tnew\tnew\tADJ\t_\t_\t3\tamod\t_\t_
3\tbank\tbank\tNOUN\t_\t_\t0\troot\t_\t_
4\t.\t.\tPUNCT\t_\t_\t3\tpunct\t_\t_

# sent_id = a2
1\tShe\tshe\tPRON\t_\t_\t2\tnsubj\t_\t_
2\twalked\twalk\tVERB\t_\t_\t0\troot\t_\t_
3\thome\thome\tADV\t_\t_\t2\tadvmod\t_\t_
4\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\t_

"""


@pytest.fixture(scope="module")
def encoder_only_dir(tmp_path_factory) -> Path:
    return make_tiny_bert(tmp_path_factory.mktemp("encoder_only") / "tiny-encoder", mlm_head=False)


@pytest.fixture()
def gold(tmp_path) -> Path:
    path = tmp_path / "gold.conllu"
    path.write_text(TEXT, encoding="utf-8")
    return path


def run(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_prob_with_an_encoder_only_checkpoint_is_refused_before_any_output(gold, encoder_only_dir, tmp_path, capsys):
    for extra in ([], ["--store", tmp_path / "store"]):
        code, out, err = run(capsys, "parse", gold, "--model", encoder_only_dir, "--metric", "prob", "-q", *extra,
                             "-o", tmp_path / "p.conllu")
        assert code == 1 and out == ""
        assert err.count("\n") == 1 and err.startswith("pmask: error: metric 'prob' needs a trained masked-LM head")
        assert "dist or cos" in err and not (tmp_path / "p.conllu").exists() and not (tmp_path / "store").exists()


def test_load_report_is_pmasks_one_line_silent_under_q_in_full_under_vv(gold, encoder_only_dir, tmp_path, capsys):
    out_file = tmp_path / "p.conllu"
    code, out, err = run(capsys, "parse", gold, "--model", encoder_only_dir, "-o", out_file)
    assert code == 0 and "[transformers]" not in err and "LOAD REPORT" not in err and "\x1b" not in err
    notes = [line for line in err.splitlines() if "encoder-only" in line]
    assert len(notes) == 1 and notes[0].startswith("pmask: model ") and "dist and cos" in notes[0]
    meta = json.loads(Path(f"{out_file}.meta.json").read_text(encoding="utf-8"))
    assert meta["model"]["loaded"] == {"encoder": True, "mlm_head": False}
    assert meta["model"]["checkpoint_class"] == "BertModel" and meta["model"]["name"] == str(encoder_only_dir)
    code, out, err = run(capsys, "parse", gold, "--model", encoder_only_dir, "-q", "-o", tmp_path / "q.conllu")
    assert code == 0 and err == ""
    code, out, err = run(capsys, "parse", gold, "--model", encoder_only_dir, "-vv", "-o", tmp_path / "v.conllu")
    assert code == 0 and "LOAD REPORT" in err and "cls.predictions.bias" in err and "\x1b" not in err


def test_no_bars_off_a_terminal_and_each_summary_once_on_stderr(gold, tiny_bert_dir, tmp_path, capsys):
    """stderr is not a terminal here: no bar; each summary line once, on stderr (issue 27: stdout is for data)."""
    store = tmp_path / "store"
    code, out, err = run(capsys, "parse", gold, "--model", tiny_bert_dir, "--store", store, "-o", tmp_path / "p.conllu")
    assert code == 0 and "\r" not in err and "sent/s" not in err
    assert out == "" and err.count("dependency trees") == 1 and "wrote" not in err
    code, out, err = run(capsys, "report", tmp_path / "p.conllu", "--gold", gold, "--store", store,
                         "-o", tmp_path / "r.html")
    assert code == 0 and out == "" and err.count("wrote") == 1
    code, out, err = run(capsys, "heatmap", store, "--sentence", "all", "-o", tmp_path / "maps")
    assert code == 0 and out == "" and err.count("wrote") == 1 and "\r" not in err
    code, out, err = run(capsys, "bench", gold, "--model", tiny_bert_dir, "--layers", "1", "--decoders", "eisner",
                         "-o", tmp_path / "bench")
    assert code == 0 and "\r" not in err and "wrote" not in err and err.count("bench:") == 1
    assert out.count("| treebank |") == 1   # the best settings (the summary went to stderr)


def test_tables_and_titles_name_the_model_briefly(gold, tiny_bert_dir, tmp_path, capsys):
    pred = tmp_path / "p.conllu"
    assert run(capsys, "parse", gold, "--model", tiny_bert_dir, "--metric", "cos", "-q", "-o", pred)[0] == 0
    short = Path(tiny_bert_dir).name
    code, out, _ = run(capsys, "eval", pred, "--gold", gold)
    assert code == 0 and f"eisner ({short}, cos, layer 3)" in out and str(tiny_bert_dir) not in out
    assert run(capsys, "report", pred, "--gold", gold, "-o", tmp_path / "r.html")[0] == 0
    assert f"<title>pmask report: p.conllu · {short}, cos, layer 3</title>" in (tmp_path / "r.html").read_text()
    code, out, _ = run(capsys, "sweep", gold, "--model", tiny_bert_dir, "--layers", "1,3", "-q",
                       "--json", tmp_path / "s.json")
    assert code == 0 and f"model: {short} · metric: dist" in out and str(tiny_bert_dir) not in out
    assert json.loads((tmp_path / "s.json").read_text())["meta"]["model"] == str(tiny_bert_dir)  # full path kept
    code, out, _ = run(capsys, "bench", gold, "--model", f"random:{tiny_bert_dir}", "--layers", "1", "-q",
                       "-o", tmp_path / "bench")
    assert code == 0
    assert (tmp_path / "bench" / "results.md").read_text().startswith(f"# pmask bench: random:{short}, dist\n")


def test_threads_option(gold, tiny_bert_dir, tmp_path, capsys):
    code, out, _ = run(capsys, "parse", "--help")
    assert code == 0 and "--threads N" in out and "fewer threads" in out
    assert run(capsys, "parse", gold, "--model", tiny_bert_dir, "--threads", "0", "-o", tmp_path / "x")[0] == 2
    before = torch.get_num_threads()
    try:
        code, _, _ = run(capsys, "parse", gold, "--model", tiny_bert_dir, "--threads", "1", "-q",
                         "-o", tmp_path / "p.conllu")
        assert code == 0 and torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
