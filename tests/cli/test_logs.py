"""Issue 27, item 2: standard output carries only a command's data; every message goes to stderr.

``-o -``, ``--json -`` and ``--csv -`` put exactly that file on stdout (it parses as its format and
holds nothing else, no summary line, no Markdown table); a command writing files leaves stdout
empty; ``-q`` means only errors, so a successful ``-q`` run writes nothing to stderr.
"""
from __future__ import annotations

import csv
import io
import json
import logging
import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Callable

import conllu
import pytest
import torch

import pmask
from pmask.cli import main
from pmask.corpora.brackets import from_brackets
from pmask.perturb.testing import make_tiny_bert

DATA = Path(__file__).resolve().parents[1] / "data"
CONLLU = DATA / "mini.conllu"   # 5 sentences
MRG = DATA / "mini.mrg"         # 4 trees


@pytest.fixture(scope="module")
def work(tmp_path_factory, tiny_bert_dir) -> Path:
    """A folder with ``store`` (impacts of mini.conllu, layers 1-3) and ``pred.conllu`` (right-chain)."""
    folder = tmp_path_factory.mktemp("stdout")
    assert main(["impact", str(CONLLU), "--model", str(tiny_bert_dir), "--layers", "all", "-q",
                 "-o", str(folder / "store")]) == 0
    assert main(["parse", str(CONLLU), "--decoder", "right-chain", "-q", "-o", str(folder / "pred.conllu")]) == 0
    return folder


