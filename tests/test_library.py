"""The library's top layers: the decoder registry, provenance, setting errors, layering and the
one-call functions behind the commands (parse_corpus, sweep_layers, draw_impact_maps)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from resolved import spec_of

import pmask
from pmask.common.errors import DecodeError, SettingError
from pmask.corpora import read_corpus
from pmask.corpora.corpus_spec import CorpusSpec
from pmask.corpora.provenance import Provenance, meta_path, read_provenance
from pmask.perturb.fill.model_spec import ModelSpec
from pmask.perturb.models.bundled import DEFAULT_MODEL, bundled_model
from pmask.perturb.source import ImpactSource
from pmask.pipeline.decoding import Decoding
from pmask.pipeline.induce import parse_corpus
from pmask.pipeline.request import Inputs, Request, check_request, resolve
from pmask.trees.registry import DECODERS, DecodeInput, decode, decoder_names
from pmask.trees.tasks import task_entry

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
MINI = DATA / "mini.conllu"


# ---------------------------------------------------------------------------- registry

def test_cli_choices_and_compare_baselines_come_from_the_registry():
    from pmask.cli import build_parser
    from pmask.eval.comparison import compare

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for command in ("parse", "sweep"):
        decoder = next(a for a in sub.choices[command]._actions if a.dest == "decoder")
        assert list(decoder.choices) == list(DECODERS)
    gold = read_corpus(MINI)[:2]
    assert list(compare.baseline_scores("dependency", gold, root="gold")) == list(decoder_names("dependency",
                                                                                                 baseline=True))


@pytest.mark.parametrize("name", list(DECODERS))
def test_every_decoder_has_the_one_signature(name):
    words = ["a", "b", "c", "d", "e"]
    F = np.random.default_rng(0).random((5, 5))
    out = decode(name, DecodeInput(words=words, F=F, root=2, seed=1))
    if task_entry(DECODERS[name].task).per_word:   # heads
        assert len(out) == 5 and list(out).count(0) >= 1
    else:
        assert out.leaves() == words


def test_unknown_decoder_lists_the_known_ones():
    with pytest.raises(DecodeError) as info:
        decode("nonesuch", DecodeInput(words=["a"]))
    assert str(info.value) == f"unknown decoder 'nonesuch' (choose from {', '.join(DECODERS)})"


# ---------------------------------------------------------------------------- settings and errors

def test_setting_errors_name_settings_and_the_cli_names_flags(tmp_path, capsys):
    from pmask.corpora import read_corpus

    sentences = read_corpus(DATA / "mini.conllu")
    with pytest.raises(SettingError) as err:
        check_request(resolve(Request.build(decoder="eisner", faithful=True, root="free"), Inputs.of(sentences)),
                      sentences)
    assert "--" not in str(err.value) and "faithful" in str(err.value) and "root gold" in str(err.value)
    with pytest.raises(SettingError, match="whose decoder is eisner, cle, mst-projective or mst, not mart"):
        check_request(resolve(Request.build(decoder="mart", faithful=True, root="gold"), Inputs.of(sentences)),
                      sentences)
    from pmask.cli import main

    code = main(["parse", str(DATA / "mini.conllu"), "--decoder", "right-chain", "--faithful", "--root", "gold",
                 "-o", str(tmp_path / "x.conllu")])
    assert code == 1 and "--faithful with probe pair is the authors' pipeline, whose decoder is eisner, cle, " \
        "mst-projective or mst, not right-chain" in capsys.readouterr().err


# ---------------------------------------------------------------------------- provenance

def test_provenance_round_trip_and_key_order(tmp_path):
    out = tmp_path / "p.conllu"
    prov = Provenance(task="dependency", settings={"decoder": "eisner", "layer": 3}, model={"name": "m"},
                      impact={"metric": "dist", "subword": "avg"}, sentences=2, parsed=1, skipped=["s2"],
                      command=["pmask", "parse"])
    assert prov.write(out) == meta_path(out) == tmp_path / "p.conllu.meta.json"
    data = json.loads(meta_path(out).read_text(encoding="utf-8"))
    assert list(data)[:4] == ["pmask", "command", "task", "settings"] and list(data)[-1] == "seconds"
    back = read_provenance(out)
    assert back == prov and back.row_name() == "eisner (m, dist, layer 3)"
    assert read_provenance(tmp_path / "none.conllu") is None


def test_parse_corpus_writes_trees_and_provenance(tmp_path):
    out = tmp_path / "rc.conllu"
    result = parse_corpus(ImpactSource.open(CorpusSpec(DATA / "mini.conllu")), out,
                          Decoding("right-chain", root="gold", symmetrize="none"), command=["test"])
    assert result.describe().startswith(f"{out}: ") and out.is_file()
    prov = read_provenance(out)
    assert prov.task == "dependency" and prov.model is None and prov.impact is None
    assert prov.settings == {"decoder": "right-chain", "root": "gold", "faithful": False, "multiroot": False,
                             "seed": 0}
    assert prov.parsed == prov.sentences > 0 and prov.corpus["sha256"]


# ---------------------------------------------------------------------------- one call per command

def test_sweep_layers_from_a_store_equals_the_model_route(tmp_path, tiny_bert_dir):
    from pmask.eval.studies.sweep import sweep_layers
    from pmask.perturb.source import build_store

    corpus = CorpusSpec(DATA / "mini.conllu")
    model = ModelSpec(str(tiny_bert_dir), device="cpu")
    direct = sweep_layers(ImpactSource.open(corpus, model=model, progress=False), layers=[1, -1], baselines=True)
    run = build_store(corpus, spec_of(str(tiny_bert_dir), device="cpu"), tmp_path / "store", layers=[1, -1],
                      progress=False)
    assert run.summary.computed == len(ImpactSource.open(corpus).sentences)
    stored = sweep_layers(ImpactSource.open(CorpusSpec(tmp_path / "store")), layers=[1, -1], baselines=True)
    assert stored.sweep.rows == direct.sweep.rows and stored.baselines == direct.baselines
    assert set(direct.baselines) == set(decoder_names("dependency", baseline=True))
    again = build_store(corpus, spec_of(str(tiny_bert_dir), device="cpu"), tmp_path / "store", layers=[1, -1],
                        resume=True)
    assert again.summary is None and "store complete" in again.describe()


# -------------------------------------------------------------------------- import weight (layering: test_structure.py)

#: Libraries that cost start-up time (torch and transformers several seconds, nltk about one second, for it
#: imports scipy.stats) and that only some work needs.
HEAVY = ("torch", "transformers", "nltk", "scipy", "matplotlib")


def heavy_modules_after(code: str) -> list[str]:
    """The libraries of :data:`HEAVY` that ``code`` imports, run in a fresh interpreter."""
    report = f"\nimport json, sys; print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)), file=sys.stderr)"
    proc = subprocess.run([sys.executable, "-c", code + report], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stderr.strip().splitlines()[-1])


def test_importing_the_cli_loads_no_heavy_library():
    code = ("import pmask, pmask.cli, pmask.perturb, pmask.pipeline.induce, pmask.eval.studies.sweep, "
            "pmask.eval.figures.impact_maps")
    assert heavy_modules_after(code) == []


@pytest.mark.parametrize("argv", [["--help"], ["parse", "--help"], ["--version"]])
def test_help_loads_no_heavy_library(argv):
    code = f"from pmask.cli import main\nassert main({argv!r}) == 0"
    assert heavy_modules_after(code) == []


def test_a_dependency_parse_of_conllu_imports_no_nltk(tmp_path, tiny_bert_dir):
    """nltk is for constituency trees: reading CoNLL-U, computing impacts and Eisner do without it."""
    out = tmp_path / "out.conllu"
    library = (f"import pmask\nfrom pmask.corpora import read_corpus\n"
               f"parsed = pmask.parse(read_corpus({str(MINI)!r}), model={str(tiny_bert_dir)!r}, device='cpu')\n"
               f"assert [len(p.heads) for p in parsed] == [6, 7, 2, 1, 2] and parsed[0].F is not None")
    loaded = heavy_modules_after(library)   # scipy: transformers imports it
    assert "torch" in loaded and "nltk" not in loaded
    command = (f"import sys\nfrom pmask.cli import main\n"
               f"assert main(['parse', {str(MINI)!r}, '--decoder', 'right-chain', '-o', {str(out)!r}, '-q']) == 0\n"
               f"assert 'pmask.eval' not in sys.modules   # the other commands' library code")
    assert heavy_modules_after(command) == [] and out.read_text(encoding="utf-8").count("\n\n") == 5


# -------------------------------------------------------------- --faithful's dist default holds through pmask.parse too


def test_faithful_measures_distances_with_the_bundled_model_in_python():
    assert bundled_model(DEFAULT_MODEL).defaults["metric"] == "prob"   # else this test would prove nothing
    sentences = read_corpus(MINI)[:3]
    faithful = pmask.parse(sentences, faithful=True)                   # no metric given
    dist = pmask.parse(sentences, faithful=True, metric="dist")
    prob = pmask.parse(sentences, faithful=True, metric="prob")
    for a, b, c in zip(faithful, dist, prob):
        assert a.F is not None and a.F.shape == (len(a.sentence.words),) * 2
        np.testing.assert_allclose(a.F, b.F, rtol=1e-5, atol=1e-6)
        assert not np.allclose(a.F, c.F, rtol=1e-3, atol=1e-4)
    plain = pmask.parse(sentences)                                     # without --faithful: the model's prob
    for a, c in zip(plain, pmask.parse(sentences, metric="prob")):
        np.testing.assert_allclose(a.F, c.F, rtol=1e-5, atol=1e-6)


# -------------------------------------------------------------- pmask.parse and pmask parse: one set of defaults

MRG, CONLLU, TEXT = DATA / "mini.mrg", DATA / "mini.conllu", DATA / "mini.txt"


def _bracket_lines(path: Path) -> list[str]:
    return [" ".join(line.split()) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# the README's defaults: cky reads span charts, mart is the constituency default, eisner the dependency one; the
# root is gold where every sentence has gold heads (CoNLL-U), else free (raw text); --faithful picks its
# authors' decoder (Kim et al.'s distance-split, Hoover et al.'s mst-projective)
@pytest.mark.parametrize("path, flags, given, decoder, root", [
    (MRG, ["--probe", "distortion"], {"probe": "distortion"}, "cky", None),
    (MRG, [], {}, "mart", None),
    (CONLLU, [], {}, "eisner", "gold"),
    (TEXT, [], {}, "eisner", "free"),
    (MRG, ["--probe", "distance", "--faithful"], {"probe": "distance", "faithful": True}, "distance-split", None),
    (CONLLU, ["--metric", "cpmi", "--faithful", "--context", "0"],
     {"metric": "cpmi", "faithful": True, "context": 0}, "mst-projective", "gold"),
], ids=["ptb-distortion", "ptb", "conllu", "text", "ptb-distance-faithful", "conllu-cpmi-faithful"])
def test_pmask_parse_gives_the_commands_trees_with_its_defaults(tiny_bert_dir, tmp_path, capsys, path, flags, given,
                                                              decoder, root):
    from pmask.cli import main

    out = tmp_path / ("cli.txt" if path == MRG else "cli.conllu")
    code = main(["parse", str(path), "--model", str(tiny_bert_dir), *flags, "-q", "-o", str(out)])
    assert code == 0, capsys.readouterr().err
    settings = json.loads(meta_path(out).read_text(encoding="utf-8"))["settings"]
    assert settings["decoder"] == decoder and settings.get("root") == root
    sentences = [" ".join(s.words) for s in read_corpus(path)] if path == TEXT else read_corpus(path)
    parsed = pmask.parse(sentences, model=str(tiny_bert_dir), **given)
    if path == MRG:
        assert _bracket_lines(out) == [" ".join(str(p.tree).split()) for p in parsed]
    else:
        assert [s.heads for s in read_corpus(out)] == [p.heads.tolist() for p in parsed]


def test_a_distortion_parse_in_python_decodes_span_charts_into_trees(tiny_bert_dir):
    words = read_corpus(MRG)[0].words
    parsed, = pmask.parse([words], model=str(tiny_bert_dir), probe="distortion")
    assert parsed.tree.leaves() == words and parsed.heads is None


def test_context_for_sentences_given_as_words_is_refused_in_the_apis_words(tiny_bert_dir):
    with pytest.raises(SettingError) as error:
        pmask.parse(["the cat sat on the mat"], model=str(tiny_bert_dir), metric="cpmi", context=5)
    message = str(error.value)
    assert "--" not in message and "'1'" not in message and "\n" not in message
    assert ("context takes neighbouring sentences from the file the sentences were read from, and sentence 1 was "
            "not read from one: pass Sentences read with pmask.corpora.read_corpus") in message
    parsed = pmask.parse(read_corpus(CONLLU)[:2], model=str(tiny_bert_dir), metric="cpmi", context=5)
    assert len(parsed) == 2 and all(p.heads is not None for p in parsed)   # read from a file: context works


# ------------------------------------------------------------------ documents of EDUs (issue 37)

def test_parse_takes_documents_as_edu_lists_or_one_edu_per_line(tmp_path, capsys):
    """``pmask.parse(docs, unit="edu")``: each document a list of EDU texts, or a string of one EDU per line,
    gives the trees ``pmask parse`` writes for the same documents in a ``.edus`` file (its HEAD column read
    here as text). Main had no ``unit``: a list of strings was one sentence of words."""
    from scidtb_counts import DATA, WORDS

    from pmask.cli import main
    from pmask.common.errors import PmaskError
    from pmask.perturb.testing import make_tiny_bert

    model = str(make_tiny_bert(tmp_path / "m", WORDS, max_positions=64, seed=1))
    out = tmp_path / "d.conllu"
    assert main(["parse", str(DATA / "docs.edus"), "--model", model, "--root", "free", "-q", "-o", str(out)]) == 0
    capsys.readouterr()
    blocks = out.read_text(encoding="utf-8").strip().split("\n\n")
    cli = [[int(line.split("\t")[6]) for line in b.splitlines() if not line.startswith("#")] for b in blocks]
    docs = [["We present a parser", "that reads discourse .", "It is fast ."],
            "Masked models know syntax ,\nwe show .\n"]
    parsed = pmask.parse(docs, unit="edu", model=model, root="free")
    assert [p.heads.tolist() for p in parsed] == cli and [len(h) for h in cli] == [3, 2]
    assert [p.sentence.unit for p in parsed] == ["edu", "edu"] and "3 EDUs" in repr(parsed[0])
    with pytest.raises(PmaskError, match=r"document 2\): 1 EDU; a discourse tree needs at least two"):
        pmask.parse([["a b", "c"], ["only one"]], unit="edu", model=model)
    with pytest.raises(PmaskError, match="unit must be word or edu"):
        pmask.parse(docs, unit="sentence", model=model)


# ---------------------------------------------------------------------------- issue 45: a GGUF causal model

def _uuas_by_hand(sentences, matrices):
    """UUAS (root gold, every word scored) of the maximum spanning trees of F + F^T: per sentence the root's edge
    {root, 0} and each tree edge in the gold tree's undirected edges (written here, not pmask's scorer)."""
    from family_impacts import max_spanning_edges

    correct = total = 0
    for sent, F in zip(sentences, matrices):
        gold = {frozenset((k, h)) for k, h in enumerate(sent.heads, start=1) if h}
        correct += 1 + len(max_spanning_edges(F + F.T) & gold)
        total += len(sent.words)
    return 100 * correct / total


def test_parse_impacts_and_sweep_with_a_gguf_model(tmp_path_factory, tmp_path, monkeypatch):
    """Issue 45, item 6: ``pmask.parse(model="x.gguf")`` decodes by the causal family's defaults (mst on F + F^T),
    ``pmask.sweep`` scores every layer the same way and its ``to_pandas`` holds those figures."""
    from family_impacts import causal_model, max_spanning_edges

    from pmask.perturb.testing.gguf_writer import write_gguf

    monkeypatch.setenv("PMASK_CACHE", str(tmp_path / "cache"))
    folder, corpus = causal_model(tmp_path_factory, "llama-bbpe")   # a byte-level BPE: what llama.cpp writes
    gguf = write_gguf(folder, tmp_path / "tiny.gguf")
    gold = read_corpus(corpus)
    trees = pmask.parse(gold, model=str(gguf))
    F = pmask.impacts(gold, model=str(gguf), layers=[1, 2])
    for sent, tree, matrices in zip(gold, trees, F):
        assert np.triu(matrices[-1], 1).max() == 0 and np.tril(matrices[-1], -1).max() > 0   # one-sided
        assert {frozenset((k, h)) for k, h in enumerate(tree.heads, start=1) if h} == \
            max_spanning_edges(matrices[-1] + matrices[-1].T), sent.id
    table = pmask.sweep(corpus, model=str(gguf)).to_pandas()
    assert list(table.index) == [1, 2]
    for k, layer in enumerate((1, 2)):
        assert table.loc[layer, "uuas"] == pytest.approx(_uuas_by_hand(gold, [m[k] for m in F]), abs=0.01)
