"""ImpactSource with a cache store and no model: impact settings left unset take the store's own,
settings given explicitly must match it (never silently replaced by the store's)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from resolved import spec_of

from pmask.common.errors import SettingError
from pmask.corpora.corpus_spec import CorpusSpec
from pmask.perturb.engine.impact_settings import ImpactSettings
from pmask.perturb.fill.model_spec import ModelSpec
from pmask.perturb.fill.stores import build_store
from pmask.perturb.source import ImpactSource
from pmask.pipeline.request import Request, prepare

MINI = CorpusSpec(Path(__file__).resolve().parents[1] / "data" / "mini.conllu", limit=2)


@pytest.fixture(scope="module")
def cos_text_store(tiny_bert_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("cache") / "st"
    build_store(MINI, spec_of(str(tiny_bert_dir), metric="cos", tokenize="text", device="cpu"), out, layers=[-1],
                progress=False)
    return out


def test_unset_settings_take_the_cache_stores_own(cos_text_store):
    source = ImpactSource.open(MINI, store=cos_text_store, progress=False)
    assert all(item is not None for item in source.impacts(-1))
    assert source.impact_settings() == {"metric": "cos", "subword": "avg", "tokenize": "text", "probe": "pair",
                                        "context": 0}


@pytest.mark.parametrize("impact, name", [(ImpactSettings("dist", None, None, "pair", 0), "metric"),
                                          (ImpactSettings(None, None, "words", "pair", 0), "tokenize")])
def test_explicit_settings_must_match_the_cache_store(cos_text_store, impact, name):
    source = ImpactSource.open(MINI, model=ModelSpec(impact=impact), store=cos_text_store, progress=False)
    with pytest.raises(SettingError, match=f"{name} .* conflicts with the store"):
        list(source.impacts(-1))


def test_a_corpus_and_a_model_use_the_defaults(tiny_bert_dir):
    """The source chooses nothing (issue 46 item 1): it computes with what the resolver chose for it."""
    source = ImpactSource.open(MINI, model=ModelSpec(str(tiny_bert_dir), device="cpu"), progress=False)
    prepare(Request(source.model_spec), source, decodes=False)
    assert source.impact_settings() == {"metric": "dist", "subword": "avg", "tokenize": "words", "probe": "pair",
                                        "context": 0}


# ------------------------------------------- a finished cache store that lacks sentences asked for (issue 39, item 3)

def _blocks(path: Path) -> list[list[list[str]]]:
    """The word lines (integer ID, split into columns) of each sentence of a CoNLL-U file, read by hand."""
    text = path.read_text(encoding="utf-8").strip()
    return [[cols for cols in (line.split("\t") for line in block.splitlines()) if cols[0].isdigit()]
            for block in text.split("\n\n")]


def _cli(args: list, capsys) -> tuple[int, list[str]]:
    from pmask.cli import main

    code = main([str(a) for a in args])
    return code, capsys.readouterr().err.strip().splitlines()


def test_a_store_made_for_fewer_sentences_is_refused_without_a_model(tiny_bert_dir, tmp_path, capsys):
    """It used to give 2 trees + 1 "skipped (too long)" and exit 0; now one line, before any work, naming the fix."""
    store, out = tmp_path / "st", tmp_path / "p3.conllu"
    assert _cli(["parse", MINI.path, "--model", tiny_bert_dir, "--limit", 2, "--store", store, "-q",
                 "-o", tmp_path / "p2.conllu"], capsys)[0] == 0
    manifest = (store / "manifest.json").read_bytes()
    code, err = _cli(["parse", MINI.path, "--limit", 3, "--store", store, "-o", out], capsys)
    errors = [line for line in err if line.startswith("pmask: error:")]
    assert code == 1 and len(errors) == 1 and not out.exists() and not Path(f"{out}.meta.json").exists()
    assert "holds 2 of the 3 sentences asked for (it was made with --limit 2)" in errors[0]
    assert f"give --model {tiny_bert_dir} to compute the other 1 into it" in errors[0] and "too long" not in errors[0]
    assert (store / "manifest.json").read_bytes() == manifest   # nothing was written
    code, _ = _cli(["parse", MINI.path, "--model", tiny_bert_dir, "--limit", 3, "--store", store, "-q", "-o", out],
                   capsys)
    gold = _blocks(MINI.path)[:3]
    assert code == 0 and [len(s) for s in _blocks(out)] == [len(s) for s in gold]   # the store was extended
    assert all(cols[6].isdigit() for s in _blocks(out) for cols in s)


def test_a_store_made_by_the_default_model_is_extended_by_it(tmp_path, capsys):
    """The cache's contract: rerunning a command without ``--model`` continues with the model that made it."""
    store, out = tmp_path / "st", tmp_path / "p3.conllu"
    assert _cli(["parse", MINI.path, "--limit", 2, "--store", store, "-q", "-o", tmp_path / "p2.conllu"],
                capsys)[0] == 0
    code, err = _cli(["parse", MINI.path, "--limit", 3, "--store", store, "-o", out], capsys)
    trees = _blocks(out)
    assert code == 0 and f"{out}: 3 dependency trees" in err[-1] and "skipped" not in err[-1]
    assert [len(s) for s in trees] == [len(s) for s in _blocks(MINI.path)[:3]]
    assert all(cols[6].isdigit() for s in trees for cols in s)   # no HEAD "_"
    assert len(json.loads((store / "manifest.json").read_text(encoding="utf-8"))["sentences"]) == 3
