"""Loading a masked language model + fast tokenizer (hub name or local directory).

Default dtype (``dtype=None``): ``float32`` on every device. Measured with
``benchmarks/impact_speed.py`` on the 2-core development CPU (AVX-512 with BF16 but no AMX): a
bf16 matmul peaks at ~150-170 GFLOP/s against ~300 GFLOP/s in float32, so the bf16 engine ran
1.4x faster than the float32 *reference* but ~1.7x slower than the float32 engine, and its impact
matrices deviated from float32 by up to 22% of their largest entry (random bert-base weights).
No GPU was available to measure; bf16 tensor cores are much faster there, but for a tool meant to
reproduce published numbers exactness wins, so CUDA users opt in with ``dtype="bfloat16"``.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from pmask.errors import ModelError

logger = logging.getLogger(__name__)

RANDOM_PREFIX = "random:"
RANDOM_SEED = 0  # torch.manual_seed used before random initialisation (the "random BERT" baseline)
# float64 is accepted for exactness checks (tests); it is never a default
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16, "float64": torch.float64,
          "fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


@dataclass
class LoadedModel:
    """A masked LM ready for the impact engine.

    ``num_layers`` = number of encoder layers L (valid engine layers are 0 = embeddings … L);
    ``max_length`` = most tokens (special tokens included) one input may have.
    """

    model: Any                      # a transformers *ForMaskedLM, eval mode, on ``device``
    tokenizer: Any                  # fast tokenizer
    name: str                       # as requested (without the ``random:`` prefix)
    revision: str | None            # requested revision
    commit: str | None              # resolved commit hash when known (config._commit_hash)
    device: torch.device
    dtype: torch.dtype
    num_layers: int
    max_length: int
    random_init: bool = False
    seed: int | None = None         # seed of the random initialisation (None for trained weights)
    model_type: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        """JSON-serialisable description for manifests: model identity and tokenizer settings."""
        import transformers

        tok = self.tokenizer
        tok_info = {
            "class": type(tok).__name__,
            "vocab_size": len(tok),
            "model_max_length": int(min(getattr(tok, "model_max_length", 0) or 0, 10**9)),
            "do_lower_case": getattr(tok, "do_lower_case", None),
            "add_prefix_space": getattr(tok, "add_prefix_space", None),
            "mask_token": tok.mask_token,
            "unk_token": tok.unk_token,
            "cls_token": getattr(tok, "cls_token", None),
            "sep_token": getattr(tok, "sep_token", None),
            "pad_token": tok.pad_token,
        }
        return {
            "name": self.name,
            "revision": self.revision,
            "commit": self.commit,
            "model_type": self.model_type,
            "model_class": type(self.model).__name__,
            "num_layers": self.num_layers,
            "hidden_size": int(getattr(self.model.config, "hidden_size", 0) or getattr(self.model.config, "dim", 0)),
            "max_length": self.max_length,
            "device": str(self.device),
            "dtype": str(self.dtype).replace("torch.", ""),
            "random_init": self.random_init,
            "seed": self.seed,
            "tokenizer": tok_info,
            "transformers_version": transformers.__version__,
            "torch_version": torch.__version__,
        }


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``auto`` → cuda if available else cpu; ``cpu``; ``cuda``/``cuda:k`` (checked)."""
    if device is None or str(device) == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as err:
        raise ModelError(f"unknown device {device!r} (use auto, cpu, cuda or cuda:K)") from err
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ModelError(f"device {device!r} requested but CUDA is not available")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ModelError(f"device {device!r} requested but only {torch.cuda.device_count()} CUDA device(s) exist")
    elif dev.type != "cpu":
        raise ModelError(f"unsupported device {device!r} (use auto, cpu, cuda or cuda:K)")
    return dev


def resolve_dtype(dtype: str | torch.dtype | None, device: torch.device) -> torch.dtype:
    """None → float32 (see the module docstring); else the named dtype."""
    if dtype is None:
        return torch.float32
    if isinstance(dtype, torch.dtype):
        if dtype not in DTYPES.values():
            raise ModelError(f"unsupported dtype {dtype} (use float32, bfloat16, float16 or float64)")
        return dtype
    key = str(dtype).replace("torch.", "")
    if key not in DTYPES:
        raise ModelError(f"unsupported dtype {dtype!r} (use float32, bfloat16, float16 or float64)")
    return DTYPES[key]


def _is_byte_level(tokenizer) -> bool:
    try:
        spec = json.loads(tokenizer.backend_tokenizer.to_str())
    except Exception:  # noqa: BLE001 - not a tokenizers-backed tokenizer
        return False
    return "ByteLevel" in json.dumps(spec.get("pre_tokenizer"))