def run(capsys, work: Path, model: Path, argv: list[str]) -> tuple[int, str, str]:
    """``main`` on ``argv`` with ``{work}``/``{model}`` filled in; (exit code, stdout, stderr)."""
    code = main([a.format(work=work, model=model, conllu=CONLLU, mrg=MRG) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------------------- format checks (the whole text)

def conllu_sentences(text: str) -> int:
    for line in text.splitlines():   # every line a comment, a word line or a sentence break
        assert line == "" or line.startswith("#") or line.count("\t") == 9, f"not CoNLL-U: {line!r}"
    return len(conllu.parse(text))


def bracket_trees(text: str) -> int:
    lines = text.splitlines()
    for line in lines:
        assert line.startswith("(") and line.endswith(")"), f"not a bracketed tree: {line!r}"
        from_brackets(line)
    return len(lines)


def json_value(text: str) -> int:
    value = json.loads(text)   # fails on anything before or after the document
    lists = [value[key] for key in ("rows", "sentences") if isinstance(value.get(key), list)]
    return len(lists[0]) if lists else 0


def csv_rows(text: str) -> int:
    rows = list(csv.reader(io.StringIO(text)))
    assert rows and all(len(row) == len(rows[0]) for row in rows), f"not one CSV table: {text!r}"
    return len(rows) - 1


def html_page(text: str) -> int:
    assert text.lstrip().lower().startswith("<!doctype html>") and text.rstrip().endswith("</html>"), text[-200:]
    HTMLParser().feed(text)
    return 1


Case = tuple[list[str], Callable[[str], int], int]

TO_STDOUT: dict[str, Case] = {
    "parse corpus -o -": (["parse", "{conllu}", "--decoder", "right-chain", "-o", "-"], conllu_sentences, 5),
    "parse store -o -": (["parse", "{work}/store", "--decoder", "eisner", "-o", "-"], conllu_sentences, 5),
    "parse model -o -": (["parse", "{conllu}", "--model", "{model}", "--decoder", "cle", "-o", "-"],
                         conllu_sentences, 5),
    "parse ptb -o -": (["parse", "{mrg}", "--decoder", "right-branching", "-o", "-"], bracket_trees, 4),
    "eval --json -": (["eval", "{work}/pred.conllu", "--gold", "{conllu}", "--json", "-"], json_value, 1),
    "eval --details --json -": (["eval", "{work}/pred.conllu", "--gold", "{conllu}", "--baselines", "--details",
                                 "--json", "-"], json_value, 7),
    "eval --csv -": (["eval", "{work}/pred.conllu", "--gold", "{conllu}", "--csv", "-"], csv_rows, 1),
    "sweep --json -": (["sweep", "{work}/store", "--layers", "1,2", "--json", "-"], json_value, 2),
    "sweep --csv -": (["sweep", "{conllu}", "--model", "{model}", "--layers", "1,2", "--csv", "-"], csv_rows, 2),
    "export json -o -": (["export", "{work}/store", "--format", "json", "-o", "-"], json_value, 5),
    "report -o -": (["report", "{work}/pred.conllu", "--gold", "{conllu}", "-o", "-"], html_page, 1),
    "info --json": (["info", "{work}/store", "--json"], json_value, 0),
}


@pytest.mark.parametrize("quiet", [False, True], ids=["default", "-q"])
@pytest.mark.parametrize("name", list(TO_STDOUT))
def test_stdout_holds_only_the_data_asked_for(name, quiet, work, tiny_bert_dir, capsys):
    argv, parse, expected = TO_STDOUT[name]
    code, out, err = run(capsys, work, tiny_bert_dir, argv + (["-q"] if quiet else []))
    assert code == 0, err
    assert parse(out) == expected, out[-300:]
    if quiet:
        assert err == "", f"-q means only errors, got {err!r}"
    else:
        assert "error" not in err and "Traceback" not in err, err


def test_summary_lines_and_a_displaced_table_go_to_stderr(work, capsys):
    code, out, err = run(capsys, work, Path(), ["parse", "{conllu}", "--decoder", "right-chain", "-o", "-"])
    assert code == 0 and "dependency trees" not in out and "pmask: -: 5 dependency trees" in err
    code, out, err = run(capsys, work, Path(), ["eval", "{work}/pred.conllu", "--gold", "{conllu}", "--json", "-"])
    # the table is shown on stderr instead
    assert code == 0 and json.loads(out)["uas"] >= 0 and "**Dependency comparison**" in err
    code, out, err = run(capsys, work, Path(), ["export", "{work}/store", "--format", "json", "-o", "-"])
    assert code == 0 and "wrote" not in out and "pmask: wrote 1 file to -" in err


TO_FILES: dict[str, list[str]] = {
    "impact": ["impact", "{conllu}", "--model", "{model}", "-o", "{work}/new-store"],
    "parse": ["parse", "{work}/store", "-o", "{work}/p.conllu"],
    "heatmap": ["heatmap", "{work}/store", "--sentence", "0", "-o", "{work}/s.svg"],
    "sweep --plot --json": ["sweep", "{work}/store", "--layers", "1,2", "--plot", "{work}/l.svg", "--json",
                            "{work}/l.json"],
    "export": ["export", "{work}/store", "--format", "csv", "-o", "{work}/csv"],
    "report": ["report", "{work}/pred.conllu", "--gold", "{conllu}", "-o", "{work}/r.html"],
    "bench": ["bench", "{conllu}", "--model", "{model}", "--layers", "1", "--decoders", "eisner", "--limit", "2",
              "-o", "{work}/bench"],
}


@pytest.mark.parametrize("quiet", [False, True], ids=["default", "-q"])
@pytest.mark.parametrize("name", list(TO_FILES))
def test_a_command_writing_files_leaves_stdout_empty(name, quiet, work, tiny_bert_dir, capsys):
    argv = TO_FILES[name] + (["--overwrite"] if name == "impact" else [])
    code, out, err = run(capsys, work, tiny_bert_dir, argv + (["-q"] if quiet else []))
    assert code == 0, err
    tables = {"sweep --plot --json": "**Layer sweep**", "bench": "# pmask bench"}   # a table on the terminal is data
    assert out == "" if name not in tables else out.startswith(tables[name]), out[:200]
    if quiet:
        assert err == "", f"-q means only errors, got {err!r}"
    else:
        assert err.startswith("pmask: ") and any(word in err for word in ("wrote", "trees", "computed")), err


def test_quiet_hides_warnings_too(tmp_path, capsys):
    argv = ["parse", str(CONLLU), "--format", "text", "--decoder", "right-chain", "--root", "free"]
    assert main(argv + ["-o", str(tmp_path / "a.conllu")]) == 0
    assert "looks like CoNLL-U" in capsys.readouterr().err
    assert main(argv + ["-q", "-o", str(tmp_path / "b.conllu")]) == 0
    assert capsys.readouterr().err == ""


def test_main_in_process_leaves_the_logging_set_up_as_it_was(tmp_path):
    """A notebook or test calling ``main(... -q)`` keeps its own log level and handlers afterwards."""
    root = logging.getLogger()
    before = root.level, root.handlers[:], logging.getLogger("transformers").level
    assert main(["parse", str(CONLLU), "--decoder", "right-chain", "-q", "-o", str(tmp_path / "p.conllu")]) == 0
    assert (root.level, root.handlers, logging.getLogger("transformers").level) == before


@pytest.mark.parametrize("argv, flags", [
    (["eval", "{work}/pred.conllu", "--gold", "{conllu}", "--json", "-", "--csv", "-"], "--json and --csv"),
    (["sweep", "{work}/store", "--json", "-", "--csv", "-"], "--json and --csv"),
])
def test_two_outputs_on_stdout_are_refused(argv, flags, work, capsys):
    code, out, err = run(capsys, work, Path(), argv)
    assert code == 1 and out == "" and err.startswith("pmask: error: ") and err.count("\n") == 1, err
    assert flags in err and "standard output" in err


def test_a_plot_on_stdout_is_refused_before_any_model_work(tmp_path, capsys, monkeypatch):
    from pmask.perturb.fill import model_spec

    monkeypatch.setattr(model_spec.ModelSpec, "load", lambda self: pytest.fail("the model was loaded"))
    code = main(["sweep", str(CONLLU), "--model", str(tmp_path), "--plot", "-"])
    out, err = capsys.readouterr()
    assert code == 1 and out == "" and err.startswith("pmask: error: -: ") and err.count("\n") == 1, err
    assert ".png" in err


# -------------------------------------- pmask owns its output: a checkpoint's load report, bars, summaries, model names

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


def run_args(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_prob_with_an_encoder_only_checkpoint_is_refused_before_any_output(gold, encoder_only_dir, tmp_path, capsys):
    for extra in ([], ["--store", tmp_path / "store"]):
        code, out, err = run_args(capsys, "parse", gold, "--model", encoder_only_dir, "--metric", "prob", "-q", *extra,
                             "-o", tmp_path / "p.conllu")
        assert code == 1 and out == ""
        assert err.count("\n") == 1 and err.startswith("pmask: error: metric 'prob' needs a trained masked-LM head")
        assert "dist or cos" in err and not (tmp_path / "p.conllu").exists() and not (tmp_path / "store").exists()


def test_cpmi_with_an_encoder_only_checkpoint_is_one_line_naming_cpmi(gold, encoder_only_dir, tmp_path, capsys):
    code, out, err = run_args(capsys, "parse", gold, "--model", encoder_only_dir, "--metric", "cpmi",
                              "-o", tmp_path / "p.conllu")
    said = [line for line in err.splitlines() if line.startswith("pmask:") and not line.startswith("pmask: read")
            and "to compute:" not in line]   # the cost line, said before the model is looked at
    assert code == 1 and out == "" and len(said) == 1, err
    assert said[0].startswith("pmask: error: metric 'cpmi' needs a trained masked-LM head") and "'prob'" not in err


def test_load_report_is_pmasks_one_line_silent_under_q_in_full_under_vv(gold, encoder_only_dir, tmp_path, capsys):
    out_file = tmp_path / "p.conllu"
    code, out, err = run_args(capsys, "parse", gold, "--model", encoder_only_dir, "-o", out_file)
    assert code == 0 and "[transformers]" not in err and "LOAD REPORT" not in err and "\x1b" not in err
    notes = [line for line in err.splitlines() if "encoder-only" in line]
    assert len(notes) == 1 and notes[0].startswith("pmask: model ") and "dist and cos" in notes[0]
    meta = json.loads(Path(f"{out_file}.meta.json").read_text(encoding="utf-8"))
    assert meta["model"]["loaded"] == {"encoder": True, "mlm_head": False}
    assert meta["model"]["checkpoint_class"] == "BertModel" and meta["model"]["name"] == str(encoder_only_dir)
    code, out, err = run_args(capsys, "parse", gold, "--model", encoder_only_dir, "-q", "-o", tmp_path / "q.conllu")
    assert code == 0 and err == ""
    code, out, err = run_args(capsys, "parse", gold, "--model", encoder_only_dir, "-vv", "-o", tmp_path / "v.conllu")
    assert code == 0 and "LOAD REPORT" in err and "cls.predictions.bias" in err and "\x1b" not in err


def test_no_bars_off_a_terminal_and_each_summary_once_on_stderr(gold, tiny_bert_dir, tmp_path, capsys):
    """stderr is not a terminal here: no bar; each summary line once, on stderr (issue 27: stdout is for data)."""
    store = tmp_path / "store"
    code, out, err = run_args(capsys, "parse", gold, "--model", tiny_bert_dir, "--store", store,
                              "-o", tmp_path / "p.conllu")
    assert code == 0 and "\r" not in err and "sent/s" not in err
    assert out == "" and err.count("dependency trees") == 1 and "wrote" not in err
    code, out, err = run_args(capsys, "report", tmp_path / "p.conllu", "--gold", gold, "--store", store,
                         "-o", tmp_path / "r.html")
    assert code == 0 and out == "" and err.count("wrote") == 1
    code, out, err = run_args(capsys, "heatmap", store, "--sentence", "all", "-o", tmp_path / "maps")
    assert code == 0 and out == "" and err.count("wrote") == 1 and "\r" not in err
    code, out, err = run_args(capsys, "bench", gold, "--model", tiny_bert_dir, "--layers", "1", "--decoders", "eisner",
                         "-o", tmp_path / "bench")
    assert code == 0 and "\r" not in err and "wrote" not in err and err.count("bench:") == 1
    assert out.count("| treebank |") == 1   # the best settings (the summary went to stderr)


def test_tables_and_titles_name_the_model_briefly(gold, tiny_bert_dir, tmp_path, capsys):
    pred = tmp_path / "p.conllu"
    assert run_args(capsys, "parse", gold, "--model", tiny_bert_dir, "--metric", "cos", "-q", "-o", pred)[0] == 0
    short = Path(tiny_bert_dir).name
    code, out, _ = run_args(capsys, "eval", pred, "--gold", gold)
    assert code == 0 and f"eisner ({short}, cos, layer 3)" in out and str(tiny_bert_dir) not in out
    assert run_args(capsys, "report", pred, "--gold", gold, "-o", tmp_path / "r.html")[0] == 0
    assert f"<title>pmask report: p.conllu · {short}, cos, layer 3</title>" in (tmp_path / "r.html").read_text()
    code, out, _ = run_args(capsys, "sweep", gold, "--model", tiny_bert_dir, "--layers", "1,3", "-q",
                       "--json", tmp_path / "s.json")
    assert code == 0 and f"model: {short} · metric: dist" in out and str(tiny_bert_dir) not in out
    assert json.loads((tmp_path / "s.json").read_text())["meta"]["model"] == str(tiny_bert_dir)  # full path kept
    code, out, _ = run_args(capsys, "bench", gold, "--model", f"random:{tiny_bert_dir}", "--layers", "1", "-q",
                       "-o", tmp_path / "bench")
    assert code == 0
    assert (tmp_path / "bench" / "results.md").read_text().startswith(f"# pmask bench: random:{short}, dist\n")


def test_threads_option(gold, tiny_bert_dir, tmp_path, capsys):
    code, out, _ = run_args(capsys, "parse", "--help")
    assert code == 0 and "--threads N" in out and "fewer threads" in out
    assert run_args(capsys, "parse", gold, "--model", tiny_bert_dir, "--threads", "0", "-o", tmp_path / "x")[0] == 2
    before = torch.get_num_threads()
    try:
        code, _, _ = run_args(capsys, "parse", gold, "--model", tiny_bert_dir, "--threads", "1", "-q",
                         "-o", tmp_path / "p.conllu")
        assert code == 0 and torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def _env() -> dict[str, str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    package = Path(pmask.__file__).resolve().parent
    if package.name == "pmask":   # this checkout, not whatever pmask is installed
        env["PYTHONPATH"] = os.pathsep.join([str(package.parent), env.get("PYTHONPATH", "")])
    return env


@pytest.mark.parametrize("args", [
    ["parse", str(DATA / "mini.conllu"), "--decoder", "right-chain", "-o", "-"],   # written through open_output
    ["eval", str(DATA / "mini.conllu"), "--gold", str(DATA / "mini.conllu"), "--details"],   # print()
])
def test_a_reader_that_closes_the_pipe_is_not_an_error(args):
    proc = subprocess.Popen([sys.executable, "-m", "pmask", *args, "-q"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=_env())
    proc.stdout.close()   # like `| head` that has read enough: every write pmask makes meets a closed pipe
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0, err
    assert err == ""
