"""A command is one module of ``pmask.cli.commands`` registered in ``COMMANDS`` (issue 32, item 3; one registry
shape, issue 46): the parser, the checks before any work and the Ctrl-C line derive from it, so a command
registered as the modules register theirs is parsed, checked and interrupted like the others."""
from __future__ import annotations

import argparse
import ast
import re
import shlex
from pathlib import Path

import pytest

from pmask.cli import main
from pmask.cli.commands import COMMANDS
from pmask.cli.commands.command import NOTHING, Command
from pmask.cli.dispatch import build_parser
from pmask.cli.outcome import Outcome
from pmask.common.command_line import spell_command
from pmask.common.errors import SettingError

COMMANDS_DIR = Path(__file__).resolve().parents[3] / "cli" / "commands"


def _fake(ran: list, *, check=None, interrupted=None, run=None) -> Command:
    """``pmask hello NAME -o FILE``: writes a greeting; records in ``ran`` that its run was called."""

    def add_arguments(p: argparse.ArgumentParser) -> None:
        p.add_argument("name")
        p.add_argument("-o", "--output", type=Path, required=True)

    def greet(args: argparse.Namespace) -> Outcome:
        ran.append(args.name)
        args.output.write_text(f"hello {args.name}\n", encoding="utf-8")
        return Outcome(table=f"hello {args.name}")

    extra = {k: v for k, v in (("check", check), ("interrupted", interrupted)) if v is not None}
    return Command("hello", help="say hello", description="Say hello to NAME.", epilog="example:\n  pmask hello x",
                   add_arguments=add_arguments, run=run or greet, **extra)


def test_pmask_help_lists_the_registered_commands_in_their_order(capsys):
    assert main(["--help"]) == 0
    listed = re.findall(r"^ {4}(\w+) ", capsys.readouterr().out, flags=re.M)
    assert listed == list(COMMANDS)


def test_a_registered_command_is_parsed_and_run_like_the_others(tmp_path, capsys):
    ran: list[str] = []
    with COMMANDS.registered(_fake(ran)):
        assert main(["--help"]) == 0
        listed = capsys.readouterr().out
        assert re.search(r"\n +info +what an impact store holds[^\n]*\n(?: {10,}[^\n]*\n)* +hello +say hello\n", listed)
        assert main(["hello", "world", "-o", str(tmp_path / "out.txt")]) == 0
    assert ran == ["world"] and capsys.readouterr().out == "hello world\n"
    assert main(["hello", "world", "-o", str(tmp_path / "out.txt")]) == 2   # the real registry has no hello


def test_its_outputs_and_its_own_check_run_before_its_work(tmp_path, capsys):
    ran: list[str] = []
    with COMMANDS.registered(_fake(ran)):
        assert main(["hello", "x", "-o", str(tmp_path / "missing" / "out.txt")]) == 1
    assert "pmask: error:" in capsys.readouterr().err and ran == []   # its -o, checked as every output is

    def refuse(args: argparse.Namespace) -> None:
        raise SettingError(f"{{output}} {args.output.name}: no greetings today")

    with COMMANDS.registered(_fake(ran, check=refuse)):
        assert main(["hello", "x", "-o", str(tmp_path / "out.txt")]) == 1
    assert capsys.readouterr().err == "pmask: error: --output out.txt: no greetings today\n"
    assert ran == [] and not (tmp_path / "out.txt").exists()


def test_its_interrupt_message_is_used(tmp_path, capsys):
    def stop(args: argparse.Namespace) -> Outcome:
        raise KeyboardInterrupt

    with COMMANDS.registered(_fake([], run=stop, interrupted=lambda args: f"interrupted: said hello to {args.name}")):
        assert main(["hello", "x", "-o", str(tmp_path / "out.txt")]) == 130
    assert capsys.readouterr().err == "pmask: interrupted: said hello to x\n"
    with COMMANDS.registered(_fake([], run=stop)):
        assert main(["hello", "x", "-o", str(tmp_path / "out.txt")]) == 130
    assert capsys.readouterr().err == f"pmask: {NOTHING}\n"   # the default: outputs are written whole


def test_shared_code_names_no_command():
    """No per-command if-chains outside the command modules: dispatch and the cli package compare
    no ``args.command`` with a name."""
    cli = COMMANDS_DIR.parent
    names = set(COMMANDS)
    for path in [cli / "__init__.py", cli / "dispatch.py", COMMANDS_DIR / "command.py", COMMANDS_DIR / "shared.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                constants = {c.value for c in ast.walk(node) if isinstance(c, ast.Constant)}
                assert not constants & names, f"{path.name}:{node.lineno}"


def test_the_resume_line_of_a_store_is_a_pmask_impact_command_that_gives_its_settings_back():
    """The store layer gives the settings (data); common.command_line spells them; the real parser
    reads the spelling back to the same settings (a renamed flag would break the resume line)."""
    settings = {"input": "my corpus.conllu", "format": "ptb", "limit": 5, "max_words": 30, "model": "random:bert",
                "probe": "single", "metric": "cos", "subword": "first", "tokenize": "text", "dtype": "bfloat16",
                "layers": [-2, 3], "output": "st/", "resume": True}
    line = spell_command("impact", settings)
    assert line == ("pmask impact 'my corpus.conllu' --format ptb --limit 5 --max-words 30 --model random:bert "
                    "--probe single --metric cos --subword first --tokenize text --dtype bfloat16 --layers=-2,3 "
                    "-o st/ --resume")
    args = build_parser().parse_args(shlex.split(line)[1:])
    assert args.command == "impact" and args.layers == [-2, 3]
    got = {name: getattr(args, name) for name in settings if name != "layers"}
    assert {k: str(v) for k, v in got.items() if k in ("input", "output")} == {"input": "my corpus.conllu",
                                                                            "output": "st"}
    assert {k: v for k, v in got.items() if k not in ("input", "output")} == {
        k: v for k, v in settings.items() if k not in ("input", "output", "layers")}


@pytest.mark.parametrize("layers", ["all", [-1, 0]])
def test_layers_as_the_store_records_them_are_read_back(layers):
    args = build_parser().parse_args(shlex.split(spell_command("impact", {"input": "c", "layers": layers,
                                                                            "output": "s"}))[1:])
    assert args.layers == layers


MINI_CORPUS = Path(__file__).resolve().parents[2] / "data" / "mini.conllu"


@pytest.mark.parametrize("command, args", [
    ("impact", ["-o", "{tmp}/store"]), ("parse", ["-o", "{tmp}/p.conllu"]), ("sweep", []),
    ("heatmap", ["--sentence", "1", "-o", "{tmp}/h.png"]), ("bench", ["-o", "{tmp}/bench"])])
def test_each_command_reads_its_corpus_once(command, args, tiny_bert_dir, tmp_path, monkeypatch):
    """Issue 46 item 5: a command reads its corpus once and passes the sentences on (impact read it three times,
    parse, sweep and bench twice: the root of the standard-input bug of e9b7c40)."""
    from pmask.corpora import _util

    reads: list[Path] = []
    real = _util._read_bytes

    def counted(path):
        reads.append(Path(path))
        return real(path)

    monkeypatch.setattr(_util, "_read_bytes", counted)
    given = [a.format(tmp=tmp_path) for a in args]
    assert main([command, str(MINI_CORPUS), "--model", str(tiny_bert_dir), "--limit", "2", "-q", *given]) == 0
    assert reads.count(MINI_CORPUS) == 1, reads