def load_tokenizer(name_or_dir: str, revision: str | None = None):
    """The fast tokenizer of ``name_or_dir``; byte-level BPE ones get ``add_prefix_space=True``."""
    from transformers import AutoTokenizer

    looks_local = str(name_or_dir).startswith(("/", "./", "../", "~", "\\")) or Path(name_or_dir).exists()
    if looks_local and not Path(name_or_dir).expanduser().is_dir():
        raise ModelError(f"model directory {str(name_or_dir)!r} does not exist")
    try:
        tok = AutoTokenizer.from_pretrained(name_or_dir, revision=revision)
    except Exception as err:  # noqa: BLE001 - any loading failure becomes a one-line ModelError
        raise ModelError(f"cannot load tokenizer of model {name_or_dir!r}: {_one_line(err)}") from err
    if not getattr(tok, "is_fast", False):
        raise ModelError(f"model {name_or_dir!r} has no fast tokenizer ({type(tok).__name__}); "
                         "pmask needs word_ids() from a fast tokenizer")
    if _is_byte_level(tok) and not getattr(tok, "add_prefix_space", False):
        try:
            tok = AutoTokenizer.from_pretrained(name_or_dir, revision=revision, add_prefix_space=True)
        except Exception as err:  # noqa: BLE001
            raise ModelError(f"cannot load tokenizer of model {name_or_dir!r} with add_prefix_space=True: "
                             f"{_one_line(err)}") from err
    if tok.mask_token_id is None:
        raise ModelError(f"tokenizer of model {name_or_dir!r} has no mask token")
    return tok


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return (text[:300] + "…") if len(text) > 300 else (text or type(err).__name__)


def _max_length(model, tokenizer) -> int:
    config = model.config
    limits = []
    n_pos = getattr(config, "max_position_embeddings", None)
    if n_pos:
        emb = getattr(model.base_model, "embeddings", None)
        # RoBERTa-style position ids start after padding_idx
        pad_idx = getattr(emb, "padding_idx", None)
        limits.append(int(n_pos) - (int(pad_idx) + 1 if pad_idx is not None else 0))
    tmax = getattr(tokenizer, "model_max_length", None)
    if tmax and tmax < 10**7:
        limits.append(int(tmax))
    return min(limits) if limits else 512


def _num_layers(config) -> int:
    for attr in ("num_hidden_layers", "n_layers", "num_layers"):
        value = getattr(config, attr, None)
        if isinstance(value, int):
            return value
    raise ModelError(f"cannot tell the number of layers of model type {getattr(config, 'model_type', '?')!r}")


def load_model(name_or_dir: str, device: str | torch.device | None = "auto", dtype: str | torch.dtype | None = None,
               *, random_init: bool = False, revision: str | None = None) -> LoadedModel:
    """Load a masked LM and its fast tokenizer for the impact engine.

    ``name_or_dir``: a hub name or local directory; ``random:NAME`` (or ``random_init=True``) keeps
    NAME's config and tokenizer but initialises the weights randomly after
    ``torch.manual_seed(RANDOM_SEED)`` (= 0), the paper's "random BERT" baseline.
    ``device``: ``auto`` | ``cpu`` | ``cuda[:k]``; ``dtype``: ``float32`` | ``bfloat16`` | ``float16``
    | None (= float32; see the module docstring). Failures raise ``ModelError``.
    """
    from transformers import AutoConfig, AutoModelForMaskedLM

    name = str(name_or_dir)
    if name.startswith(RANDOM_PREFIX):
        name = name[len(RANDOM_PREFIX):]
        random_init = True
    dev = resolve_device(device)
    dt = resolve_dtype(dtype, dev)
    tokenizer = load_tokenizer(name, revision)
    try:
        if random_init:
            config = AutoConfig.from_pretrained(name, revision=revision)
            with torch.random.fork_rng(devices=[]):  # seeded, without disturbing the caller's RNG
                torch.manual_seed(RANDOM_SEED)
                model = AutoModelForMaskedLM.from_config(config)
        else:
            model = AutoModelForMaskedLM.from_pretrained(name, revision=revision)
    except Exception as err:  # noqa: BLE001 - any loading failure becomes a one-line ModelError
        raise ModelError(f"cannot load masked language model {name!r}: {_one_line(err)}") from err
    model = model.to(device=dev, dtype=dt).eval()
    for p in model.parameters():
        p.requires_grad_(False)
    config = model.config
    return LoadedModel(
        model=model, tokenizer=tokenizer, name=name, revision=revision,
        commit=getattr(config, "_commit_hash", None), device=dev, dtype=dt,
        num_layers=_num_layers(config), max_length=_max_length(model, tokenizer),
        random_init=random_init, seed=RANDOM_SEED if random_init else None,
        model_type=str(getattr(config, "model_type", "")),
    )
