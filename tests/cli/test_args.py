"""Flags that several commands take are defined once (``pmask.cli.args``) and behave the same in
every command; error messages name settings by the flags the parser knows (issue 17)."""
from __future__ import annotations

import argparse
import ast
from pathlib import Path

import pytest

from pmask.cli import build_parser, main
from pmask.cli.args import option_names

CLI = Path(__file__).resolve().parents[2] / "cli"
#: Flags that several commands take, with one meaning: spelled in cli/args.py alone.
SHARED = {"--punct", "--seed", "--json", "--csv", "--store", "--corpus", "--output", "--gold"}
#: The same name with another meaning: report's --store names a store to draw (parse and sweep
#: cache impacts in theirs); heatmap's optional --gold adds arcs to a map (eval and report score).
OTHER_MEANING = {("report", "--store"), ("heatmap", "--gold"), ("info", "--json")}  # info: print as JSON


def commands() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def spelled_in(path: Path) -> set[str]:
    """The flags that ``path`` passes to ``add_argument`` itself."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
            found.update(a.value for a in node.args if isinstance(a, ast.Constant) and str(a.value).startswith("-"))
    return found


def test_shared_flags_are_spelled_in_the_option_groups_only():
    assert spelled_in(CLI / "args.py") >= SHARED
    own = {(path.stem, flag) for path in (CLI / "commands").glob("*.py") for flag in spelled_in(path) & SHARED}
    assert own == OTHER_MEANING   # each command module spells a shared flag only where it means another thing
    assert spelled_in(CLI / "dispatch.py") == {"--version"}   # the top-level parser's own
    for path in sorted(CLI.glob("*.py")):
        if path.name not in ("args.py", "dispatch.py"):
            assert not spelled_in(path), path


def _signature(action: argparse.Action, with_help: bool) -> tuple:
    return (type(action).__name__, action.dest, action.default, action.type, tuple(action.choices or ()),
            action.required) + ((action.help, action.metavar) if with_help else ())


@pytest.mark.parametrize("flag", sorted(SHARED))
def test_a_shared_flag_means_the_same_in_every_command(flag):
    found = {}
    for name, parser in commands().items():
        for action in parser._actions:
            if flag in action.option_strings and (name, flag) not in OTHER_MEANING:
                found[name] = _signature(action, with_help=flag != "--output")   # -o says what it writes
    assert len(found) >= 2 and len(set(found.values())) == 1, found


def test_each_command_takes_the_shared_flags_it_needs():
    want = {"impact": {"--output"}, "parse": {"--seed", "--store", "--corpus", "--output"},
            "eval": {"--gold", "--punct", "--seed", "--json", "--csv"}, "heatmap": {"--output"},
            "sweep": {"--punct", "--seed", "--store", "--corpus", "--json", "--csv"}, "export": {"--output"},
            "report": {"--gold", "--punct", "--output"}, "bench": {"--punct", "--seed", "--output"},
            "info": set()}
    for name, parser in commands().items():
        flags = {o for a in parser._actions for o in a.option_strings}
        assert want[name] <= flags, name
        if "--output" in flags:
            assert "-o" in flags


def test_settings_in_error_messages_are_named_by_their_flags(tmp_path, capsys):
    names = option_names(build_parser())
    old = {"root": "--root", "faithful": "--faithful", "model": "--model", "corpus": "--corpus",
           "sentence": "--sentence", "layer": "--layer", "layers": "--layers", "decoder": "--decoder",
           "metric": "--metric", "subword": "--subword", "limit": "--limit", "max_words": "--max-words",
           "resume": "--resume", "overwrite": "--overwrite", "multiroot": "--multiroot", "store": "--store",
           "punct": "--punct", "output": "--output"}
    assert {k: names[k] for k in old} == old
    corpus = tmp_path / "c.txt"
    corpus.write_text("a b c\n", encoding="utf-8")
    code = main(["parse", str(corpus), "--decoder", "right-chain", "--faithful", "-o", str(tmp_path / "o.conllu")])
    last = capsys.readouterr().err.splitlines()[-1]
    assert code == 1 and last == ("pmask: error: --faithful with probe pair is the authors' pipeline, whose decoder is "
                                  "eisner, cle, mst-projective or mst, not right-chain")
