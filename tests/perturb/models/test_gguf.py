"""GGUF files: the header read and checked, the one-line refusals, de-quantisation by transformers, the cache.

A tiny random Llama (``make_tiny_llm("llama-bbpe")``) is written as a GGUF file here
(``pmask.perturb.testing.gguf_writer.write_gguf``, the ``gguf`` package's writer) in float32 and in Q8_0; the
expectation of every numeric test is the original transformers model in its folder, never pmask's
loading.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from pmask.common.errors import ModelError
from pmask.perturb.models import gguf as gguf_module
from pmask.perturb.models.gguf import cache_folder, cache_root, dequantised_folder, is_gguf, read_gguf

pytest.importorskip("gguf")

SENTENCE = "The committee approved the budget on Tuesday ."
# 2 blocks x (attn_norm, attn_q, attn_k, attn_v, attn_output, ffn_norm, ffn_gate, ffn_up, ffn_down) + token_embd,
# output_norm, output: the norms (2 per block + the final one) are vectors, the rest matrices
N_NORMS, N_MATRICES = 2 * 2 + 1, 2 * 7 + 2


@pytest.fixture(scope="module")
def llama_dir(tmp_path_factory):
    from pmask.perturb.testing.llm_zoo import make_tiny_llm

    return make_tiny_llm("llama-bbpe", tmp_path_factory.mktemp("llama"))


@pytest.fixture(scope="module")
def files(llama_dir, tmp_path_factory):
    from pmask.perturb.testing.gguf_writer import write_gguf

    out = tmp_path_factory.mktemp("gguf")
    return {q: write_gguf(llama_dir, out / f"tiny-{q}.gguf", q) for q in ("F32", "Q8_0")}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PMASK_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def logits(folder: Path, ids: torch.Tensor, **kwargs) -> torch.Tensor:
    from transformers import AutoModelForCausalLM

    with torch.no_grad():
        return AutoModelForCausalLM.from_pretrained(str(folder), **kwargs).eval()(ids).logits


def test_is_gguf():
    assert is_gguf("models/SmolLM2.Q4_1.gguf") and is_gguf("X.GGUF")
    assert not is_gguf("bert-base-uncased") and not is_gguf("model.gguf.txt")


def test_header_facts(files):
    facts = read_gguf(files["Q8_0"])
    assert facts.architecture == "llama" and facts.name == "tiny" and facts.file_type == "Q8_0"
    assert facts.tensor_types == {"F32": N_NORMS, "Q8_0": N_MATRICES}
    assert facts.size == files["Q8_0"].stat().st_size and facts.path == files["Q8_0"].resolve()
    import hashlib

    assert facts.sha256 == hashlib.sha256(files["Q8_0"].read_bytes()).hexdigest()
    described = facts.describe()
    json.dumps(described)
    assert described["quantisation"] == "Q8_0" and described["architecture"] == "llama"
    assert read_gguf(files["F32"]).file_type == "F32" and read_gguf(files["F32"]).tensor_types == {
        "F32": N_NORMS + N_MATRICES}


def test_header_without_transformers_reader_reads_the_same(files, monkeypatch):
    """The ``gguf`` package's reader (the fallback for a transformers without its own) gives the same facts."""
    want = read_gguf(files["Q8_0"])

    def no_fast_reader(path):
        return gguf_module._header_gguf(path)

    monkeypatch.setattr(gguf_module, "_header", no_fast_reader)
    assert read_gguf(files["Q8_0"]) == want


def test_dequantised_model_equals_the_original(llama_dir, files, cache):
    from transformers import AutoTokenizer

    ids = AutoTokenizer.from_pretrained(str(llama_dir))(SENTENCE, return_tensors="pt")["input_ids"]
    want = logits(llama_dir, ids)
    folder = dequantised_folder(read_gguf(files["F32"]))
    assert folder.parent == cache / "gguf" and (folder / "gguf.json").is_file()
    assert torch.equal(logits(folder, ids), want)                       # float32 weights: exactly the original
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    assert tokenizer(SENTENCE)["input_ids"] == ids[0].tolist()          # the vocabulary and merges came through
    q8 = logits(dequantised_folder(read_gguf(files["Q8_0"])), ids)
    scale = float(want.abs().max())
    assert 0 < float((q8 - want).abs().max()) < 0.1 * scale              # quantised: close, not equal
    config = json.loads((folder / "config.json").read_text())
    assert "quantization_config" not in config and config["model_type"] == "llama"


def test_second_load_reads_the_cache(files, cache, monkeypatch):
    facts = read_gguf(files["Q8_0"])
    folder = dequantised_folder(facts)
    stamp = (folder / "model.safetensors").stat().st_mtime_ns

    def no_conversion(*args, **kwargs):
        raise AssertionError("de-quantised again")

    monkeypatch.setattr(gguf_module, "_convert", no_conversion)
    assert dequantised_folder(facts) == folder
    assert (folder / "model.safetensors").stat().st_mtime_ns == stamp


