"""One request for the CLI and the API (issue 38 item 1, issue 39 item 12): every default is chosen by
:func:`pmask.pipeline.request.resolve`, in one order, whoever builds the request.

The equality tests build the request the way each front end does (``pmask parse`` through its real
parser and request builder, ``pmask.parse`` through its own keywords) by stopping each at the one
call where defaults are chosen; ``tests/test_library.py`` compares the trees of both end to end."""
from __future__ import annotations

import contextlib
import itertools
from pathlib import Path

import pytest

import pmask
from pmask.cli import main
from pmask.cli.commands import parse as parse_command
from pmask.common.errors import PmaskError, SettingError
from pmask.common.probe_entries import PROBE_ENTRIES
from pmask.corpora import Sentence, read_corpus
from pmask.perturb.engine.impact_settings import UNSET, ImpactSettings
from pmask.perturb.fill.model_spec import ModelSpec, resolve_impact
from pmask.pipeline import request as request_module
from pmask.pipeline.request import Decoding, Inputs, Request, check_request, probe_request, resolve

DATA = Path(__file__).resolve().parents[1] / "data"
CONLLU, MRG, TEXT = DATA / "mini.conllu", DATA / "mini.mrg", DATA / "mini.txt"
TINY = "pmask-tiny-en"   # the bundled model: it records metric prob for the pair probe


class Stop(Exception):
    """Raised where a front end hands its request over: nothing after it runs."""


def handed_over(monkeypatch, call) -> tuple[Request, list[Sentence]]:
    """The request (as given) and the sentences a front end hands to ``prepare``, the one place where
    the defaults of a run are chosen, and nothing after it."""
    seen = []

    def stop(request, source, **_):
        seen.append((request, list(source.sentences)))
        raise Stop

    monkeypatch.setattr(request_module, "prepare", stop)
    monkeypatch.setattr(parse_command, "prepare", stop, raising=False)   # if the command imported it by name
    with contextlib.suppress(Stop):
        call()
    assert seen, "the front end never reached pmask.pipeline.request.prepare"
    return seen[0]


def outcome(request: Request, sentences: list[Sentence]) -> tuple:
    """What a request resolves to (its model, decoding and the origin of each value), or its refusal."""
    try:
        done = resolve(request, Inputs.of(sentences))
        check_request(done, sentences)
    except PmaskError as error:
        return ("refused", type(error).__name__, str(error))
    return done.model, done.decoding, dict(done.origins)


def cli_request(monkeypatch, path: Path, flags: list[str], tmp_path: Path):
    output = tmp_path / ("x.txt" if path == MRG else "x.conllu")
    return handed_over(monkeypatch, lambda: main(["parse", str(path), *flags, "-q", "-o", str(output)]))


def api_request(monkeypatch, path: Path, **given):
    sentences = [" ".join(s.words) for s in read_corpus(path)] if path == TEXT else read_corpus(path)
    return handed_over(monkeypatch, lambda: pmask.parse(sentences, **given))


COMBINATIONS = [(probe, metric) for probe, entry in PROBE_ENTRIES.items() for metric in (None, *entry.metrics)]


@pytest.mark.parametrize("faithful", [False, True])
@pytest.mark.parametrize("path", [CONLLU, MRG, TEXT], ids=["conllu", "ptb", "text"])
@pytest.mark.parametrize("probe, metric", COMBINATIONS)
def test_the_cli_and_the_api_resolve_the_same_request(monkeypatch, tmp_path, probe, metric, path, faithful):
    flags = ["--probe", probe, *(["--metric", metric] if metric else []), *(["--faithful"] if faithful else [])]
    cli = cli_request(monkeypatch, path, flags, tmp_path)
    api = api_request(monkeypatch, path, probe=probe, metric=metric, faithful=faithful)
    assert [s.words for s in cli[1]] == [s.words for s in api[1]]
    mine, theirs = outcome(*cli), outcome(*api)
    if path == TEXT and mine[0] == "refused":   # strings given to the API were not read from a file: context says so
        mine, theirs = mine[:2], theirs[:2]
    assert mine == theirs                                    # the same settings, or the same refusal


@pytest.mark.parametrize("path", [CONLLU, MRG, TEXT], ids=["conllu", "ptb", "text"])
def test_every_cli_default_is_the_apis(monkeypatch, tmp_path, path):
    cli, api = cli_request(monkeypatch, path, [], tmp_path), api_request(monkeypatch, path)
    assert cli[0].model == api[0].model and cli[0].decoding == api[0].decoding   # nothing given: nothing set
    decoder, root = {CONLLU: ("eisner", "gold"), MRG: ("mart", "free"), TEXT: ("eisner", "free")}[path]
    done = resolve(api[0], Inputs.of(api[1]))
    assert (done.decoding.decoder, done.decoding.root, done.decoding.symmetrize) == (decoder, root, "none")
    assert (done.model.name, done.impact.metric) == (TINY, "prob")   # the bundled model's recorded metric


# ---------------------------------------------------------------------------- the order of the layers

def test_the_faithful_pipeline_comes_before_the_models_recorded_metric():
    clean, faithful = resolve(Request.build(model=TINY)), resolve(Request.build(model=TINY, faithful=True))
    assert (clean.impact.metric, clean.origins["metric"]) == ("prob", "model")
    assert (faithful.impact.metric, faithful.origins["metric"]) == ("dist", "faithful")
    assert resolve(Request.build(model=TINY, metric="cos", faithful=True)).origins["metric"] == "given"


