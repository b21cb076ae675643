"""The tasks (``pmask.trees.tasks``): what differs between the kinds of tree is asked of the task entry (its
tree's field, its writer and reader, its headline score, its default decoders and baselines), and a made-up
task registered there alone keeps the tasks' contract and is looked up like the others (every entry's contract:
``tests/entry_checks.py``)."""
from __future__ import annotations

from dataclasses import replace

import pytest

from pmask.common.errors import DecodeError
from pmask.corpora.sentence import Sentence
from pmask.trees.registry import DECODERS
from pmask.trees.tasks import TASKS, corpus_task, plain_task, task_entry

from entry_checks import check_entry


def test_an_unknown_task_is_a_one_line_error():
    with pytest.raises(DecodeError) as info:
        task_entry("semantic")
    assert str(info.value) == f"unknown task 'semantic' (choose from {', '.join(TASKS)})"


def test_a_corpus_s_task_is_the_first_whose_tree_its_sentences_hold():
    heads = Sentence(id="1", words=["a", "b"], heads=[2, 0])
    words = Sentence(id="2", words=["a", "b"])
    assert corpus_task([heads]) == next(t.name for t in TASKS.values() if t.tree_of(heads) is not None)
    assert corpus_task([words]) == corpus_task([]) == next(iter(TASKS))   # no tree: the first task
    assert plain_task().read is not None


def test_a_task_entry_that_names_other_decoders_breaks_the_contract():
    dependency = task_entry(DECODERS["eisner"].task)
    other = DECODERS["mart"].name   # a decoder of another task
    with pytest.raises(AssertionError):
        check_entry("task", replace(dependency, default_decoders=(other,)))
    with pytest.raises(AssertionError):
        check_entry("task", replace(dependency, primary_baseline="random-cle"))   # not among its short ones


def test_a_registered_task_stands_in_for_the_shipped_one():
    dependency = task_entry(DECODERS["eisner"].task)
    other = replace(dependency, default_decoders=("cle",), short_baselines=("left-chain",),
                    primary_baseline="left-chain")
    with TASKS.registered(other):
        check_entry("task", other)
        assert task_entry(dependency.name) is other and list(TASKS) == list(TASKS)
    assert task_entry(dependency.name) is dependency
