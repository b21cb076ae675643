"""One request for the CLI and the API (issue 38 item 1, issue 39 item 12, issue 46 items 1 and 5): every
default is chosen by :func:`pmask.pipeline.request.resolve`, in one order, whoever builds the request, and no
other code of the library chooses one (the guard reads the code); :func:`check_request` is the one gate.

The equality tests build the request the way each front end does (``pmask parse`` through its real
parser and request builder, ``pmask.parse`` through its own keywords) by stopping each at the one
call where defaults are chosen; ``tests/test_library.py`` compares the trees of both end to end."""
from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import shutil
from pathlib import Path

import pytest
from defaults_guard import offenders, offenders_in, setting_values

import pmask
from pmask.cli import main
from pmask.cli.commands import parse as parse_command
from pmask.common.errors import PmaskError, SettingError
from pmask.common.model_families import MODEL_FAMILIES, ModelFamily
from pmask.common.probe_entries import PROBE_ENTRIES
from pmask.corpora import Sentence, read_corpus
from pmask.corpora.corpus_spec import CorpusSpec
from pmask.perturb.engine.impact_settings import UNSET, ImpactSettings
from pmask.perturb.fill.model_spec import ModelSpec
from pmask.pipeline import request as request_module
from pmask.pipeline.request import Decoding, Inputs, Request, check_request, probe_request, resolve

from library_files import library_files

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


def reference(given: ImpactSettings, name: str, faithful: bool) -> ImpactSettings:
    """The impact layers written out naively, each value the first of: given, the authors' pipeline (the metric's
    own, else the probe's; a given metric renamed), the model's recorded metric (the bundled model's, for pair),
    the entries (the probe's first metric, the metric's subword policy else avg, words, no context)."""
    from pmask.common.probe_entries import METRIC_ENTRIES

    probe = given.probe if given.probe is not None else "pair"
    metric, tokenize, context = given.metric, given.tokenize, given.context
    pipeline = (METRIC_ENTRIES[metric].faithful if metric else None) or PROBE_ENTRIES[probe].faithful
    if faithful and pipeline is not None:
        metric = pipeline.renames.get(metric, metric) if metric else pipeline.metric
        tokenize = tokenize if tokenize is not None else pipeline.tokenize
        context = context if context is not None else pipeline.context
    if metric is None and probe == "pair" and name == TINY:
        metric = "prob"
    metric = metric if metric is not None else PROBE_ENTRIES[probe].metrics[0]
    subword = given.subword if given.subword is not None else METRIC_ENTRIES[metric].subword or "avg"
    return ImpactSettings(metric, subword, tokenize if tokenize is not None else "words", probe,
                          context if context is not None else 0)


@pytest.mark.parametrize("name,metric,probe,tokenize,context", list(itertools.product(
    [None, TINY, "bert-base-uncased"], [None, "dist", "cos", "prob", "cpmi"], [None, "pair", "single"],
    [None, "words"], [None, 0, 5])))
def test_the_layers_one_at_a_time_equal_a_naive_reference(name, metric, probe, tokenize, context):
    given = ImpactSettings(metric, None, tokenize, probe, context)
    for faithful in (False, True):
        done = resolve(Request(ModelSpec(name, impact=given), Decoding(faithful=faithful)))
        assert done.impact == reference(given, name or TINY, faithful)
        assert set(done.origins) >= {"probe", "metric", "subword", "tokenize", "context"}


def test_the_faithful_rename_goes_through_resolve(monkeypatch, tmp_path):
    """Kim et al.'s pipeline renames a given ``cos`` to their ``cossim`` (issue 47 item 15): in the resolved
    request of the CLI and of the API, with the origin that says why, and not without ``--faithful``."""
    done = resolve(Request.build(probe="distance", metric="cos", faithful=True), Inputs(task="constituency"))
    assert (done.impact.metric, done.origins["metric"], done.impact.tokenize) == ("cossim", "faithful", "bare")
    assert resolve(Request.build(probe="distance", metric="cos")).impact.metric == "cos"
    flags = ["--probe", "distance", "--metric", "cos", "--faithful"]
    for handed in (cli_request(monkeypatch, MRG, flags, tmp_path),
                   api_request(monkeypatch, MRG, probe="distance", metric="cos", faithful=True)):
        done = resolve(handed[0], Inputs.of(handed[1]))
        assert (done.impact.metric, done.origins["metric"]) == ("cossim", "faithful")
        check_request(done, handed[1])


