"""Issue 27, item 3: an unfinished store (interrupted, or being written right now) is not read as if it
were the whole corpus: readers refuse it in one line that says how much it holds, who is writing it
and the ``pmask impact … --resume`` that finishes it, or, when told to, warn and record the coverage."""
from __future__ import annotations

import json
import logging
import os
import socket
from dataclasses import replace

import pytest

from pmask.common.command_line import spell_command
from pmask.common.errors import SettingError, StoreError, UnfinishedStoreError
from pmask.corpora import Sentence
from pmask.corpora.corpus_spec import CorpusSpec
from pmask.perturb.engine.impact_settings import ImpactSettings
from pmask.perturb.source import ImpactSource
from pmask.perturb.store import CorpusInfo, ImpactStore, StoreWriter, read_manifest
from pmask.perturb.store.lock import WRITER_NOTE, current_writer
from pmask.perturb.store.parts import write_part
from pmask.perturb.store.state import check_finished, resume_settings, store_state

from store_fakes import SETTINGS, _fake, _sentences


def _add(w, sents, k):
    w.add(k, sents[k].id, sents[k].words, **_fake(k, len(sents[k].words)))


def _unfinished(path, sents, done=(0, 1, 2), corpus_path=None, selection=None):
    corpus = CorpusInfo.of(sents, corpus_path, selection)
    with StoreWriter.open(path, SETTINGS, corpus, shard_size=2) as w:
        for k in done:
            _add(w, sents, k)
    return path


def test_an_interrupted_store_is_refused_with_its_counts_and_the_command_that_finishes_it(tmp_path):
    sents = _sentences()
    st = _unfinished(tmp_path / "st", sents)
    with pytest.raises(UnfinishedStoreError) as err:
        check_finished(st)
    text = err.value.render({"allow_incomplete": "--allow-incomplete"})
    assert "unfinished store: it holds 3 of 5 sentences" in text and "its run was interrupted" in text
    assert f"finish it with: pmask impact CORPUS --limit 5 --model fake-model --layers 1,-1 -o {st} --resume" in text
    assert "give --allow-incomplete to use the 3 sentences it holds" in text and "\n" not in text
    assert isinstance(err.value, StoreError) and isinstance(err.value, SettingError)


def test_reading_it_anyway_warns_once_and_says_what_it_covers(tmp_path, caplog):
    st = _unfinished(tmp_path / "st", _sentences())
    with caplog.at_level(logging.WARNING):
        state = check_finished(st, allow_incomplete=True)
    assert state.coverage() == {"store": str(st), "complete": False, "sentences": 3, "of": 5}
    assert len(caplog.records) == 1 and "using the 3 of 5 sentences it holds" in caplog.text
    assert "--resume" in caplog.text


def test_a_complete_store_passes_silently(tmp_path, caplog):
    sents = _sentences()
    st = _unfinished(tmp_path / "st", sents, done=range(5))
    with caplog.at_level(logging.WARNING):
        assert check_finished(st).complete and not caplog.records


def test_a_store_being_written_names_its_writer_and_does_not_suggest_resume(tmp_path):
    sents = _sentences()
    with StoreWriter.open(tmp_path / "st", SETTINGS, CorpusInfo.of(sents), shard_size=1) as w:
        _add(w, sents, 0)
        _add(w, sents, 1)                       # two shards written and listed; the run goes on
        assert current_writer(w.path).writing is True
        with pytest.raises(UnfinishedStoreError) as err:
            check_finished(w.path)
        text = str(err.value)
        assert "it holds 2 of 5 sentences" in text
        assert f"pmask pid {os.getpid()} on host {socket.gethostname()}" in text and "is writing it now" in text
        assert "wait for that run to finish" in text and "--resume" not in text
        assert store_state(w.path).describe().startswith("unfinished: 2 of 5 sentences (pmask pid")
    assert not (tmp_path / "st" / WRITER_NOTE).exists()
    assert current_writer(tmp_path / "st").writing is False
    assert "its run was interrupted" in store_state(tmp_path / "st").describe()


def test_the_note_of_a_killed_writer_is_stale_and_one_from_another_host_is_uncertain(tmp_path):
    st = _unfinished(tmp_path / "st", _sentences())
    note = {"pid": 999999, "host": socket.gethostname(), "since": "2026-01-01T00:00:00+00:00"}
    (st / WRITER_NOTE).write_text(json.dumps(note), encoding="utf-8")   # what a SIGKILL leaves behind
    assert current_writer(st).writing is False
    assert "its run was interrupted" in str(pytest.raises(UnfinishedStoreError, check_finished, st).value)
    (st / WRITER_NOTE).write_text(json.dumps({**note, "host": "elsewhere"}), encoding="utf-8")
    text = str(pytest.raises(UnfinishedStoreError, check_finished, st).value)
    assert "pmask pid 999999 on host elsewhere" in text and "may still be writing it" in text
    assert "if that run has ended, finish the store with: pmask impact" in text