def test_documents_take_the_discourse_metric_over_the_models_recorded_one(tmp_path, capsys):
    """docs/discourse.md's ``pmask parse SCIDTB --model pmask-tiny-en``: prob (the bundled model's recorded metric)
    cannot pool an EDU's pieces, so documents take dist; a metric given stays given (and prob is refused)."""
    docs = read_corpus(DATA / "scidtb")
    done = resolve(Request.build(model=TINY), Inputs.of(docs))
    assert (done.impact.metric, done.origins["metric"]) == ("dist", "default")
    assert resolve(Request.build(model=TINY, metric="cos"), Inputs.of(docs)).impact.metric == "cos"
    assert resolve(Request.build(model=TINY), Inputs.of(read_corpus(CONLLU))).impact.metric == "prob"
    assert main(["parse", str(DATA / "scidtb"), "--model", TINY, "-o", str(tmp_path / "pred"), "-q"]) == 0
    assert main(["parse", str(DATA / "scidtb"), "--model", TINY, "--metric", "prob", "-q",
                 "-o", str(tmp_path / "prob")]) == 1
    assert "not prob" in capsys.readouterr().err and not (tmp_path / "prob").exists()

def test_a_stores_settings_come_first_and_no_model_is_named_to_read_it():
    held = ImpactSettings("cos", "first", "text", "pair", 0)
    done = resolve(Request.build(faithful=True), Inputs(held=held))
    assert done.impact == held and done.model.name is None and done.origins["metric"] == "store"


def test_the_decoder_of_the_authors_pipeline_for_the_corpus_task():
    ptb, dep = Inputs(task="constituency"), Inputs(task="dependency", gold_heads=True)
    assert resolve(Request.build(probe="distance", faithful=True), ptb).decoding.decoder == "distance-split"
    assert resolve(Request.build(probe="distance"), ptb).decoding.decoder == "mart"
    pair = resolve(Request.build(faithful=True), ptb)             # the pipeline has no constituency decoder
    assert (pair.decoding.decoder, pair.origins["decoder"]) == ("mart", "default")
    cpmi = resolve(Request.build(metric="cpmi", faithful=True), dep)
    assert (cpmi.decoding.decoder, cpmi.decoding.symmetrize) == ("mst-projective", "sum")
    assert cpmi.origins["symmetrize"] == "faithful" and cpmi.impact.context == 30
    assert resolve(Request.build(metric="cpmi", faithful=True, decoder="eisner"), dep).decoding.symmetrize == "none"


def test_the_root_is_gold_only_when_every_sentence_has_gold_heads():
    heads, none = Sentence(id="1", words=["a", "b"], heads=[2, 0]), Sentence(id="2", words=["c"])
    assert resolve(Request(), Inputs.of([heads])).decoding.root == "gold"
    assert resolve(Request(), Inputs.of([heads, none])).decoding.root == "free"
    assert resolve(Request.build(root="gold"), Inputs.of([none])).decoding.root == "gold"   # then refused:
    with pytest.raises(SettingError, match="root gold needs gold heads"):
        check_request(resolve(Request.build(root="gold", decoder="right-chain"), Inputs.of([none])), [none])


@pytest.mark.parametrize("name,metric,probe,tokenize,context", list(itertools.product(
    [None, TINY, "bert-base-uncased"], [None, "dist", "cos", "prob", "cpmi"], [None, "pair", "single"],
    [None, "words"], [None, 0, 5])))
def test_the_layers_one_at_a_time_equal_the_impact_steps_in_one_call(name, metric, probe, tokenize, context):
    given = ImpactSettings(metric, None, tokenize, probe, context)
    for faithful in (False, True):
        done = resolve(Request(ModelSpec(name, impact=given), Decoding(faithful=faithful)))
        assert done.impact == resolve_impact(given, name or TINY, faithful=faithful)
        assert set(done.origins) >= {"probe", "metric", "subword", "tokenize", "context"}


def test_several_probes_keep_the_head_only_where_it_is_read():
    request = Request(ModelSpec("bert-base-uncased", impact=UNSET, head=3))
    assert probe_request(request, "attention").model.head == 3
    assert probe_request(request, "pair").model.head is None and probe_request(request, "distance").model.head is None
    assert probe_request(Request(ModelSpec(TINY, impact=UNSET)), "attention").impact.metric == "weight"


@pytest.mark.parametrize("given, task, decoder", [
    ({"metric": "cpmi"}, "dependency", "mst-projective"),      # Hoover et al.'s (the metric's own pipeline)
    ({"probe": "pair"}, "dependency", "eisner"),               # Wu et al.'s
    ({"probe": "distance"}, "constituency", "distance-split"),  # Kim et al.'s
    ({"probe": "distortion"}, "constituency", "cky"),          # Li & Lu's
])
def test_each_authors_pipeline_decodes_with_its_decoder(given, task, decoder):
    done = resolve(Request.build(faithful=True, **given), Inputs(task=task, gold_heads=task == "dependency"))
    assert done.decoding.decoder == decoder and done.origins["decoder"] == "faithful"
    check_request(done)