#: Each decoding flag of ``pmask parse`` with a value other than its default, and the keyword of ``pmask.parse``.
DECODING_FLAGS = [
    (["--multiroot", "--root", "free"], {"multiroot": True, "root": "free"}),
    (["--absolute", "--decoder", "mst"], {"absolute": True, "decoder": "mst"}),
    (["--symmetrize", "tril", "--decoder", "mst"], {"symmetrize": "tril", "decoder": "mst"}),
    (["--seed", "7", "--decoder", "random-eisner"], {"seed": 7, "decoder": "random-eisner"}),
    (["--bias", "0.5", "--decoder", "distance-split", "--probe", "distance"],
     {"bias": 0.5, "decoder": "distance-split", "probe": "distance"}),
    (["--root", "free"], {"root": "free"}),
    (["--layer", "1"], {"layer": 1}),
]


@pytest.mark.parametrize("flags, keywords", DECODING_FLAGS, ids=[" ".join(f[:2]) for f, _ in DECODING_FLAGS])
def test_every_decoding_flag_arrives_in_the_resolved_request(monkeypatch, tmp_path, flags, keywords):
    """Issue 47 item 15: each flag reaches the resolved decoding, through the CLI and through the API, with a value
    its default is not (a flag dropped on the way would leave the default)."""
    path = MRG if "distance-split" in flags else CONLLU
    cli = cli_request(monkeypatch, path, flags, tmp_path)
    api = api_request(monkeypatch, path, **keywords)
    default = resolve(Request.build(), Inputs.of(cli[1])).decoding
    for request, sentences in (cli, api):
        done = resolve(request, Inputs.of(sentences))
        for key, value in keywords.items():
            field = {"layer": "layers"}.get(key, key)
            if key == "probe":
                assert done.impact.probe == value
                continue
            assert getattr(done.decoding, field) == value != getattr(default, field), key
            if key != "decoder":
                assert done.origin(key) == "given" or key not in done.origins
        check_request(done, sentences)
    assert cli[0].decoding == api[0].decoding


# ---------------------------------------------------------------------------- the model family's layer

def family_like(decoders: dict, symmetrize: str | None, **fields: object) -> ModelFamily:
    """A family of its own (``pmask.common.model_families``): the masked family's code, other defaults and
    refusals; what the resolver reads of it before the model loads."""
    return dataclasses.replace(MODEL_FAMILIES["masked"], name="one-sided", precedence=0, decoders=decoders,
                               symmetrize=symmetrize, **fields)


def test_the_model_familys_defaults_are_the_model_layer():
    """A causal family (one-sided impacts) decodes with an undirected decoder, symmetrised, unless told otherwise:
    after what was given and the authors' pipeline, before the entries' defaults; no family name is compared."""
    causal = family_like({"dependency": "mst"}, "sum")
    heads = [Sentence(id="1", words=["a", "b"], heads=[2, 0])]
    done = resolve(Request.build(), Inputs.of(heads, family=causal))
    assert (done.decoding.decoder, done.decoding.symmetrize) == ("mst", "sum")
    assert (done.origins["decoder"], done.origins["symmetrize"]) == ("model", "model")
    given = resolve(Request.build(decoder="eisner"), Inputs.of(heads, family=causal))
    assert (given.decoding.decoder, given.decoding.symmetrize) == ("eisner", "none")   # directed: not symmetrised
    faithful = resolve(Request.build(faithful=True), Inputs.of(heads, family=causal))
    assert faithful.decoding.decoder == "eisner" and faithful.origins["decoder"] == "faithful"
    ptb = resolve(Request.build(), Inputs(task="constituency", family=causal))
    assert ptb.decoding.decoder == "mart" and ptb.origins["decoder"] == "default"   # none for that task


@pytest.fixture
def marked_model(tiny_bert_dir, tmp_path, monkeypatch):
    """A model folder its own family recognises (``pmask_marked`` in its config): that family decodes dependencies
    with mst, symmetrised by sum, takes probe pair with metric cos alone; loading its weights fails the test."""
    from pmask.perturb.models import load

    folder = tmp_path / "marked"
    shutil.copytree(tiny_bert_dir, folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "pmask_marked": True}))
    family = family_like({"dependency": "mst"}, "sum", probes=("pair",), metrics=("cos",),
                         recognises=lambda config: getattr(config, "pmask_marked", False))

    def refuse(*args, **kwargs):
        raise AssertionError("a model was loaded")

    monkeypatch.setattr(load, "load_model", refuse)
    with MODEL_FAMILIES.registered(family):
        yield folder