def test_a_new_writer_replaces_a_stale_note(tmp_path):
    sents = _sentences()
    st = _unfinished(tmp_path / "st", sents)
    (st / WRITER_NOTE).write_text('{"pid": 1, "host": "gone"}', encoding="utf-8")
    with StoreWriter.open(st, SETTINGS, CorpusInfo.of(sents), resume=True) as w:
        assert json.loads((st / WRITER_NOTE).read_text())["pid"] == os.getpid()
        for k in w.remaining:
            _add(w, sents, k)
    assert check_finished(st).complete and not (st / WRITER_NOTE).exists()


def test_a_fresh_store_folder_with_only_a_stale_note_is_started_afresh(tmp_path):
    sents = _sentences()
    (tmp_path / "st").mkdir()
    (tmp_path / "st" / WRITER_NOTE).write_text('{"pid": 1}', encoding="utf-8")   # killed before the manifest
    _unfinished(tmp_path / "st", sents, done=range(5))   # no resume needed: nothing was stored
    assert ImpactStore.open(tmp_path / "st").complete


def test_sentences_left_in_index_parts_of_a_killed_torchrun_run_are_counted(tmp_path):
    sents = _sentences()
    st = _unfinished(tmp_path / "st", sents, done=(0,))
    write_part(st, 1, [], [{"index": 3, "id": sents[3].id, "n": 4, "shard": "shard-00009.safetensors"},
                           {"index": 0, "id": sents[0].id, "n": 10, "key": "s0"}])
    state = store_state(st)
    assert state.unmerged == 1 and "1 more are in index parts" in state.refusal()


def test_the_resume_command_spells_every_setting_that_is_not_the_default(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("a b\nc d e\n", encoding="utf-8")
    settings = replace(SETTINGS, model="random:bert-base-uncased",
                       impact=ImpactSettings("cos", "first", "text", "pair", 0), layers="all", dtype="bfloat16")
    sents = [Sentence(id="1", words=["a", "b"]), Sentence(id="2", words=["c", "d", "e"])]
    with StoreWriter.open(tmp_path / "my store", settings, CorpusInfo.of(sents, corpus, {"format": "conllu",
                          "limit": 2, "max_words": 30})):
        pass
    command = spell_command("impact", resume_settings(tmp_path / "my store", read_manifest(tmp_path / "my store")))
    assert command == (f"pmask impact {corpus} --format conllu --limit 2 --max-words 30 --model "
                       f"random:bert-base-uncased --metric cos --subword first --tokenize text --dtype bfloat16 "
                       f"--layers all -o '{tmp_path / 'my store'}' --resume")


def test_negative_layers_are_not_taken_for_a_flag(tmp_path):
    sents = _sentences()
    settings = replace(SETTINGS, layers=(-2,))
    with StoreWriter.open(tmp_path / "st", settings, CorpusInfo.of(sents)):
        pass
    assert "--layers=-2 -o" in spell_command("impact", resume_settings(tmp_path / "st", read_manifest(tmp_path / "st")))


def test_an_unfinished_store_whose_sentences_are_not_the_first_ones_is_read_by_position(tmp_path):
    """Ranks of a torchrun run each finish their own sentences: the store can hold 0, 2 and 4 of 5."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("".join(f"w{k} x y\n" for k in range(5)), encoding="utf-8")
    spec = CorpusSpec(corpus, "text")
    sents = spec.read()
    _unfinished(tmp_path / "st", sents, done=(0, 2, 4), corpus_path=corpus, selection=spec.record())
    with pytest.raises(UnfinishedStoreError):
        ImpactSource.open(CorpusSpec(tmp_path / "st"))
    source = ImpactSource.open(CorpusSpec(tmp_path / "st"), allow_incomplete=True)
    assert [s.words[0] for s in source.sentences] == ["w0", "w2", "w4"] and source.positions == [0, 2, 4]
    assert all(impact is not None for impact in source.impacts(-1))
    assert source.coverage == {"store": str(tmp_path / "st"), "complete": False, "sentences": 3, "of": 5}


@pytest.mark.parametrize("metric, spelled", [("dist", " --metric dist"), ("prob", "")])
def test_the_resume_command_leaves_out_what_the_resolver_chooses_for_its_model(tmp_path, metric, spelled):
    """The bundled model records prob as its metric: a store of it made with dist must say so (left out, the
    resumed run would choose prob and be refused), one made with prob need not."""
    settings = replace(SETTINGS, model="pmask-tiny-en", impact=ImpactSettings(metric, "avg", "words", "pair", 0))
    sents = _sentences()
    with StoreWriter.open(tmp_path / "st", settings, CorpusInfo.of(sents)):
        pass
    command = spell_command("impact", resume_settings(tmp_path / "st", read_manifest(tmp_path / "st")))
    assert command == (f"pmask impact CORPUS --limit 5 --model pmask-tiny-en{spelled} --layers 1,-1 "
                       f"-o {tmp_path / 'st'} --resume")
