"""GGUF files as models (``--model path/to/model.gguf``): checked in one line, de-quantised once, cached on disk.

A ``.gguf`` file (llama.cpp's format: the weights, mostly quantised, plus the config and the tokenizer as
metadata) is read by transformers (``from_pretrained(folder, gguf_file=NAME)``, which needs the packages
``gguf`` and ``accelerate``: ``pip install 'pmask[gguf]'``). Before any model work :func:`read_gguf` reads
the file's header and refuses in one line a file that is missing, not GGUF, truncated (its tensor table
promises more bytes than the file holds), of an architecture transformers cannot read, or a GGUF when those
packages are missing. What it finds (:class:`GgufFile`: architecture, quantisation, tensor types, SHA-256)
is recorded in ``meta.json`` and in store manifests.

De-quantising takes a while (about 80 s for the 135M-parameter SmolLM2 on a loaded 2-core CPU), so it is
done once: :func:`dequantised_folder` saves the de-quantised model (float32 safetensors), its config and its
tokenizer into a cache folder that later loads read like any local model folder (a few seconds).

- **Where**: ``$PMASK_CACHE/gguf/`` when ``PMASK_CACHE`` is set, else ``$XDG_CACHE_HOME/pmask/gguf/``, else
  ``~/.cache/pmask/gguf/``.
- **Key**: one folder per file content and transformers version,
  ``<file stem>-<first 16 hex digits of its SHA-256>-transformers-<version>``: the same file copied or moved
  is found again, a changed file (another hash) or another transformers (whose conversion may differ) gets a
  folder of its own.
- **Complete or not at all**: the folder is written under a temporary name and renamed when complete, its
  ``gguf.json`` (the facts) written last; a folder without it (an interrupted run) is rebuilt. Deleting a
  folder (or the whole cache) only costs the next load its de-quantisation.

Example:
    >>> facts = read_gguf("SmolLM2-135M-Instruct.Q4_1.gguf")          # doctest: +SKIP
    >>> facts.architecture, facts.file_type                             # doctest: +SKIP
    ('llama', 'Q4_1')
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pmask.common.errors import ModelError
from pmask.common.model_families import detect_family, unrecognised
from pmask.perturb.models.tokenizer import one_line

__all__ = ["GGUF_SUFFIX", "GgufFile", "cache_root", "dequantised_folder", "gguf_config", "is_gguf", "model_folder",
           "read_gguf", "readable_architectures"]

logger = logging.getLogger(__name__)

GGUF_SUFFIX = ".gguf"
FACTS = "gguf.json"            # written last into a cache folder: its presence means "complete"
CACHE_FORMAT = 1               # bump when the cache folder's layout changes
_MAGIC = b"GGUF"
_NOT_ARCHITECTURES = {"general", "tokenizer"}   # sections of transformers' GGUF mapping that are no architecture


def is_gguf(name: str | os.PathLike) -> bool:
    """Whether a model name names a GGUF file (by its suffix, case-insensitive)."""
    return str(name).lower().endswith(GGUF_SUFFIX)


@dataclass(frozen=True)
class GgufFile:
    """What a GGUF file's header says, and its identity.

    Attributes:
        path: the file, absolute.
        size: its size in bytes.
        sha256: the SHA-256 of its content (the cache key and the record of which file was read).
        architecture: ``general.architecture`` (``llama``, ``qwen2``, ``gpt2`` ...).
        name: ``general.name`` (None when the file gives none).
        file_type: the quantisation the file declares (``general.file_type``: ``Q4_1``, ``Q8_0``, ``F32`` ...;
            None when it declares none).
        tensor_types: how many tensors are stored in each ggml type (``{"Q4_1": 210, "F32": 61, "Q8_0": 1}``).
    """

    path: Path
    size: int
    sha256: str
    architecture: str
    name: str | None = None
    file_type: str | None = None
    tensor_types: dict[str, int] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        """The JSON record written into ``meta.json`` and store manifests (``"gguf": {...}``)."""
        return {"file": str(self.path), "size": self.size, "sha256": self.sha256, "architecture": self.architecture,
                "name": self.name, "quantisation": self.file_type, "tensor_types": dict(self.tensor_types)}


def readable_architectures() -> list[str]:
    """The GGUF architectures the installed transformers reads (its GGUF loaders' tables)."""
    found: set[str] = set()
    try:
        from transformers.modeling_gguf_pytorch_utils import GGUF_SUPPORTED_ARCHITECTURES
        found.update(GGUF_SUPPORTED_ARCHITECTURES)
    except ImportError:   # a transformers without GGUF support
        pass
    try:   # transformers 5.x's second loading path (its own list)
        from transformers.integrations.gguf import GGUF_ARCHS
        found.update(GGUF_ARCHS)
    except ImportError:
        pass
    return sorted(found - _NOT_ARCHITECTURES)


def _missing_packages() -> list[str]:
    return [name for name in ("gguf", "accelerate") if importlib.util.find_spec(name) is None]


def _header(path: Path) -> tuple[dict[str, Any], list[tuple[int, int, int]], int]:
    """``(metadata, [(ggml_type, offset, nbytes)], data_start)``: transformers' fast header reader where it
    has one (it walks the vocabulary without decoding it), else the ``gguf`` package's reader."""
    try:
        from transformers.integrations.gguf.reader import GgufHeader, read_gguf_metadata
    except ImportError:
        return _header_gguf(path)
    metadata, _ = read_gguf_metadata(str(path))
    header = GgufHeader.from_file(str(path))
    return metadata, [(t.ggml_type, t.offset, t.nbytes) for t in header.tensors], header.data_start


def _header_gguf(path: Path) -> tuple[dict[str, Any], list[tuple[int, int, int]], int]:
    """:func:`_header` with the ``gguf`` package's ``GGUFReader`` (slower on big vocabularies)."""
    from gguf import GGUFReader

    reader = GGUFReader(str(path))
    metadata: dict[str, Any] = {}
    for key in ("general.architecture", "general.name", "general.file_type"):
        if key in reader.fields:
            metadata[key] = reader.fields[key].contents()
    tensors = [(int(t.tensor_type), int(t.data_offset) - reader.data_offset, int(t.n_bytes)) for t in reader.tensors]
    return metadata, tensors, int(reader.data_offset)


def _gguf_package_reads(path: Path) -> bool:
    """Whether the ``gguf`` package reads the file's header and finds every tensor's bytes in the file."""
    try:
        _, tensors, data_start = _header_gguf(path)
    except Exception:  # noqa: BLE001 - unreadable to it too: damaged
        return False
    size = path.stat().st_size
    return all(data_start + offset + nbytes <= size for _, offset, nbytes in tensors)


def _type_name(ggml_type: int) -> str:
    try:
        from gguf import GGMLQuantizationType
        return GGMLQuantizationType(ggml_type).name
    except (ImportError, ValueError):
        return f"type {ggml_type}"


def _file_type_name(file_type: Any) -> str | None:
    if file_type is None:
        return None
    try:
        from gguf import LlamaFileType
        name = LlamaFileType(int(file_type)).name
    except (ImportError, ValueError, TypeError):
        return str(file_type)
    return name.removeprefix("MOSTLY_").removeprefix("ALL_")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()


_READ: dict[tuple[str, int, int], GgufFile] = {}   # (path, size, mtime): a file read once per process


def read_gguf(path: str | os.PathLike) -> GgufFile:
    """Read and check a GGUF file's header, before any model work (once per process for an unchanged file).

    Args:
        path: the ``.gguf`` file.

    Returns:
        Its :class:`GgufFile`.

    Raises:
        ModelError: one line naming the file: missing; not GGUF (no magic bytes); truncated or damaged
            (the header cannot be read, or its tensors need more bytes than the file has); an architecture
            the installed transformers cannot read; the ``gguf`` or ``accelerate`` package missing.
    """
    file = Path(path).expanduser()
    if not file.is_file():
        raise ModelError(f"GGUF file {str(path)!r} does not exist" if not file.exists()
                         else f"{path}: a folder, not a GGUF file")
    with file.open("rb") as stream:
        magic = stream.read(4)
    if magic != _MAGIC:
        raise ModelError(f"{path}: not a GGUF file (it does not start with the bytes 'GGUF')")
    missing = _missing_packages()
    if missing:
        raise ModelError(f"{path}: reading GGUF files needs the package(s) {' and '.join(missing)}: "
                         "pip install 'pmask[gguf]'")
    stat = file.stat()
    key = (str(file.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _READ:
        _READ[key] = _read(file, str(path), stat.st_size)
    return _READ[key]


def _read(file: Path, path: str, size: int) -> GgufFile:
    """:func:`read_gguf`'s work on a file that exists and starts with the magic bytes."""
    try:
        metadata, tensors, data_start = _header(file)
    except Exception as err:  # noqa: BLE001 - any header that cannot be read is a damaged or truncated file
        if _gguf_package_reads(file):   # a sound file an older transformers cannot read (a quantisation it lacks)
            import transformers
            raise ModelError(f"{path}: transformers {transformers.__version__} cannot read this GGUF file "
                             f"({one_line(err)}); the file itself is sound: a newer transformers may read it "
                             "(pip install -U transformers)") from None
        raise ModelError(f"{path}: a truncated or damaged GGUF file (its header cannot be read: {one_line(err)})") \
            from None
    needed = max((data_start + offset + nbytes for _, offset, nbytes in tensors), default=data_start)
    if size < needed:
        raise ModelError(f"{path}: a truncated GGUF file (its {len(tensors)} tensors need {needed} bytes, "
                         f"the file has {size})")
    architecture = str(metadata.get("general.architecture", ""))
    readable = readable_architectures()
    if architecture not in readable:
        import transformers

        raise ModelError(f"{path}: GGUF architecture {architecture!r} cannot be read by transformers "
                         f"{transformers.__version__} (it reads {', '.join(readable) or 'no GGUF file'})")
    name = metadata.get("general.name")
    return GgufFile(path=file.resolve(), size=size, sha256=_sha256(file), architecture=architecture,
                    name=str(name) if name is not None else None,
                    file_type=_file_type_name(metadata.get("general.file_type")),
                    tensor_types=dict(sorted(Counter(_type_name(t) for t, _, _ in tensors).items())))


def gguf_config(gguf: GgufFile) -> Any:
    """The transformers config of a GGUF file's model: its de-quantised folder's when cached, else read from the
    file's metadata by transformers (no weights)."""
    import transformers

    folder = cache_folder(gguf)
    try:
        if (folder / FACTS).is_file():
            return transformers.AutoConfig.from_pretrained(str(folder))
        return transformers.AutoConfig.from_pretrained(str(gguf.path.parent), gguf_file=gguf.path.name)
    except Exception as err:  # noqa: BLE001 - any loading failure becomes a one-line ModelError
        raise ModelError(f"{gguf.path}: transformers cannot read this GGUF file's config: {one_line(err)}") from None


def model_folder(path: str | os.PathLike) -> tuple[Path, GgufFile]:
    """The de-quantised model folder of the GGUF file at ``path`` (made once, then cached) and the file's facts.

    Raises:
        ModelError: as :func:`read_gguf`; a model of no family pmask runs (before de-quantising);
            transformers cannot load the file.
    """
    gguf = read_gguf(path)
    folder = cache_folder(gguf)
    if not (folder / FACTS).is_file():
        config = gguf_config(gguf)
        family = detect_family(config)
        if family is None:
            raise ModelError(unrecognised(str(path), config))
        dequantised_folder(gguf, family.loader)
    return folder, gguf


def cache_root() -> Path:
    """The GGUF cache: ``$PMASK_CACHE/gguf``, else ``$XDG_CACHE_HOME/pmask/gguf``, else ``~/.cache/pmask/gguf``."""
    if os.environ.get("PMASK_CACHE"):
        return Path(os.environ["PMASK_CACHE"]).expanduser() / "gguf"
    base = Path(os.environ["XDG_CACHE_HOME"]).expanduser() if os.environ.get("XDG_CACHE_HOME") else \
        Path.home() / ".cache"
    return base / "pmask" / "gguf"


def cache_folder(gguf: GgufFile) -> Path:
    """The cache folder of a file's de-quantised model (see the module docstring for the key)."""
    import transformers

    stem = "".join(c if c.isalnum() or c in "._-" else "_" for c in gguf.path.stem)[:80]
    return cache_root() / f"{stem}-{gguf.sha256[:16]}-transformers-{transformers.__version__}"


def dequantised_folder(gguf: GgufFile, loader: str = "AutoModelForCausalLM") -> Path:
    """The folder of ``gguf``'s de-quantised model: from the cache, or made now (once) and cached.

    Args:
        gguf: from :func:`read_gguf`.
        loader: the transformers class that loads the model (``transformers.<loader>``).

    Returns:
        A model folder (config.json, model.safetensors in float32, the tokenizer files, ``gguf.json``).

    Raises:
        ModelError: transformers cannot load the file, or the cache cannot be written.
    """
    folder = cache_folder(gguf)
    if (folder / FACTS).is_file():
        return folder
    logger.info("de-quantising %s once (%s, %s); cached in %s", gguf.path.name, gguf.architecture,
                gguf.file_type or "no declared quantisation", folder)
    partial = folder.with_name(f"{folder.name}.partial-{os.getpid()}")
    try:
        _convert(gguf, loader, partial)
        (partial / FACTS).write_text(json.dumps({"format": CACHE_FORMAT, **gguf.describe()}, indent=1) + "\n",
                                     encoding="utf-8")
        if folder.exists():   # an incomplete folder left by an interrupted run
            shutil.rmtree(folder)
        os.replace(partial, folder)
    except OSError as err:
        raise ModelError(f"cannot write the GGUF cache folder {folder}: {one_line(err)} (set PMASK_CACHE to a "
                         "writable folder)") from None
    finally:
        if partial.exists():
            shutil.rmtree(partial, ignore_errors=True)
    return folder


def _convert(gguf: GgufFile, loader: str, out: Path) -> None:
    """Load the GGUF with transformers (de-quantised to float32) and save it as a plain model folder."""
    import transformers
    from safetensors.torch import save_model

    where, name = str(gguf.path.parent), gguf.path.name
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(where, gguf_file=name)
        model = getattr(transformers, loader).from_pretrained(where, gguf_file=name, dtype="float32")
    except Exception as err:  # noqa: BLE001 - any loading failure becomes a one-line ModelError
        raise ModelError(f"{gguf.path}: transformers cannot load this GGUF file: {one_line(err)}") from None
    out.mkdir(parents=True, exist_ok=True)
    config = model.config
    if hasattr(config, "quantization_config"):   # de-quantised: the folder is a plain float32 model
        del config.quantization_config
    config.save_pretrained(str(out))
    save_model(model, str(out / "model.safetensors"), metadata={"format": "pt"})
    tokenizer.save_pretrained(str(out))
