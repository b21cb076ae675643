"""The probes at the command line: the acceptance commands give the naive references' trees,
stores keep their probe, sweep draws one line per probe, heatmaps are labelled, refusals are one line."""
from __future__ import annotations

import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

from pmask.cli import main
from pmask.corpora import Sentence, read_corpus
from pmask.perturb.testing import TINY_SENTENCES, make_tiny_bert
from pmask.pipeline.request import Inputs, Request, resolve

from brute_force import all_trees
from test_cky import brute_force
from test_distortion import NaiveDistortion

PUD = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "ud" / "UD_English-PUD" / "en_pud-ud-test.conllu"
needs_pud = pytest.mark.skipif(not PUD.is_file(), reason="shared PUD data not present")


@pytest.fixture(scope="module")
def tiny4(tmp_path_factory):
    """A tiny BERT with 4 heads (the acceptance command decodes head 3)."""
    from pmask.perturb.testing import make_tiny_bert

    return make_tiny_bert(tmp_path_factory.mktemp("tiny4"), heads=4)


def run(args: list, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def heads_of(path: Path) -> list[list[int]]:
    return [list(s.heads) for s in read_corpus(path)]


@needs_pud
def test_parse_attention_and_single_give_the_naive_references_trees(tiny4, tmp_path, capsys):
    from pmask.perturb.models.load import load_model
    from pmask.trees.registry import decode_dependencies

    from naive_probes import Naive

    a, s = tmp_path / "a.conllu", tmp_path / "s.conllu"
    code, _, err = run(["parse", PUD, "--limit", 6, "--model", tiny4, "--probe", "attention", "--layer", 2, "--head", 3,
                        "--decoder", "eisner", "--root", "gold", "-q", "-o", a], capsys)
    assert code == 0, err
    code, _, err = run(["parse", PUD, "--limit", 6, "--model", tiny4, "--probe", "single", "--layer", 2, "-q",
                        "-o", s], capsys)
    assert code == 0, err
    lm = load_model(str(tiny4), device="cpu")
    gold = read_corpus(PUD, limit=6)
    want_a, want_s = [], []
    for sent in gold:
        naive = Naive(lm, list(sent.words))
        F_att = naive.attention([2])[0, 3]
        F_single = naive.single("dist", [2])[0]
        want_a.append(decode_dependencies("eisner", len(sent.words), F=F_att, root=sent.root).tolist())
        want_s.append(decode_dependencies("eisner", len(sent.words), F=F_single, root=sent.root).tolist())
    assert heads_of(a) == want_a and heads_of(s) == want_s
    meta = json.loads((tmp_path / "a.conllu.meta.json").read_text(encoding="utf-8"))
    assert meta["impact"] == {"probe": "attention", "metric": "weight", "subword": "avg", "tokenize": "words",
                              "context": 0, "head": 3}


@needs_pud
def test_a_store_keeps_its_probe_and_every_head(tiny4, tmp_path, capsys):
    store = tmp_path / "att"
    assert run(["impact", PUD, "--limit", 4, "--model", tiny4, "--probe", "attention", "--layers", "all", "-q",
                "-o", store], capsys)[0] == 0
    manifest = json.loads((store / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["probe"] == "attention" and manifest["heads"] == 4
    for head in ("0", "max", "mean"):
        code, _, err = run(["parse", store, "--head", head, "--layer", 1, "-q", "-o", tmp_path / f"h{head}.conllu"],
                           capsys)
        assert code == 0, err
    code, _, err = run(["parse", store, "--probe", "single", "-o", tmp_path / "x.conllu"], capsys)
    assert code == 1 and "--probe single conflicts with the store" in err and "holds probe attention" in err
    code, _, err = run(["parse", store, "--head", 4, "-q", "-o", tmp_path / "x.conllu"], capsys)
    assert code == 1 and "--head 4 does not exist: the model has 4 heads" in err
    assert len(err.strip().splitlines()) == 1


@needs_pud
def test_faithful_is_the_authors_probes_only_and_bias_is_distance_splits(tiny4, tmp_path, capsys):
    code, _, err = run(["parse", PUD, "--limit", 2, "--model", tiny4, "--probe", "attention", "--faithful",
                        "-o", tmp_path / "f.conllu"], capsys)
    assert code == 1 and "--faithful is the authors' pipeline of probes pair, distance, distortion; probe attention " \
        "has no faithful mode" in err
    assert not (tmp_path / "f.conllu").exists()
    code, _, err = run(["parse", PUD, "--limit", 2, "--model", tiny4, "--bias", 0.5, "-o", tmp_path / "b.conllu"],
                       capsys)
    assert code == 1 and "--bias is the right-branching bias of the distance-split decoder" in err
    code, _, err = run(["parse", PUD, "--probe", "nope", "-o", tmp_path / "n.conllu"], capsys)
    assert code == 2 and "invalid choice: 'nope'" in err


@needs_pud
def test_sweep_draws_one_line_per_probe(tiny4, tmp_path, capsys):
    plot, table = tmp_path / "layers.png", tmp_path / "sweep.json"
    code, out, err = run(["sweep", PUD, "--limit", 4, "--model", tiny4, "--probe", "pair,distance,attention", "-q",
                          "--baselines", "--plot", plot, "--json", table], capsys)
    assert code == 0, err
    data = json.loads(table.read_text(encoding="utf-8"))
    assert data["metric_keys"] == ["pair uas", "distance uas", "attention uas"]
    assert [r["layer"] for r in data["rows"]] == [1, 2, 3] and all(len(r) == 4 for r in data["rows"])
    assert data["meta"]["probes"] == "pair (dist), distance (l2), attention (head mean)"
    assert plot.stat().st_size > 0 and "distance uas" in out
    code, _, err = run(["sweep", PUD, "--limit", 4, "--model", tiny4, "--probe", "pair,single", "--store",
                        tmp_path / "st", "-q"], capsys)
    assert code == 1 and "a store holds one probe" in err


@needs_pud
def test_the_heatmap_names_the_probe(tiny4, tmp_path, capsys):
    page = tmp_path / "h.html"
    code, _, err = run(["heatmap", PUD, "--limit", 2, "--model", tiny4, "--probe", "attention", "--head", 1,
                        "--sentence", 0, "--layer", 2, "-q", "-o", page], capsys)
    assert code == 0, err
    assert "layer 2, probe attention (head 1)" in page.read_text(encoding="utf-8")
    folder = tmp_path / "maps"
    code, _, err = run(["heatmap", PUD, "--limit", 2, "--model", tiny4, "--probe", "distance", "--metric", "cos",
                        "--sentence", "0-1", "--as", "html", "-q", "-o", folder], capsys)
    assert code == 0, err
    assert all("probe distance (cos)" in p.read_text(encoding="utf-8") for p in folder.glob("*.html"))


@needs_pud
def test_distance_split_parses_a_corpus(tiny4, tmp_path, capsys):
    out = tmp_path / "t.txt"
    code, _, err = run(["parse", PUD, "--limit", 3, "--model", tiny4, "--probe", "distance", "--decoder",
                        "distance-split", "--bias", 0.3, "-q", "-o", out], capsys)
    assert code == 0, err
    meta = json.loads((tmp_path / "t.txt.meta.json").read_text(encoding="utf-8"))
    assert meta["settings"]["bias"] == 0.3 and meta["impact"]["probe"] == "distance"
    assert len(out.read_text(encoding="utf-8").splitlines()) == 3


@needs_pud
def test_sweep_applies_the_head_or_refuses_it(tiny4, tmp_path, capsys):
    store = tmp_path / "att"
    assert run(["impact", PUD, "--limit", 3, "--model", tiny4, "--probe", "attention", "--layers", "all", "-q",
                "-o", store], capsys)[0] == 0
    code, out, err = run(["sweep", store, "--head", 2, "-q", "--json", tmp_path / "s.json"], capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))["meta"]["probe"] == "attention (head 2)"
    code, _, err = run(["sweep", PUD, "--limit", 3, "--model", tiny4, "--head", 2, "-q"], capsys)
    assert code == 1 and "--head applies to probe attention" in err
    code, _, err = run(["sweep", PUD, "--limit", 3, "--model", tiny4, "--probe", "pair,single", "--head", 2, "-q"],
                       capsys)
    assert code == 1 and "none of them is swept" in err


@needs_pud
def test_faithful_is_refused_for_a_cache_store_of_another_probe(tiny4, tmp_path, capsys):
    cache = tmp_path / "cache"
    assert run(["parse", PUD, "--limit", 2, "--model", tiny4, "--probe", "single", "--store", cache, "-q",
                "-o", tmp_path / "s.conllu"], capsys)[0] == 0
    code, _, err = run(["parse", PUD, "--limit", 2, "--store", cache, "--faithful", "-q", "-o", tmp_path / "f.conllu"],
                       capsys)
    assert code == 1 and "probe single has no faithful mode" in err and not (tmp_path / "f.conllu").exists()


@needs_pud
def test_impact_refuses_a_head(tiny4, tmp_path, capsys):
    code, _, err = run(["impact", PUD, "--limit", 2, "--model", tiny4, "--probe", "attention", "--head", 1,
                        "-o", tmp_path / "s"], capsys)
    assert code == 1 and "--head is chosen when a store is read" in err and not (tmp_path / "s").exists()


@needs_pud
def test_layer_0_is_decoded_for_distance_and_refused_for_the_masking_probes(tiny4, tmp_path, capsys):
    """The distances between the words' embeddings are a tree; masking probes are all zeros at layer 0."""
    code, _, err = run(["parse", PUD, "--limit", 3, "--model", tiny4, "--probe", "distance", "--layer", 0, "-q",
                        "-o", tmp_path / "d.conllu"], capsys)
    assert code == 0, err
    for probe in ("pair", "single"):
        code, _, err = run(["parse", PUD, "--limit", 3, "--model", tiny4, "--probe", probe, "--layer", 0, "-q",
                            "-o", tmp_path / "p.conllu"], capsys)
        assert code == 1 and "--layer 0" in err and not (tmp_path / "p.conllu").exists()
    code, _, err = run(["parse", PUD, "--limit", 3, "--model", tiny4, "--probe", "attention", "--layer", 0, "-q",
                        "-o", tmp_path / "a.conllu"], capsys)
    assert code == 1 and "has no attention weights" in err
    code, out, err = run(["sweep", PUD, "--limit", 3, "--model", tiny4, "--probes", "distance", "--layers", "0,1",
                          "-q"], capsys)
    assert code == 0 and "|     0 |" in out, err
    code, _, err = run(["sweep", PUD, "--limit", 3, "--model", tiny4, "--probes", "distance,single", "--layers",
                        "0,1", "-q"], capsys)
    assert code == 1 and "--layers 0" in err


@needs_pud
def test_info_names_the_probe_and_its_heads(tiny4, tmp_path, capsys):
    store = tmp_path / "att"
    assert run(["impact", PUD, "--limit", 2, "--model", tiny4, "--probe", "attention", "-q", "-o", store],
               capsys)[0] == 0
    code, out, err = run(["info", store], capsys)
    assert code == 0 and "settings  probe attention (every head: 4 per layer), metric weight" in out, err


# ------------------------------------- CPMI: stores with context, every symmetrisation, --faithful's defaults, refusals

MINI = Path(__file__).resolve().parents[2] / "data" / "mini.conllu"


def run_args(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def no_head_dir(tmp_path_factory) -> Path:
    return make_tiny_bert(tmp_path_factory.mktemp("no_head") / "tiny-encoder", mlm_head=False)


#: 5, 3, 5 and 6 words of the tiny model's vocabulary (brute force over every tree stays small)
CPMI_WORDS = [["the", "new", "bank", "was", "large"], ["he", "said", "."], ["she", "was", "in", "the", "country"],
              ["those", "news", "were", "in", "the", "country"]]


@pytest.fixture(scope="module")
def cpmi_store(tmp_path_factory, tiny_bert_dir) -> Path:
    """A CPMI store (--context 6) of CPMI_WORDS, each sentence a chain whose last word is the gold root."""
    folder = tmp_path_factory.mktemp("cpmi")
    blocks = ["\n".join(f"{i}\t{w}\t{w}\tX\tX\t_\t{0 if i == len(ws) else i + 1}\tdep\t_\t_"
                        for i, w in enumerate(ws, 1)) for ws in CPMI_WORDS]
    (folder / "c.conllu").write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    store = folder / "st"
    assert main(["impact", str(folder / "c.conllu"), "--model", str(tiny_bert_dir), "--metric", "cpmi", "--context",
                 "6", "--layers", "-1", "-q", "-o", str(store)]) == 0
    return store


def stored_matrices(store: Path) -> list[np.ndarray]:
    """Each sentence's word-level F at the last stored layer, read from the shards with safetensors."""
    from safetensors.numpy import load_file

    manifest = json.loads((store / "manifest.json").read_text(encoding="utf-8"))
    entries = sorted(manifest["sentences"], key=lambda e: e["index"])
    return [load_file(str(store / e["shard"]))[f"{e['key']}/impact"][-1][1:, 1:].astype(np.float64) for e in entries]


def best_edges(trees: np.ndarray, score: np.ndarray) -> set[frozenset]:
    """The undirected edges of the trees (rows of heads, 0 = ROOT) of highest total ``score[head, dependent]``
    (on a symmetric W a tree and its reorientations tie: they share their edges); no near-tie otherwise."""
    totals = score[trees, np.arange(1, trees.shape[1] + 1)].sum(axis=1)
    top = [edges(t) for t in trees[totals > totals.max() - 1e-6]]
    assert all(e == top[0] for e in top), "a near-tie between other trees: the brute force cannot tell"
    return top[0]


def edges(heads) -> set[frozenset]:
    return {frozenset((d, int(h))) for d, h in enumerate(heads, 1) if h}


def hand_decoded(decoder: str, W: np.ndarray) -> set[frozenset]:
    """The undirected edges the decoder is documented to choose on W, by brute force over every tree:
    mst: the maximum spanning tree, an edge weighing max(W[i, j], W[j, i]); mst-projective: Eisner's best
    projective tree on W[head, dependent], ROOT -50 per child; eisner: the best projective tree under the
    gold root (the last word) on W[dependent, head]."""
    n = len(W)
    score = np.zeros((n + 1, n + 1))
    if decoder == "mst":    # every undirected tree once: rooted at word 1
        trees = all_trees(n)
        trees = trees[(trees[:, 0] == 0) & (trees[:, 1:] != 0).all(axis=1)]
        score[1:, 1:] = np.maximum(W, W.T)
    elif decoder == "mst-projective":
        trees = all_trees(n, projective=True)
        score[0, :], score[1:, 1:] = -50.0, W
    else:
        trees = all_trees(n, projective=True)
        trees = trees[(trees == 0).sum(axis=1) == 1]
        trees = trees[trees[:, n - 1] == 0]
        score[1:, 1:] = W.T
    return best_edges(trees, score)


def symmetrized(F: np.ndarray, mode: str, absolute: bool) -> np.ndarray:
    """As the README says: |F| first (--absolute), then F + Fᵀ (sum) or the lower triangle mirrored (tril)."""
    M = np.abs(F) if absolute else F
    if mode == "sum":
        return M + M.T
    if mode == "tril":
        return np.array([[M[max(i, j), min(i, j)] if i != j else 0.0 for j in range(len(M))] for i in range(len(M))])
    return M


CASES = [("mst", "none", False), ("mst", "none", True), ("mst", "sum", False), ("mst", "sum", True),
         ("mst-projective", "sum", False), ("mst-projective", "tril", True), ("eisner", "none", False),
         ("eisner", "none", True)]


def test_cpmi_trees_follow_every_decoder_symmetrization_and_absolute(cpmi_store, tmp_path, capsys):
    """The written trees against brute force on the stored values (issue 39, item 17): --absolute reaches the
    decoder through parse, with --symmetrize none too."""
    matrices = stored_matrices(cpmi_store)
    assert all((F < -1e-3).any() and (F > 1e-3).any() for F in matrices)   # both signs: |F| is another matrix
    manifest = json.loads((cpmi_store / "manifest.json").read_text())
    assert (manifest["metric"], manifest["subword"], manifest["context"]) == ("cpmi", "sum", 6)
    want = {}
    for decoder, mode, absolute in CASES:
        out = tmp_path / f"{decoder}-{mode}-{absolute}.conllu"
        extra = ["--symmetrize", mode] + (["--absolute"] if absolute else [])
        code, _, err = run_args(capsys, "parse", cpmi_store, "--decoder", decoder, "-o", out, "-q", *extra)
        assert code == 0, err
        want[decoder, mode, absolute] = [hand_decoded(decoder, symmetrized(F, mode, absolute)) for F in matrices]
        assert [edges(h) for h in heads_of(out)] == want[decoder, mode, absolute], (decoder, mode, absolute)
        meta = json.loads(Path(f"{out}.meta.json").read_text())
        assert meta["impact"]["context"] == 6 and meta["settings"]["absolute"] == absolute
    for decoder, mode in (("mst", "none"), ("mst", "sum"), ("eisner", "none")):   # so that the test can fail
        assert want[decoder, mode, True] != want[decoder, mode, False], (decoder, mode)


def test_a_cpmi_store_resumes_with_nothing_to_do_and_refuses_another_context(cpmi_store, tiny_bert_dir, capsys):
    corpus = cpmi_store.parent / "c.conllu"
    args = ["impact", corpus, "--model", tiny_bert_dir, "--metric", "cpmi", "--layers", "-1", "-o", cpmi_store,
            "--resume", "-q"]
    code, _, err = run_args(capsys, *args, "--context", "6")
    assert code == 0, err   # a complete store resumes with nothing to do
    code, _, err = run_args(capsys, *args, "--context", "0")
    assert code == 1 and "context" in err and err.count("\n") == 1


def test_faithful_cpmi_defaults(tiny_bert_dir, tmp_path, capsys):
    out = tmp_path / "f.conllu"
    code, _, err = run_args(capsys, "parse", MINI, "--model", tiny_bert_dir, "--metric", "cpmi", "--faithful",
                       "--context", "4", "-o", out, "-q")
    assert code == 0, err
    meta = json.loads(Path(f"{out}.meta.json").read_text())
    assert meta["settings"]["decoder"] == "mst-projective" and meta["settings"]["symmetrize"] == "sum"
    assert meta["impact"]["tokenize"] == "words-ptb" and meta["impact"]["context"] == 4
    code, out, err = run_args(capsys, "eval", out, "--gold", MINI, "--hoover-uuas", "-q")
    assert code == 0, err
    assert "| Hoover UUAS |" in next(line for line in out.splitlines() if "| Name" in line)


@pytest.mark.parametrize("args, message", [
    (["--metric", "cpmi", "--faithful", "--decoder", "eisner"], "mst-projective or mst"),
    (["--metric", "cpmi", "--subword", "avg"], "--subword sum only"),
    (["--metric", "cpmi", "--tokenize", "text", "--context", "3"], "--context"),
])
def test_one_line_refusals(tiny_bert_dir, tmp_path, capsys, args, message):
    code, out, err = run_args(capsys, "parse", MINI, "--model", tiny_bert_dir, *args, "-o", tmp_path / "x.conllu", "-q")
    assert code == 1 and out == "" and message in err and err.count("\n") == 1
    assert not (tmp_path / "x.conllu").exists()


def test_no_mlm_head_and_stdin_context_are_refused(no_head_dir, tmp_path, capsys, monkeypatch):
    code, _, err = run_args(capsys, "parse", MINI, "--model", no_head_dir, "--metric", "cpmi",
                            "-o", tmp_path / "x.conllu", "-q")
    assert code == 1 and err.count("\n") == 1 and "masked-LM head" in err and "cpmi" in err
    monkeypatch.setattr("sys.stdin", io.StringIO("a b c\n"))
    code, _, err = run_args(capsys, "parse", "-", "--metric", "cpmi", "--context", "5", "--root", "free",
                       "-o", tmp_path / "y.conllu", "-q")
    assert code == 1 and err.count("\n") == 1 and "standard input" in err


def test_unknown_symmetrization_is_a_usage_error(tmp_path, capsys):
    code, out, err = run_args(capsys, "parse", MINI, "--symmetrize", "mean", "-o", tmp_path / "x.conllu")
    assert code == 2 and out == "" and "invalid choice: 'mean'" in err


def test_python_api_faithful_cpmi(tiny_bert_dir):
    import pmask
    from pmask.corpora import read_corpus

    sents = read_corpus(MINI)
    parsed = pmask.parse(sents, model=str(tiny_bert_dir), metric="cpmi", faithful=True, context=4)
    assert len(parsed) == len(sents) and all(p.heads is not None for p in parsed)
    again = pmask.parse(sents, model=str(tiny_bert_dir), metric="cpmi", faithful=True, context=4,
                        decoder="mst-projective", symmetrize="sum")
    assert [p.heads.tolist() for p in parsed] == [p.heads.tolist() for p in again]


# ------------------------------------------ probe distortion and decoder cky: trees, stores, refusals before model work

@pytest.fixture()
def text(tmp_path):
    path = tmp_path / "tiny.txt"
    path.write_text("\n".join(" ".join(s[:7]) for s in TINY_SENTENCES[:4]) + "\n", encoding="utf-8")
    return path


def bracket_spans(line: str) -> tuple[list[str], frozenset]:
    """The words of a bracketed tree and its spans [left, right) of two words or more, read by hand."""
    words: list[str] = []
    spans, starts = set(), []
    for token in line.replace("(", " ( ").replace(")", " ) ").split():
        if token == "(":
            starts.append(None)            # the label comes next
        elif token == ")":
            left = starts.pop()
            if len(words) - left >= 2:
                spans.add((left, len(words)))
        elif starts and starts[-1] is None:
            starts[-1] = len(words)        # the label
        else:
            words.append(token)
    return words, frozenset(spans)


def test_parse_defaults_to_cky_and_a_store_gives_the_same_trees(tiny_bert_dir, text, tmp_path, capsys):
    """The trees are the minimum-distortion binary trees of the naive reference's charts (the paper's definitions
    on Hugging Face forwards, tests/perturb/probes/test_distortion.py), found by brute force over every binary
    tree (tests/trees/test_cky.py): no pmask probe or decoder in the expectation (issue 39, item 17)."""
    direct, stored = tmp_path / "direct.txt", tmp_path / "stored.txt"
    code, _, err = run(["parse", text, "--model", tiny_bert_dir, "--probe", "distortion", "--metric", "sub",
                        "--layer", 2, "--root", "free", "-q", "-o", direct], capsys)
    assert code == 0, err
    meta = json.loads((tmp_path / "direct.txt.meta.json").read_text(encoding="utf-8"))
    assert meta["settings"]["decoder"] == "cky" and meta["impact"]["probe"] == "distortion"
    assert meta["impact"]["metric"] == "sub"
    naive = NaiveDistortion(tiny_bert_dir, 2)
    lines = direct.read_text(encoding="utf-8").splitlines()
    sentences = [line.split() for line in text.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == len(sentences) == 4 and [bracket_spans(line)[0] for line in lines] == sentences
    for words, line in list(zip(sentences, lines))[:2]:   # two of them: the naive reference runs ~150 inputs each
        assert brute_force(naive.chart(words, "sub")) == {bracket_spans(line)[1]}, line   # one minimum: the tree

    store = tmp_path / "store"
    code, _, err = run(["impact", text, "--model", tiny_bert_dir, "--probe", "distortion", "--metric", "sub",
                        "--layers", "all", "-q", "-o", store], capsys)
    assert code == 0, err
    manifest = json.loads((store / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["probe"] == "distortion" and "span chart" in manifest["definitions"]["matrix"]
    code, _, err = run(["parse", store, "--layer", 2, "--root", "free", "-q", "-o", stored], capsys)
    assert code == 0, err
    assert stored.read_text(encoding="utf-8") == direct.read_text(encoding="utf-8")
    code, _, err = run(["parse", store, "--layer", 2, "--decoder", "cky", "--faithful", "-q", "-o", stored], capsys)
    assert code == 0, err
    code, _, err = run(["heatmap", store, "--sentence", "0-1", "--pred", stored, "-q", "-o", tmp_path / "maps"],
                       capsys)
    assert code == 0, err
    assert len(list((tmp_path / "maps").glob("*.png"))) == 2


@pytest.mark.parametrize("args, message", [
    (["--probe", "distortion", "--decoder", "mart"], "--probe distortion gives span charts, which --decoder mart"),
    (["--probe", "distortion", "--decoder", "eisner", "--root", "free"], "which --decoder eisner cannot read"),
    (["--probe", "pair", "--decoder", "cky"], "--decoder cky reads span charts (probe distortion), not the word-pair"),
    (["--probe", "distance", "--decoder", "cky"], "--decoder cky reads span charts"),
    (["--probe", "pair", "--decoder", "cky", "--faithful"], "--decoder cky reads span charts"),
    (["--probe", "distortion", "--decoder", "right-branching", "--faithful"],
     "is the authors' pipeline, whose decoder"),
])
def test_impossible_pairings_are_refused_in_one_line_before_the_model(text, tmp_path, capsys, args, message):
    missing = tmp_path / "no-such-model"      # loading it would fail: the refusal must come first
    suffix = ".conllu" if "eisner" in args else ".txt"
    code, out, err = run(["parse", text, "--model", missing, *args, "-o", tmp_path / f"out{suffix}"], capsys)
    assert code == 1 and out == ""
    lines = [line for line in err.splitlines() if line.startswith("pmask: error")]
    assert len(lines) == 1 and message in lines[0], err
    assert not list(tmp_path.glob("out*"))


# ------------------------------------------------- parse follows the input's task (PTB input: the constituency decoder)

DATA = Path(__file__).resolve().parents[2] / "data"

MRG, CONLLU, TEXT = DATA / "mini.mrg", DATA / "mini.conllu", DATA / "mini.txt"

NO_MODEL = "/nonexistent/model"   # a refusal that names it came after the checks


@pytest.mark.parametrize("path, decoder", [(MRG, "mart"), (CONLLU, "eisner"), (TEXT, "eisner")])
def test_the_default_decoder_follows_the_gold_trees_of_the_input(path, decoder):
    def default_decoder(sentences):
        return resolve(Request(), Inputs.of(sentences)).decoding.decoder

    assert default_decoder(read_corpus(path)) == decoder
    assert default_decoder([]) == "eisner"
    assert default_decoder([Sentence(id="1", words=["a", "b"], tree=read_corpus(MRG)[0].tree)]) == "mart"


def test_parse_defaults_to_mart_on_ptb_input(tmp_path, tiny_bert_dir, capsys):
    out = tmp_path / "wsj.txt"
    code, _, err = run(["parse", MRG, "--model", tiny_bert_dir, "-q", "-o", out], capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "wsj.txt.meta.json").read_text())["settings"]["decoder"] == "mart"
    assert all(line.startswith("(") for line in out.read_text(encoding="utf-8").splitlines())
    store = tmp_path / "store"   # a store made from PTB input: the same default
    assert run(["impact", MRG, "--model", tiny_bert_dir, "-q", "-o", store], capsys)[0] == 0
    code, _, err = run(["parse", store, "-q", "-o", tmp_path / "again.txt"], capsys)
    assert code == 0, err
    assert (tmp_path / "again.txt").read_text(encoding="utf-8") == out.read_text(encoding="utf-8")


@pytest.mark.parametrize("source, flags, output, says", [
    (MRG, ["--decoder", "right-chain", "--root", "free"], "x.txt", "name the output .conllu"),
    (CONLLU, ["--decoder", "eisner", "--model", NO_MODEL], "x.txt", "name the output .conllu"),
    (CONLLU, ["--decoder", "right-chain", "--root", "free"], "x", "name the output .conllu"),
    (MRG, ["--decoder", "right-branching"], "x.conllu", "not CoNLL-U"),
    (MRG, ["--decoder", "mart", "--model", NO_MODEL], "x.conll", "not CoNLL-U"),
    (MRG, ["--model", NO_MODEL], "x.conllu", "not CoNLL-U"),   # the default decoder, mart
])
def test_an_output_named_for_the_other_kind_of_tree_is_refused_before_any_work(tmp_path, capsys, source, flags,
                                                                                output, says):
    code, _, err = run(["parse", source, *flags, "-o", tmp_path / output], capsys)
    assert code == 1 and err.count("\n") == err.count("pmask: error:") + err.count("pmask: read"), err
    assert f"{tmp_path / output}: --decoder" in err and says in err and NO_MODEL not in err
    assert list(tmp_path.iterdir()) == []


def test_a_dependency_decoder_on_ptb_input_points_to_the_constituency_decoders(tmp_path, capsys):
    code, _, err = run(["parse", MRG, "--decoder", "right-chain", "--root", "gold", "-o", tmp_path / "x.conllu"],
                       capsys)
    assert code == 1 and "pmask: error:" in err
    assert "bracketed tree" in err and "--decoder mart" in err and "--root free" in err
    code, _, err = run(["parse", MRG, "--decoder", "right-chain", "-q", "-o", tmp_path / "x.conllu"], capsys)
    assert code == 0, err   # no gold heads: the root is free by default; dependency trees over PTB words
    code, _, err = run(["parse", TEXT, "--decoder", "right-chain", "--root", "gold", "-o", tmp_path / "t.conllu"],
                       capsys)
    assert code == 1 and "has none; use --root free" in err   # text: no gold of either kind


def test_layer_out_of_range_does_not_offer_layer_zero_to_a_decoder(tiny_bert_dir, tmp_path, capsys):
    assert main(["parse", str(DATA / "mini.conllu"), "--model", str(tiny_bert_dir), "--layer", "9",
                 "-o", str(tmp_path / "p.conllu"), "-q"]) == 1
    err = capsys.readouterr().err
    layers = re.search(r"with (\d+) layers", err)
    assert layers, err
    n = int(layers.group(1))
    assert "0.." not in err and f"1..{n}" in err and f"-{n}..-1" in err   # the range `parse` accepts
    assert main(["parse", str(DATA / "mini.conllu"), "--model", str(tiny_bert_dir), "--layer", "0",
                 "-o", str(tmp_path / "p.conllu"), "-q"]) == 1   # and 0 is refused, as the message implies


def _conllu(sent_id: str, words: list[str]) -> str:
    rows = [f"{k}\t{w}\t{w}\tX\tX\t_\t{0 if k == 1 else 1}\t{'root' if k == 1 else 'dep'}\t_\t_"
            for k, w in enumerate(words, start=1)]
    return f"# sent_id = {sent_id}\n" + "\n".join(rows) + "\n\n"


def test_too_long_names_the_right_sentence(tmp_path, capsys, tiny_bert_dir):
    """The tiny model takes 64 tokens: the third sentence (line 9 of the file) is skipped, and the message
    names it by file, line and id, also when a cache store already holds the first sentence."""
    corpus = tmp_path / "long.conllu"
    corpus.write_text(_conllu("s1", ["a", "cat"]) + _conllu("s2", ["dogs", "bark"])
                      + _conllu("s3", ["the"] * 80), encoding="utf-8")
    cache = tmp_path / "cache"
    assert run(["parse", corpus, "--limit", 1, "--model", tiny_bert_dir, "--store", cache, "-q",
                "-o", tmp_path / "one.conllu"], capsys)[0] == 0
    code, _, err = run(["parse", corpus, "--model", tiny_bert_dir, "--store", cache, "-o", tmp_path / "all.conllu"],
                       capsys)
    assert code == 0, err
    told = [line for line in err.splitlines() if ("too long for" in line or "exceed" in line)
            and "to compute:" not in line]   # the cost line counts it (by id), before any model work
    assert told and all(f"{corpus}:9 (sentence s3)" in line for line in told), err
    assert not any("s2" in line or "sentence 1 " in line for line in told), err
    assert len(told) == 1, err   # said once, not by the engine and by the store again


# ------------------------------------------------- where a value came from, in the refusal (issue 39.14c)

def test_faithful_cpmi_context_on_a_short_file_says_it_comes_from_faithful(tmp_path, capsys):
    code, _, err = run(["parse", CONLLU, "--model", NO_MODEL, "--metric", "cpmi", "--faithful",
                        "-o", tmp_path / "x.conllu"], capsys)
    errors = [line for line in err.splitlines() if line.startswith("pmask: error:")]
    assert code == 1 and len(errors) == 1 and NO_MODEL not in err   # refused before any model work
    assert "--faithful --metric cpmi gives each sentence 30 words of context" in errors[0]
    assert "holds 18 words; give --context 18 or less" in errors[0] and "asked for" not in errors[0]
    code, _, err = run(["parse", CONLLU, "--model", NO_MODEL, "--metric", "cpmi", "--context", "40",
                        "-o", tmp_path / "x.conllu"], capsys)
    assert code == 1 and "--context 40 asks for 40 words of context, but the file holds 18 words" in err
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------- settings a decoder ignores; --faithful recorded (issue 39.5, 39.13)

def _settings(path: Path) -> dict:
    return json.loads(Path(f"{path}.meta.json").read_text(encoding="utf-8"))["settings"]


def test_cky_refuses_symmetrize_and_records_only_what_it_reads(tiny_bert_dir, tmp_path, capsys):
    store = tmp_path / "store"
    assert run(["impact", MRG, "--model", tiny_bert_dir, "--probe", "distortion", "-q", "-o", store], capsys)[0] == 0
    for flags, named in ((["--symmetrize", "tril"], "--symmetrize"), (["--absolute"], "--absolute")):
        code, _, err = run(["parse", store, *flags, "-o", tmp_path / "x.txt"], capsys)
        assert code == 1 and err.count("pmask: error:") == 1 and f"--decoder cky takes no {named}" in err
        assert not (tmp_path / "x.txt").exists()
    for flags, faithful in (([], False), (["--faithful"], True)):
        out = tmp_path / f"{faithful}.txt"
        assert run(["parse", store, *flags, "-q", "-o", out], capsys)[0] == 0
        assert _settings(out) == {"decoder": "cky", "layer": -1, "faithful": faithful, "seed": 0}


def test_faithful_distance_is_recorded_and_shown_by_eval(tiny_bert_dir, tmp_path, capsys):
    shown = {}
    for flags, faithful in (([], False), (["--faithful"], True)):
        out = tmp_path / f"{faithful}.txt"
        code, _, err = run(["parse", MRG, "--model", tiny_bert_dir, "--probe", "distance", "--decoder",
                            "distance-split", *flags, "-q", "-o", out], capsys)
        assert code == 0, err
        assert _settings(out)["faithful"] is faithful
        code, table, _ = run(["eval", out, "--gold", MRG, "-q"], capsys)
        shown[faithful] = next(line for line in table.splitlines() if "distance-split (" in line)
    assert "faithful=True" in shown[True] and "faithful=False" in shown[False]


def test_raw_text_is_parsed_with_a_free_root_by_default(tmp_path, capsys):
    out = tmp_path / "t.conllu"
    code, _, err = run(["parse", TEXT, "--decoder", "right-chain", "-q", "-o", out], capsys)
    assert code == 0, err
    assert _settings(out)["root"] == "free" and [s.heads for s in read_corpus(out)][0][-1] == 0
    code, _, err = run(["parse", TEXT, "--decoder", "right-chain", "--root", "gold", "-o", tmp_path / "g.conllu"],
                       capsys)
    assert code == 1 and "has none; use --root free" in err   # asked for: refused as before


# ---------------------------------------------------------------------------- issue 45: a causal model's trees

@pytest.fixture(scope="module")
def causal(tmp_path_factory):
    from family_impacts import causal_model

    folder, corpus = causal_model(tmp_path_factory)
    store = tmp_path_factory.mktemp("causal-store") / "store"
    assert main(["impact", str(corpus), "--model", str(folder), "--layers", "1,2", "-q", "-o", str(store)]) == 0
    return folder, corpus, store


def test_a_causal_model_decodes_by_its_familys_defaults(causal, tmp_path, capsys):
    """Issue 45, items 3 and 6: without --decoder a causal model's one-sided matrix (only j < i filled) is
    decoded by the family's undirected decoder, symmetrised by sum (the "model" layer of the resolver), from the
    corpus and from its store alike: the trees' undirected edges are the maximum spanning tree of F + F^T
    (Kruskal, written in the test) over the stored matrix."""
    from family_impacts import max_spanning_edges

    from pmask.perturb.store import ImpactStore

    folder, corpus, store = causal
    stored = {s.id: s.layer(-1) for s in ImpactStore.open(store)}
    for F in stored.values():
        assert np.triu(F, 1).max() == 0 and np.tril(F, -1).max() > 0      # one-sided: only j < i
    for source, extra in ((corpus, ["--model", str(folder)]), (store, [])):
        out = tmp_path / f"{Path(source).name}.conllu"
        assert main(["parse", str(source), *extra, "-q", "-o", str(out)]) == 0, capsys.readouterr().err
        meta = json.loads(Path(str(out) + ".meta.json").read_text())
        assert (meta["settings"]["decoder"], meta["settings"]["symmetrize"]) == ("mst", "sum")
        assert meta["impact"]["probe"] == "pair" and meta["impact"]["metric"] == "dist"
        for sent in read_corpus(out):
            F = stored[sent.id]
            edges = {frozenset((k, h)) for k, h in enumerate(sent.heads, start=1) if h}
            assert edges == max_spanning_edges(F + F.T), sent.id
    report = tmp_path / "report.html"
    assert main(["report", str(tmp_path / "gold.conllu.conllu"), "--gold", str(corpus), "-q", "-o",
                 str(report)]) == 0, capsys.readouterr().err
    assert "<html" in report.read_text(encoding="utf-8").lower()


def test_what_a_causal_model_cannot_run_is_refused_before_it_loads(causal, tmp_path, capsys, monkeypatch):
    """Issue 45, item 7: --metric prob (no mask token), --probe distortion, documents of EDUs and Wu et al.'s
    --faithful pipeline decoded by eisner (a directed decoder: both sides of the matrix) on a causal model are
    refused by the one gate (pipeline.request.check_request, the family's refusal) before the model loads:
    one line, exit 1, the outputs already there untouched."""
    from pmask.perturb.models import load

    folder, corpus, _ = causal
    monkeypatch.setattr(load, "load_model", lambda *a, **k: pytest.fail("the model was loaded"))
    edus = Path(__file__).resolve().parents[2] / "data" / "scidtb"
    old = tmp_path / "old.conllu"
    old.write_text("kept\n")
    folder_out = tmp_path / "old-store"
    folder_out.mkdir()
    (folder_out / "keep").write_text("kept\n")
    runs = [(["parse", str(corpus), "--metric", "prob", "-o", str(old)], "causal models take metric"),
            (["parse", str(corpus), "--probe", "distortion", "-o", str(old)], "causal models take probe"),
            (["parse", str(corpus), "--faithful", "-o", str(old)], "give --decoder mst-projective or mst"),
            (["parse", str(edus), "-o", str(tmp_path / "trees")], "causal models take unit word, not edu"),
            (["impact", str(corpus), "--metric", "prob", "-o", str(folder_out), "--overwrite"],
             "causal models take metric"),
            (["impact", str(corpus), "--metric", "prob", "--dry-run", "-o", str(tmp_path / "s")],
             "causal models take metric"),
            (["sweep", str(corpus), "--metric", "prob"], "causal models take metric"),
            (["sweep", str(corpus), "--probe", "pair,distortion"], "causal models take probe"),
            (["bench", str(corpus), "--metrics", "dist,prob", "-o", str(folder_out), "--rescore"],
             "causal models take metric")]
    for args, why in runs:
        code = main([*args, "--model", str(folder), "-q"])
        err = capsys.readouterr().err
        assert code == 1 and why in err and str(folder) in err and len(err.strip().splitlines()) == 1, (args, err)
        assert old.read_text() == "kept\n" and sorted(p.name for p in folder_out.iterdir()) == ["keep"]
        assert not (tmp_path / "trees").exists()
