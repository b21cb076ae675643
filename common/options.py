"""Every named setting of pmask, defined once (torch-free).

Each table maps a name to the one-line description shown in CLI help and written into store
manifests; CLI choices, validation and documentation are derived from these tables. Import
from here, never repeat a list of names elsewhere.

Example:
    >>> from pmask.common.options import METRICS, check_choice, resolve_layers
    >>> check_choice("metric", "dist", METRICS)
    'dist'
    >>> resolve_layers([-1, 0], num_layers=12)
    (12, 0)
"""
from __future__ import annotations

from typing import Iterable, Mapping

from pmask.common.errors import LayerError, OptionError

#: Impact metrics ``d``; ``H(x∖S)_p`` is the hidden state at piece ``p`` with the words ``S`` masked.
METRICS: dict[str, str] = {
    "dist": "Euclidean distance between H(x without word i)_p and H(x without words i, j)_p at each piece p of word i",
    "prob": "p(original piece at p | x without word i) - p(original piece at p | x without words i, j) under the "
            "MLM head applied to the layer's state, at each piece p of word i",
    "cos": "1 - cosine similarity between H(x without word i)_p and H(x without words i, j)_p "
           "at each piece p of word i",
}

#: How the per-piece values of the measured word i are merged into one row of F.
SUBWORD_POLICIES: dict[str, str] = {
    "avg": "mean over the pieces of word i of each piece's own value (not the value of averaged states)",
    "first": "the value at the first piece of word i",
    "sum": "sum over the pieces of word i",
    "max": "maximum over the pieces of word i",
}

#: Floating-point types the engine runs in; "auto" is the engine's default for the device.
DTYPES: dict[str, str] = {
    "auto": "the engine's default for the device (float32)",
    "float32": "exact; the default",
    "bfloat16": "faster on GPUs and CPUs with bfloat16 units; impacts deviate by up to a few percent",
    "float16": "GPUs only; as bfloat16 with a narrower range",
    "float64": "reference precision (slow), for tests",
}

#: Corpus formats; "auto" picks one from the file suffix.
CORPUS_FORMATS: dict[str, str] = {
    "auto": "from the file suffix (.conllu/.conll, .mrg or a folder of them, .dp, else text)",
    "conllu": "CoNLL-U (syntactic words only: multiword-token ranges and empty nodes are skipped)",
    "ptb": "Penn Treebank bracketed trees (.mrg file or folder)",
    "dep3": "three columns form, POS, head; blank line between sentences (.dp)",
    "text": "one whitespace-tokenised sentence per line",
}

#: What a decoder produces.
TASKS = ("dependency", "constituency")

#: Where a dependency tree's root comes from.
ROOT_MODES: dict[str, str] = {
    "gold": "the gold root word is ROOT's only child (the paper's setting)",
    "free": "the decoder chooses the root word",
}

#: Whether punctuation words (UPOS PUNCT/SYM, PTB punctuation tags) are scored.
PUNCT_MODES: dict[str, str] = {
    "include": "score every word (the paper's setting)",
    "exclude": "leave punctuation words out of the score",
}

#: How a sentence becomes model input (``--tokenize``).
TOKENIZE_MODES: dict[str, str] = {
    "words": "tokenise every word separately (the paper's setting)",
    "text": "tokenise the surface text (SpaceAfter, multiword tokens) and map pieces to words by offsets",
}

#: ``--model random:NAME`` = NAME's architecture and tokenizer with random weights.
RANDOM_PREFIX = "random:"

#: The root setting used by every command unless told otherwise.
DEFAULT_ROOT = "gold"


def check_choice(what: str, value: str | None, table: Mapping[str, str] | Iterable[str]) -> str:
    """Return ``value`` if it names an entry of ``table``, else raise a one-line :class:`OptionError`
    (a ``PmaskError`` and a ``ValueError``).

    Args:
        what: the setting's name, used in the message ("metric", "subword policy", ...).
        value: the name to check (None is refused).
        table: one of this module's tables (or any iterable of names).

    Returns:
        ``value`` unchanged.
    """
    names = list(table)
    if value is None or value not in names:
        raise OptionError(f"unknown {what} {value!r} (choose from {', '.join(names)})")
    return value


def split_random(model: str) -> tuple[str, bool]:
    """``("NAME", True)`` for ``"random:NAME"``, else ``(model, False)``."""
    if model.startswith(RANDOM_PREFIX):
        return model[len(RANDOM_PREFIX):], True
    return model, False


def resolve_layers(layers: Iterable[int] | int | str, num_layers: int) -> tuple[int, ...]:
    """Absolute hidden-state indices for requested layers.

    Args:
        layers: ints (0 = embeddings, 1..num_layers = layer outputs, negative = from the end,
            -1 = last), one int, or ``"all"`` (``1..num_layers``: layer 0 is left out because
            masking word j cannot change the embedding at word i, so every metric's layer-0
            impacts are identically zero; ask for 0 explicitly to get them).
        num_layers: the model's number of transformer layers L.

    Returns:
        A tuple of absolute indices in ``0..L``, in the order requested.

    Raises:
        LayerError: empty request, a non-integer, or an index outside the model.

    Example:
        >>> resolve_layers("all", 2)
        (1, 2)
    """
    if isinstance(layers, str):
        if layers != "all":
            raise LayerError(f"layers must be integers or 'all', not {layers!r}")
        return tuple(range(1, num_layers + 1))
    if isinstance(layers, int):
        layers = [layers]   # a bool is refused below
    out = []
    for k in layers:
        if isinstance(k, bool) or not hasattr(k, "__index__"):
            raise LayerError(f"layer {k!r} is not an integer")
        k = int(k)
        a = k + num_layers + 1 if k < 0 else k
        if not 0 <= a <= num_layers:
            raise LayerError(f"layer {k} out of range for a model with {num_layers} layers "
                             f"(valid: 0..{num_layers} or {-num_layers - 1}..-1)")
        out.append(a)
    if not out:
        raise LayerError("no layer requested; give at least one layer (0 = embeddings, -1 = last)")
    return tuple(out)