def test_the_family_is_read_before_the_model_loads_and_resolves_its_layer(marked_model):
    """The front ends find the model's family from its config (no weights) and resolve with it: its decoder and
    symmetrisation, the first metric it takes; what it does not run is refused in one line naming the model."""
    from pmask.perturb.source import ImpactSource
    from pmask.pipeline.request import prepare

    source = ImpactSource.open(CorpusSpec(DATA / "mini.conllu"), model=ModelSpec(str(marked_model)), progress=False)
    done = prepare(Request(source.model_spec), source)
    assert (done.decoding.decoder, done.decoding.symmetrize, done.impact.metric) == ("mst", "sum", "cos")
    assert (done.origin("decoder"), done.origin("symmetrize"), done.origin("metric")) == ("model", "model", "default")
    with pytest.raises(PmaskError, match=r"^model '.*marked': one-sided models take probe pair, not single"):
        prepare(Request.build(model=str(marked_model), probe="single"), source)
    assert pmask.estimate(["the cat sat"], model=str(marked_model)).sequences   # the API's: cos, no weights
    with pytest.raises(PmaskError, match="one-sided models take metric cos, not dist"):
        pmask.estimate(["the cat sat"], model=str(marked_model), metric="dist")


@pytest.mark.parametrize("command", ["parse", "impact", "sweep"])
def test_a_command_refuses_what_the_models_family_does_not_run_before_any_cost_line(marked_model, command, tmp_path,
                                                                                    capsys):
    out = ["-o", str(tmp_path / "out")] if command != "sweep" else []
    corpus = str(DATA / "mini.conllu")
    assert main([command, corpus, "--model", str(marked_model), "--metric", "dist", "--dry-run", *out]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert "one-sided models take metric cos, not dist" in captured.err


# ---------------------------------------------------------------------------- one resolver, one gate

def test_no_code_but_resolve_chooses_a_default():
    """Issue 46 item 1: the guard reads every library module; none but pmask/pipeline/request.py chooses a
    setting's default (a parameter defaulted below the pipeline wing, ``x or "pair"``, ``.get("probe", "pair")``,
    a chooser of before, the literal name of a default entry)."""
    root = Path(pmask.__file__).resolve().parent
    wrong = offenders(library_files(root), root)
    assert not wrong, "defaults chosen outside pmask.pipeline.request.resolve:\n" + "\n".join(wrong)


def test_the_defaults_guard_sees_what_it_must_and_nothing_else():
    values = setting_values()
    code = '''
def run(model, probe="pair", *, metric=None, subword: str = "avg", layers=(-1,), root: int | None = None):
    probe = probe or "pair"
    tokenize = settings.get("tokenize", "words")
    context = impact.context or 0
    name = row.get("decoder") or "prediction"
    chosen = spec.with_defaults()
    label = "pair"
    """a docstring may say "pair" """
    return metric or default_metric(probe)
class Spec:
    decoder: str = "eisner"
    symmetrize: str | None = None
class ProbeEntry:
    metric: str | None = None
ProbeEntry("x", probes=("pair",))
'''
    below = [w.split(":", 1)[1] for w in offenders_in(code, "perturb/x.py", values)]
    assert below == [
        "2: 'pair': a default's name", "2: parameter of run(): metric = None", "2: parameter of run(): probe = 'pair'",
        "2: parameter of run(): subword = 'avg'", "3: 'pair': a default's name", "3: probe or 'pair'",
        "4: settings.get('tokenize', 'words')", "5: impact.context or 0", "7: spec.with_defaults(...) chooses defaults",
        "8: 'pair': a default's name", "10: default_metric(...) chooses defaults",
        "10: metric or default_metric(probe)", "12: field of Spec: decoder = 'eisner'",
        "13: field of Spec: symmetrize = None"], below   # not: a label's fallback, layers, a root word, docstrings,
    # an entry's fields or its declaration
    front = [w.split(": ", 1)[1] for w in offenders_in(code, "eval/x.py", values)]
    assert "parameter of run(): metric = None" not in front and "field of Spec: symmetrize = None" not in front
    assert "parameter of run(): probe = 'pair'" in front   # a front end may leave a setting unset, not choose it
    assert offenders_in(code, "pipeline/request.py", values) == []


def test_check_request_is_the_one_gate_of_a_parse(monkeypatch, tmp_path):
    """Issue 46 item 5: a parse checks its decoding once, before any model work (it was checked four times)."""
    from pmask.cli import main as cli
    from pmask.pipeline import checks

    calls = []
    original = checks.check_decoding
    monkeypatch.setattr(request_module, "check_decoding", lambda *a, **k: calls.append(a) or original(*a, **k))
    assert cli(["parse", str(CONLLU), "--decoder", "right-chain", "-q", "-o", str(tmp_path / "x.conllu")]) == 0
    assert len(calls) == 1


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
