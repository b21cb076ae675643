"""Loading a language model + fast tokenizer (hub name or local directory), by its model family.

The family (:class:`pmask.common.model_families.ModelFamily`) is recognised from the config before any
weights load; it names the transformers class that loads the model, whether the tokenizer needs a mask
token, and the encoder paths a run uses (:meth:`LoadedModel.encoder`).

Default dtype (``dtype=None``): ``float32`` on every device. Measured with
``benchmarks/impact_speed.py`` on the 2-core development CPU (AVX-512 with BF16 but no AMX): a
bf16 matmul peaks at ~150-170 GFLOP/s against ~300 GFLOP/s in float32, so the bf16 engine ran
1.4x faster than the float32 *reference* but ~1.7x slower than the float32 engine, and its impact
matrices deviated from float32 by up to 22% of their largest entry (random bert-base weights).
No GPU was available to measure; bf16 tensor cores are much faster there, but for a tool meant to
reproduce published numbers exactness wins, so CUDA users opt in with ``dtype="bfloat16"``.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from pmask.common.errors import ModelError
from pmask.common.library_output import CapturedOutput, relay
from pmask.common.model_families import ModelFamily
from pmask.common.options import DTYPES as DTYPE_NAMES
from pmask.common.options import metric_entry, split_random
from pmask.perturb.models.checkpoint import CheckpointParts, inspect_loading, randomly_initialised
from pmask.perturb.models.config import layer_count, load_config, locate, quiet_transformers
from pmask.perturb.models.gguf import is_gguf, model_folder
from pmask.perturb.models.tokenizer import load_tokenizer, one_line, prepare_tokenizer

__all__ = ["LoadedModel", "load_model", "load_tokenizer", "set_threads", "resolve_device", "resolve_dtype", "DTYPES",
           "RANDOM_SEED"]

RANDOM_SEED = 0  # torch.manual_seed used before random initialisation (the "random BERT" baseline)
# dtype names (pmask.common.options.DTYPES; "auto" = None = float32) -> torch dtypes, plus short aliases;
# float64 is accepted for exactness checks (tests); it is never a default
DTYPES: dict[str, torch.dtype] = {name: getattr(torch, name) for name in DTYPE_NAMES if name != "auto"}
DTYPES.update({"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16})

logger = logging.getLogger(__name__)


@dataclass
class LoadedModel:
    """A language model ready for the impact engine.

    ``num_layers`` = number of encoder layers L (valid engine layers are 0 = embeddings … L);
    ``max_length`` = most tokens (special tokens included) one input may have; ``checkpoint`` =
    which parts hold the checkpoint's trained weights (an encoder-only checkpoint has no trained
    masked-LM head: metric ``prob`` is refused); ``threads`` = torch's CPU threads set at load;
    ``family`` = its model family (how it is run: :meth:`encoder`).
    """

    model: torch.nn.Module          # the family's transformers class (a *ForMaskedLM), eval mode, on ``device``
    tokenizer: Any                  # fast tokenizer (a transformers TokenizersBackend)
    name: str                       # as requested (without the ``random:`` prefix)
    revision: str | None            # requested revision
    commit: str | None              # resolved commit hash when known (config._commit_hash)
    device: torch.device
    dtype: torch.dtype
    num_layers: int
    max_length: int
    family: ModelFamily
    random_init: bool = False
    seed: int | None = None         # seed of the random initialisation (None for trained weights)
    model_type: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    encoder_paths: Any = field(default=None, repr=False)   # what the family's inspect verified
    checkpoint: CheckpointParts | None = None
    threads: int | None = None

    def paths(self) -> Any:
        """The encoder paths its family verified (the masked family's fast path and MLM head), probed once, at
        load time or on first use."""
        if self.encoder_paths is None:
            self.encoder_paths = self.family.inspect(self)
        return self.encoder_paths

    def encoder(self, fast: bool | None = None) -> Any:
        """The ``pmask.perturb.encoders.encoder.Encoder`` of one run, as its family makes it: the verified fast
        path unless ``fast`` is False (True requires it)."""
        return self.family.encoder(self, fast)

    def check_metric(self, metric: str) -> None:
        """Raise ``ModelError`` now if this model cannot compute impact ``metric`` (before any work)."""
        refusal = self.paths().no_prob
        if refusal and metric_entry(metric).mlm_head:   # named: the metric asked for
            raise ModelError((self.checkpoint.refusal(self.name, metric) if self.checkpoint else None) or refusal)

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
            "checkpoint_class": self.checkpoint.checkpoint_class if self.checkpoint else None,
            "loaded": self.checkpoint.loaded() if self.checkpoint else None,
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
            **({"family": self.family.name} if self.family.recorded else {}),
            **({"gguf": self.extra["gguf"]} if "gguf" in self.extra else {}),
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


def resolve_dtype(dtype: str | torch.dtype | None) -> torch.dtype:
    """None or ``auto`` → float32 (see the module docstring); else the named dtype (``ModelError`` if unknown)."""
    if dtype is None or dtype == "auto":
        return torch.float32
    if isinstance(dtype, torch.dtype):
        if dtype not in DTYPES.values():
            raise ModelError(f"unsupported dtype {dtype} (use float32, bfloat16, float16 or float64)")
        return dtype
    key = str(dtype).replace("torch.", "")
    if key not in DTYPES:
        raise ModelError(f"unsupported dtype {dtype!r} (use float32, bfloat16, float16 or float64)")
    return DTYPES[key]


def _max_length(model, tokenizer) -> int:
    config = model.config
    limits = []
    n_pos = getattr(config, "max_position_embeddings", None)
    if n_pos and n_pos > 0:   # XLNet's -1: relative positions, no table
        emb = getattr(model.base_model, "embeddings", None)
        # RoBERTa-style position ids start after padding_idx
        pad_idx = getattr(emb, "padding_idx", None)
        limits.append(int(n_pos) - (int(pad_idx) + 1 if pad_idx is not None else 0))
    tmax = getattr(tokenizer, "model_max_length", None)
    if tmax and tmax < 10**7:
        limits.append(int(tmax))
    return min(limits) if limits else 512


def attention_heads(model: Any) -> int | None:
    """Attention heads per layer of a loaded model (from its config), None when it does not say."""
    config = getattr(getattr(model, "model", None), "config", None)
    value = getattr(config, "num_attention_heads", None) or getattr(config, "n_heads", None)
    return int(value) if value else None


def set_threads(threads: int | None) -> None:
    """Use ``threads`` CPU threads for torch's work in this process (None: leave torch's default).

    On a machine shared with other jobs fewer threads than cores can be faster (less contention).
    """
    if threads is None:
        return
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ModelError(f"threads must be a whole number of at least 1, not {threads!r}")
    torch.set_num_threads(threads)


def _load_weights(name: str, config: Any, family: ModelFamily, revision: str | None, local_only: bool,
                  random_init: bool) -> tuple[torch.nn.Module, CheckpointParts]:
    """The family's model class with the checkpoint's weights (or seeded random ones) and what it provided."""
    import transformers

    loader = getattr(transformers, family.loader)
    try:
        if random_init:
            with torch.random.fork_rng(devices=[]):  # seeded, without disturbing the caller's RNG
                torch.manual_seed(RANDOM_SEED)
                return loader.from_config(config), randomly_initialised(config)
        model, info = loader.from_pretrained(name, config=config, revision=revision, local_files_only=local_only,
                                             output_loading_info=True)
    except Exception as err:  # noqa: BLE001 - any loading failure becomes a one-line ModelError
        raise ModelError(f"cannot load {family.noun} {name!r}: {one_line(err)}") from err
    return model, inspect_loading(model, info, name)


def load_model(name_or_dir: str | Path, device: str | torch.device | None = "auto",
               dtype: str | torch.dtype | None = None, *, random_init: bool = False,
               revision: str | None = None, threads: int | None = None, note: bool = True) -> LoadedModel:
    """Load a masked LM and its fast tokenizer for the impact engine, checked on a probe sentence.

    Args:
        name_or_dir: a hub name, a local directory or a bundled model's name (``pmask-tiny-en``,
            see :mod:`pmask.perturb.models.bundled`); ``random:NAME`` (or ``random_init=True``)
            keeps NAME's config and tokenizer but initialises the weights randomly after
            ``torch.manual_seed(RANDOM_SEED)`` (= 0), the paper's "random BERT" baseline. An
            encoder-only checkpoint (``BertModel``, sentence-transformers, a fine-tuned
            classifier) is accepted for metrics ``dist`` and ``cos``; ``prob`` needs a trained
            masked-LM head and is refused for it.
        device: ``auto`` | ``cpu`` | ``cuda[:k]``.
        dtype: a name of :data:`pmask.common.options.DTYPES` or a torch dtype; None = float32.
        random_init: see above.
        revision: a hub revision.
        threads: torch's CPU threads for this process (None: torch's default); see :func:`set_threads`.
        note: say an encoder-only checkpoint in one INFO line (False: the caller is about to refuse the
            metric it asked for, which says it).

    Returns:
        A :class:`LoadedModel`. At load, the tokenizer is checked (pre-split words tokenise as
        running text), which parts the checkpoint provided is recorded (``describe()["loaded"]``;
        an encoder-only checkpoint is said in one INFO line), the fast path verified against the
        model's own forward, and the MLM head identified (``LoadedModel.paths()``). What
        transformers says while loading is logged at DEBUG level (one INFO line for anything
        pmask has not explained). An unreachable hub is detected within ``pmask.perturb.models.config.HUB_TIMEOUT_S``
        seconds and only the local cache is used.

    Raises:
        ModelError: one line naming the model and the reason (also: a checkpoint that lacks
            encoder weights, which would be random).

    Example:
        >>> lm = load_model("random:bert-base-uncased", device="cpu")   # doctest: +SKIP
        >>> lm.num_layers, lm.max_length                                 # doctest: +SKIP
        (12, 512)
    """
    name, prefixed = split_random(str(name_or_dir))
    random_init = random_init or prefixed
    dev = resolve_device(device)
    dt = resolve_dtype(dtype)
    set_threads(threads)
    bundled, where, local_only = locate(name)
    gguf = None
    if is_gguf(where):   # checked, then de-quantised once into a cached model folder
        with quiet_transformers():
            folder, gguf = model_folder(where)
        where = str(folder)
    captured, checkpoint = CapturedOutput(), None
    try:
        with quiet_transformers() as captured:
            config, family = load_config(where, revision, local_only)
            tokenizer = load_tokenizer(where, revision, local_files_only=local_only,
                                       needs_mask_token=family.needs_mask_token)
            prepare_tokenizer(tokenizer, family, name)
            model, checkpoint = _load_weights(where, config, family, revision, local_only, random_init)
    finally:   # also when loading failed: what the library said is then the best clue (-vv)
        relay(captured, logger, f"loading model {name!r}",
              explained=lambda message: checkpoint is not None and checkpoint.explains(message.text))
    said = checkpoint.note(name) if note else None
    if said:
        logger.info("%s", said)
    model = model.to(device=dev, dtype=dt).eval()
    for p in model.parameters():
        p.requires_grad_(False)
    config = model.config
    lm = LoadedModel(
        model=model, tokenizer=tokenizer, name=name, revision=revision,
        commit=getattr(config, "_commit_hash", None) or (bundled.commit if bundled else None), device=dev, dtype=dt,
        num_layers=layer_count(config), max_length=_max_length(model, tokenizer), family=family,
        random_init=random_init, seed=RANDOM_SEED if random_init else None,
        model_type=str(getattr(config, "model_type", "")), checkpoint=checkpoint, threads=threads,
        extra={"gguf": gguf.describe()} if gguf is not None else {},
    )
    lm.paths()
    return lm
