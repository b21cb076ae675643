"""A model's config and family, read before any weights load (torch-free until transformers is asked).

Where a model name points (:func:`locate`: a bundled model's folder, a local folder or a hub name, and whether
the hub can be reached), its config and the :class:`~pmask.common.model_families.ModelFamily` that recognises
it (:func:`load_config`, :func:`model_family`), with transformers' chatter captured
(:func:`quiet_transformers`). :func:`pmask.perturb.models.load.load_model` starts here; so does anything
that needs a model's family before loading it (a refusal before any model work).
"""
from __future__ import annotations

import contextlib
import os
import socket
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import urlparse

from pmask.common.errors import ModelError
from pmask.common.library_output import CapturedOutput, capture_library_output
from pmask.common.model_families import ModelFamily, detect_family, unrecognised
from pmask.common.options import split_random
from pmask.perturb.models.bundled import BundledModel, bundled_model
from pmask.perturb.models.gguf import gguf_config, is_gguf, read_gguf
from pmask.perturb.models.tokenizer import one_line

HUB_TIMEOUT_S = 2.0     # how long to wait for the hub before treating it as unreachable


def hub_reachable(timeout: float = HUB_TIMEOUT_S) -> bool:
    """False when ``HF_HUB_OFFLINE`` is set or the hub's host cannot be reached within ``timeout`` seconds."""
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        return False
    url = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    try:
        with socket.create_connection((url.hostname or "huggingface.co", url.port or 443), timeout=timeout):
            return True
    except OSError:
        return False


def locate(name: str) -> tuple[BundledModel | None, str, bool]:
    """Where model ``name`` (without ``random:``) is read from: its bundled model (or None), the folder or hub
    name to read, and whether only local files may be read (the hub unreachable); a one-line
    :class:`ModelError` for a folder that does not exist."""
    if is_gguf(name):   # a GGUF file: its header is checked by load_config, no hub
        return None, name, True
    bundled = bundled_model(name)   # pmask-tiny-en & co.: a folder inside the package, named by its name
    where = str(bundled.path) if bundled is not None else name
    local_dir = Path(where).expanduser().is_dir()
    if not local_dir and (name.startswith(("/", "./", "../", "~", "\\")) or Path(name).exists()):
        raise ModelError(f"model directory {name!r} does not exist")
    return bundled, where, not local_dir and not hub_reachable()


def load_config(name: str, revision: str | None, local_files_only: bool) -> tuple[Any, ModelFamily]:
    """The config and family of the model at ``name`` (a hub name, a folder or a GGUF file, whose header is
    checked: :func:`pmask.perturb.models.gguf.read_gguf`); refuses remote-code models and those of no family in
    one line."""
    from transformers import AutoConfig

    if is_gguf(name):
        config = gguf_config(read_gguf(name))
        return config, detect_family(config) or _refuse(name, config)
    folder = Path(name).expanduser()
    if folder.is_dir() and not (folder / "config.json").is_file():   # transformers would blame `model_type`
        raise ModelError(f"model folder {name!r} has no config.json (a model folder holds config.json, the "
                         "tokenizer files and the weights, as save_pretrained writes them)")
    try:
        config = AutoConfig.from_pretrained(name, revision=revision, local_files_only=local_files_only)
    except Exception as err:  # noqa: BLE001 - any loading failure becomes a one-line ModelError
        if "trust_remote_code" in str(err):
            raise ModelError(f"model {name!r} needs its own code (trust_remote_code), "
                             "which pmask does not run") from err
        if local_files_only and not Path(name).expanduser().is_dir():
            raise ModelError(f"model {name!r} is not in the local Hugging Face cache and the hub cannot be reached "
                             "(offline or HF_HUB_OFFLINE set); download it where there is network and give its "
                             "local directory (config.json, tokenizer and weights) as the model") from err
        raise ModelError(f"cannot load the configuration of model {name!r}: {one_line(err)}") from err
    return config, detect_family(config) or _refuse(name, config)


def _refuse(name: str, config: Any) -> ModelFamily:
    """The one-line refusal of a model no family recognises (one that needs its own code says so)."""
    if getattr(config, "auto_map", None):
        raise ModelError(f"model {name!r} needs its own code (trust_remote_code), which pmask does not run")
    raise ModelError(unrecognised(name, config))


def model_family(name_or_dir: str | Path, revision: str | None = None) -> ModelFamily:
    """The family of model ``name_or_dir`` (``random:NAME`` is NAME's), from its config alone: no weights load.

    Raises:
        ModelError: one line, as :func:`pmask.perturb.models.load.load_model` refuses the same model.

    Example:
        >>> model_family("pmask-tiny-en").name
        'masked'
    """
    name, _ = split_random(str(name_or_dir))
    _, where, local_only = locate(name)
    with quiet_transformers():
        return load_config(where, revision, local_only)[1]


def model_layers(name_or_dir: str | Path, revision: str | None = None) -> int:
    """The number of layers L of model ``name_or_dir`` (``random:NAME`` is NAME's), from its config alone: no
    weights load (a refusal of the layers asked before any model work).

    Example:
        >>> model_layers("pmask-tiny-en") > 0
        True
    """
    name, _ = split_random(str(name_or_dir))
    _, where, local_only = locate(name)
    with quiet_transformers():
        return layer_count(load_config(where, revision, local_only)[0])


def layer_count(config: Any) -> int:
    """The number of layers L a transformers ``config`` gives (engine layers 0 = embeddings … L)."""
    for attr in ("num_hidden_layers", "n_layers", "num_layers"):
        value = getattr(config, attr, None)
        if isinstance(value, int):
            return value
    raise ModelError(f"cannot tell the number of layers of model type {getattr(config, 'model_type', '?')!r}")


@contextlib.contextmanager
def quiet_transformers() -> Iterator[CapturedOutput]:
    """transformers' and the hub's chatter captured (see :mod:`pmask.common.library_output`), its bars off."""
    from transformers.utils import logging as hf_logging

    hf_logging.get_logger("transformers")   # its handlers exist before the capture (not bound to captured streams)
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        with capture_library_output(("transformers", "huggingface_hub")) as captured:
            yield captured
    finally:
        if bars:
            hf_logging.enable_progress_bar()
