"""Every docstring example (``>>>``) in the library runs as written (the ``--doctest-modules``
of issue 17, over library modules only: never setup.py, tests, benchmarks or tools).

The examples run in one folder that holds what they name, built once on tiny stand-ins:

* ``bert-base-uncased/``: the tiny random BERT of the test suite (a local folder wins over a
  hub name), so ``load_model("bert-base-uncased")`` and ``ModelSpec("bert-base-uncased")`` run;
* ``en_pud-ud-test.conllu``: three gold sentences (those of ``tests/data/mini.conllu``);
* ``pud-store/``: the impact store of that corpus, every layer (``pmask impact``);
* ``pud.conllu``: the trees parsed from that store (``pmask parse``);
* ``mbert-pud/``: a ``pmask bench`` output directory on the same corpus;
* ``tests/data/``: the test data (``read_conllu("tests/data/mini.conllu")``).

An example that still cannot run there (standard input, a GPU, torchrun, a whole
treebank folder) carries ``# doctest: +SKIP``.
"""
from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

from test_structure import MODULES

TESTS = Path(__file__).resolve().parent
WITH_EXAMPLES = sorted(name for name, path in MODULES.items()
                       if ">>>" in path.read_text(encoding="utf-8") and not name.endswith("__main__"))
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@pytest.fixture(scope="session")
def example_folder(tmp_path_factory, tiny_bert_dir) -> Path:
    """The folder the examples run in (module docstring)."""
    from pmask.cli import main

    folder = tmp_path_factory.mktemp("examples")
    (folder / "bert-base-uncased").symlink_to(Path(tiny_bert_dir).resolve())
    (folder / "tests").mkdir()
    (folder / "tests" / "data").symlink_to(TESTS / "data")
    gold = (TESTS / "data" / "mini.conllu").read_text(encoding="utf-8").split("\n\n")
    (folder / "en_pud-ud-test.conllu").write_text("\n\n".join(gold[:3]) + "\n\n", encoding="utf-8")
    for command in (["impact", "en_pud-ud-test.conllu", "--model", "bert-base-uncased", "--layers", "all",
                     "-o", "pud-store"],
                    ["parse", "pud-store", "-o", "pud.conllu"],
                    ["bench", "en_pud-ud-test.conllu", "--model", "bert-base-uncased", "-o", "mbert-pud"]):
        with pytest.MonkeyPatch.context() as patch:
            patch.chdir(folder)
            assert main([*command, "-q"]) == 0, command
    return folder


def test_the_examples_of_every_library_module_are_found():
    assert len(WITH_EXAMPLES) > 40 and "pmask.trees.registry" in WITH_EXAMPLES
    not_library = (["tests"], ["benchmarks"], ["tools"], ["setup"])
    assert not [name for name in WITH_EXAMPLES if name.split(".")[1:2] in not_library]


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_docstring_examples_run(name, example_folder, monkeypatch):
    monkeypatch.chdir(example_folder)
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report: list[str] = []
    tests = doctest.DocTestFinder().find(module, name)
    for test in tests:
        runner.run(test, out=report.append)
    assert sum(len(t.examples) for t in tests) > 0, f"{name}: its '>>>' lines are not in any docstring"
    assert runner.failures == 0, "".join(report)
