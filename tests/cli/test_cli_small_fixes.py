"""Issue 18, defect 8 (small ones): a closed pipe is not an error; ``eval --details`` groups by universal
relation as the README and the report do."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import pmask
from pmask.cli import main

DATA = Path(__file__).resolve().parents[1] / "data"


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


def test_eval_details_group_by_universal_relation(tmp_path, capsys):
    gold = tmp_path / "gold.conllu"
    gold.write_text("# sent_id = s1\n"
                    "1\tmy\tmy\tPRON\t_\t_\t2\tnmod:poss\t_\t_\n"
                    "2\tcat\tcat\tNOUN\t_\t_\t3\tnsubj\t_\t_\n"
                    "3\tsat\tsit\tVERB\t_\t_\t0\troot\t_\t_\n"
                    "4\there\there\tADV\t_\t_\t3\tnmod\t_\t_\n\n", encoding="utf-8")
    assert main(["eval", str(gold), "--gold", str(gold), "--details"]) == 0
    out = capsys.readouterr().out
    assert "nmod:poss" not in out
    line = next(row for row in out.splitlines() if row.strip().startswith("nmod "))
    assert "2/2" in line.replace(" ", "")
