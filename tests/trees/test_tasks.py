"""The registry's per-task table: which decoder runs when none is named and which baselines are
reported where; every name in it is a registered decoder of its own task."""
from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

import pytest

from pmask.common.errors import DecodeError
from pmask.common.options import TASKS
from pmask.trees import tasks
from pmask.trees.registry import DECODERS, decoder_names
from pmask.trees.tasks import TASK_TABLE, TaskInfo, check_tasks, task_info


def test_every_task_has_one_entry_naming_its_own_decoders():
    assert tuple(TASK_TABLE) == TASKS
    for name, task in TASK_TABLE.items():
        assert task.name == name and task_info(name) is task
        assert all(DECODERS[d].task == name and not DECODERS[d].baseline for d in task.default_decoders)
        assert all(DECODERS[d].task == name and DECODERS[d].baseline for d in task.short_baselines)
        assert task.primary_baseline in task.short_baselines
        assert task.baselines == decoder_names(name, baseline=True)
    assert task_info("dependency").default_decoder == "eisner"
    assert task_info("constituency").default_decoder == "mart"


def test_unknown_task_is_a_one_line_error():
    with pytest.raises(DecodeError, match="unknown task 'semantic' .known: dependency, constituency"):
        task_info("semantic")


@pytest.mark.parametrize("change, problem", [
    ({"default_decoders": ("mart",)}, "mart"),                          # another task's decoder
    ({"default_decoders": ("right-chain",)}, "right-chain"),            # a baseline is no default
    ({"short_baselines": ("right-chain", "no-such")}, "no-such"),       # unregistered
    ({"primary_baseline": "random-cle"}, "defaults or primary"),        # not among the short ones
    ({"default_decoders": ()}, "defaults or primary"),
])
def test_a_table_naming_other_decoders_is_refused(change, problem):
    bad = dict(TASK_TABLE)
    bad["dependency"] = replace(TASK_TABLE["dependency"], **change)
    with pytest.raises(ValueError, match=problem):
        check_tasks(MappingProxyType(bad))


def test_a_table_missing_a_task_is_refused():
    with pytest.raises(ValueError, match="not the tasks"):
        check_tasks({"dependency": TASK_TABLE["dependency"]})


def test_task_info_reads_the_one_table(monkeypatch):
    other = TaskInfo("dependency", ("cle",), ("left-chain",), "left-chain")
    monkeypatch.setattr(tasks, "TASK_TABLE", MappingProxyType({**TASK_TABLE, "dependency": other}))
    assert task_info("dependency") is other