def test_cache_key(files, cache, tmp_path):
    """Keyed by content: a copy elsewhere finds the same folder, a changed byte gets another one."""
    facts = read_gguf(files["F32"])
    copy = tmp_path / "elsewhere" / files["F32"].name
    copy.parent.mkdir()
    shutil.copy(files["F32"], copy)
    assert cache_folder(read_gguf(copy)) == cache_folder(facts)
    data = bytearray(copy.read_bytes())
    data[-1] ^= 0xFF                                                   # a weight's last byte
    copy.write_bytes(bytes(data))
    assert cache_folder(read_gguf(copy)) != cache_folder(facts)
    import transformers

    assert cache_folder(facts).name.endswith(f"-transformers-{transformers.__version__}")
    assert facts.sha256[:16] in cache_folder(facts).name


def test_incomplete_cache_folder_is_rebuilt(files, cache, llama_dir):
    facts = read_gguf(files["F32"])
    folder = cache_folder(facts)
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(b"half written")         # an interrupted run: no gguf.json
    assert dequantised_folder(facts) == folder and (folder / "gguf.json").is_file()
    from transformers import AutoTokenizer

    ids = AutoTokenizer.from_pretrained(str(llama_dir))(SENTENCE, return_tensors="pt")["input_ids"]
    assert torch.equal(logits(folder, ids), logits(llama_dir, ids))


def test_cache_root(monkeypatch, tmp_path):
    monkeypatch.delenv("PMASK_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "pmask" / "gguf"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_root() == Path.home() / ".cache" / "pmask" / "gguf"
    monkeypatch.setenv("PMASK_CACHE", str(tmp_path / "mine"))
    assert cache_root() == tmp_path / "mine" / "gguf"


def test_refusals(files, tmp_path, monkeypatch):
    def refused(path) -> str:
        with pytest.raises(ModelError) as err:
            read_gguf(path)
        message = str(err.value)
        assert "\n" not in message and str(path) in message
        return message

    assert "does not exist" in refused(tmp_path / "absent.gguf")
    text = tmp_path / "notes.gguf"
    text.write_text("not a model\n")
    assert "not a GGUF file" in refused(text)
    data = files["Q8_0"].read_bytes()
    for cut in (len(data) // 2, 40, len(data) - 1):                      # in the tensors, the header, the last byte
        truncated = tmp_path / f"cut-{cut}.gguf"
        truncated.write_bytes(data[:cut])
        assert "truncated" in refused(truncated)
    monkeypatch.setattr(gguf_module.importlib.util, "find_spec", lambda name: None)
    assert "pip install 'pmask[gguf]'" in refused(files["Q8_0"])


def test_a_sound_file_an_older_transformers_cannot_read_is_not_called_damaged(files, monkeypatch):
    """transformers 5.17 reads no Q4_1 tensor ("holds tensors of ggml type 3, which is not supported yet"): pmask
    called SmolLM2's sound GGUF "a truncated or damaged GGUF file". Where the gguf package reads the file whole,
    the line names transformers' version and the upgrade instead."""
    from transformers.integrations.gguf import reader

    def old_reader(path):
        raise NotImplementedError(f"{path} holds tensors of ggml type 3, which is not supported yet")

    monkeypatch.setattr(reader, "read_gguf_metadata", old_reader)
    monkeypatch.setattr(gguf_module, "_READ", {})
    with pytest.raises(ModelError) as err:
        read_gguf(files["Q8_0"])
    message = str(err.value)
    assert "damaged" not in message and "truncated" not in message and "\n" not in message
    assert "cannot read this GGUF file" in message and "pip install -U transformers" in message
    data = files["Q8_0"].read_bytes()
    cut = files["Q8_0"].with_name("cut-by-old-reader.gguf")
    cut.write_bytes(data[:len(data) // 2])                                # unreadable to both: damaged, as before
    with pytest.raises(ModelError, match="truncated or damaged"):
        read_gguf(cut)


def test_architecture_transformers_cannot_read(tmp_path):
    import gguf
    import numpy as np

    path = tmp_path / "encoder.gguf"
    writer = gguf.GGUFWriter(str(path), "bert")
    writer.add_block_count(1)
    writer.add_tensor("token_embd.weight", np.zeros((4, 8), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(ModelError, match=r"GGUF architecture 'bert' cannot be read by transformers .*llama"):
        read_gguf(path)


def test_unwritable_cache_is_one_line(files, tmp_path, monkeypatch):
    blocker = tmp_path / "file-not-folder"
    blocker.write_text("")
    monkeypatch.setenv("PMASK_CACHE", str(blocker))
    with pytest.raises(ModelError, match="cannot write the GGUF cache folder .*PMASK_CACHE"):
        dequantised_folder(read_gguf(files["F32"]))
    assert not any(p.name.startswith(".partial") for p in tmp_path.rglob("*"))


# ---------------------------------------------------------------------------- through load_model and the CLI

PUD = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "ud" / "UD_English-PUD" / "en_pud-ud-test.conllu"


def test_load_model_reads_a_gguf_file_as_a_causal_model(llama_dir, files, cache, monkeypatch):
    from pmask.perturb.models.load import load_model

    lm = load_model(str(files["Q8_0"]), device="cpu")
    assert lm.family.name == "causal" and lm.name == str(files["Q8_0"])
    described = lm.describe()
    assert described["family"] == "causal" and described["gguf"]["quantisation"] == "Q8_0"
    assert described["gguf"]["sha256"] == read_gguf(files["Q8_0"]).sha256
    assert described["gguf"]["tensor_types"] == {"F32": N_NORMS, "Q8_0": N_MATRICES}
    json.dumps(described)
    ids = lm.tokenizer(["The", "committee"], is_split_into_words=True, return_tensors="pt")["input_ids"]
    f32 = load_model(str(files["F32"]), device="cpu")
    with torch.no_grad():
        assert torch.equal(f32.model(ids).logits, logits(llama_dir, ids))   # the original model's numbers
    monkeypatch.setattr(gguf_module, "_convert", lambda *a, **k: pytest.fail("de-quantised again"))
    again = load_model(str(files["Q8_0"]), device="cpu")                # the cache: no second conversion
    with torch.no_grad():
        assert torch.equal(lm.model(ids).logits, again.model(ids).logits)


@pytest.mark.skipif(not PUD.is_file(), reason="shared PUD data not present")
def test_parse_with_a_gguf_model_and_its_bad_input(files, cache, tmp_path, capsys):
    from pmask.cli import main

    out = tmp_path / "cpmi.conllu"
    assert main(["parse", str(PUD), "--limit", "2", "--model", str(files["F32"]), "--metric", "cpmi", "--decoder",
                 "mst", "--symmetrize", "sum", "-q", "-o", str(out)]) == 0
    meta = json.loads(Path(str(out) + ".meta.json").read_text())
    assert "gguf" in json.dumps(meta) and '"family": "causal"' in json.dumps(meta)
    store = tmp_path / "store"
    assert main(["impact", str(PUD), "--limit", "1", "--model", str(files["F32"]), "--metric", "cpmi", "-q",
                 "-o", str(store)]) == 0
    manifest = json.loads((store / "manifest.json").read_text())
    facts = read_gguf(files["F32"]).describe()
    assert facts["sha256"] in json.dumps(manifest) and '"quantisation": "F32"' in json.dumps(manifest)
    assert '"architecture": "llama"' in json.dumps(manifest) and '"family": "causal"' in json.dumps(manifest)
    capsys.readouterr()
    kept = out.read_bytes()
    truncated = tmp_path / "cut.gguf"
    truncated.write_bytes(files["F32"].read_bytes()[:1000])
    not_gguf = tmp_path / "model.gguf"
    not_gguf.write_text("hello\n")
    for bad, why in ((truncated, "truncated"), (not_gguf, "not a GGUF file"),
                     (tmp_path / "none.gguf", "does not exist")):
        code = main(["parse", str(PUD), "--limit", "2", "--model", str(bad), "--metric", "cpmi", "--decoder", "mst",
                     "-q", "-o", str(out)])
        err = capsys.readouterr().err
        assert code == 1 and why in err and len(err.strip().splitlines()) == 1, err
        assert out.read_bytes() == kept                                  # nothing written over


def test_a_qwen2_gguf_file_is_its_original_model(tmp_path, cache):
    """Qwen2 (no rotary permutation in llama.cpp's layout, biases on q, k, v) through the same path."""
    from transformers import AutoTokenizer

    from pmask.perturb.models.load import load_model
    from pmask.perturb.testing.gguf_writer import write_gguf
    from pmask.perturb.testing.llm_zoo import make_tiny_llm

    folder = make_tiny_llm("qwen2", tmp_path / "qwen2")
    lm = load_model(str(write_gguf(folder, tmp_path / "qwen2.gguf")), device="cpu")
    ids = AutoTokenizer.from_pretrained(str(folder))(SENTENCE, return_tensors="pt")["input_ids"]
    assert lm.describe()["gguf"]["architecture"] == "qwen2" and lm.family.name == "causal"
    with torch.no_grad():
        assert torch.equal(lm.model(ids).logits, logits(folder, ids))
