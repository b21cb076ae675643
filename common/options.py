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

from pmask.common.errors import LayerError, OptionError, SettingError

#: Impact metrics ``d``; ``H(x∖S)_p`` is the hidden state at piece ``p`` with the words ``S`` masked.
METRICS: dict[str, str] = {
    "dist": "Euclidean distance between H(x without word i)_p and H(x without words i, j)_p at each piece p of word i",
    "prob": "p(original piece at p | x without word i) - p(original piece at p | x without words i, j) under the "
            "MLM head applied to the layer's state, at each piece p of word i",
    "cos": "1 - cosine similarity between H(x without word i)_p and H(x without words i, j)_p "
           "at each piece p of word i",
    "cpmi": "conditional PMI (Hoover et al. 2021): log p(word i | x without i) - log p(word i | x without i, j) "
            "in nats under the MLM head, word i's pieces by the left-to-right chain rule",
}

#: Metrics of the other probes (see :data:`PROBES` and :data:`PROBE_METRICS`).
METRICS.update({
    "l1": "L1 distance between the hidden states of words i and j (probe distance)",
    "l2": "Euclidean distance between the hidden states of words i and j (probe distance)",
    "jsd": "Jensen-Shannon distance (square root of the divergence, natural log) between the attention "
           "distributions of words i and j (probe distance)",
    "hellinger": "Hellinger distance between the attention distributions of words i and j (probe distance)",
    "cossim": "(cosine similarity + 1) / 2 between the hidden states of words i and j, a similarity read as a "
              "distance: the cos of Kim et al.'s code (probe distance, --faithful)",
    "weight": "the attention weight itself (probe attention, which has no other metric)",
    "all": "the mean of every distortion term of a span: substitution, decontextualization and movement "
           "(probe distortion)",
    "sub": "substitution: the span replaced by one mask, distortion of the words outside it (probe distortion)",
    "dc": "decontextualization: the span alone between masks, distortion of its words (probe distortion)",
    "move": "movement: the span moved to the front and to the end, distortion of every part (probe distortion)",
})

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
    "words-ptb": "as words, after Hoover et al. 2021's adjustments: PTB bracket tokens (-LRB- ...) read as brackets, "
                 "and the n of a word tokenised n ' t moved onto the previous word's last piece (their --faithful)",
    "bare": "as words, but without the model's special tokens ([CLS], [SEP]): Kim et al. 2020's input (probe "
            "distance, --faithful)",
}

#: Ways to read syntax out of a model without training (``--probe``); F[i][j] relates word j to word i.
#: Each description is "SHORT NAME: definition; cost" (the CLI shows the part before the colon).
PROBES: dict[str, str] = {
    "pair": "perturbed masking (Wu et al. 2020), the default: F[i][j] = d(H(x without i)_i, H(x without i, j)_i); "
            "1 + n + n(n-1)/2 sequences per sentence",
    "single": "single masking, word i left unmasked: F[i][j] = d(H(x)_i, H(x without j)_i); n + 1 sequences",
    "attention": "attention weights merged to words as Clark et al. 2019: F[i][j] = attention of word i to word j, "
                 "the mean over i's pieces of the sum over j's pieces; 1 sequence",
    "distance": "syntactic distance (Kim et al. 2020), low = close: F[i][j] = distance between words i and j, their "
                "unmasked hidden states (cos, l1, l2) or attention distributions (jsd, hellinger); 1 sequence",
    "distortion": "contextual distortion (Li & Lu 2023), a span chart, low = constituent: F[l][r-1] = how far the "
                  "words' states move when span l..r-1 is substituted, decontextualized or moved; about 2n(n+1) "
                  "sequences",
}

#: The metrics each probe takes; the first is its default.
PROBE_METRICS: dict[str, tuple[str, ...]] = {
    "pair": ("dist", "cos", "prob", "cpmi"),
    "single": ("dist", "cos", "prob"),
    "attention": ("weight",),
    "distance": ("l2", "l1", "cos", "jsd", "hellinger", "cossim"),
    "distortion": ("all", "sub", "dc", "move"),
}

#: The subword policies each probe takes (attention and attention distributions always merge as Clark et al.).
PROBE_SUBWORDS: dict[str, tuple[str, ...]] = {
    "pair": tuple(SUBWORD_POLICIES), "single": tuple(SUBWORD_POLICIES), "attention": ("avg",),
    "distance": ("avg", "first"),
    "distortion": ("avg",),
}

#: Metrics that fix the subword policy: the chain rule sums word i's per-piece log-probabilities.
METRIC_SUBWORDS: dict[str, str] = {"cpmi": "sum"}

#: How F is made symmetric before decoding (``--symmetrize``; Hoover et al. 2021's options).
SYMMETRIZE_MODES: dict[str, str] = {
    "none": "F as it is (the default)",
    "sum": "F + F transposed",
    "triu": "the upper triangle mirrored: triu(F) + triu(F) transposed",
    "tril": "the lower triangle mirrored: tril(F) + tril(F) transposed",
}

#: (probe, metric) pairs whose values differ per attention head: stores keep every head, ``--head`` picks.
HEAD_METRICS = (("attention", "weight"), ("distance", "jsd"), ("distance", "hellinger"))

#: ``--head`` values besides a head number 0..H-1.
HEAD_MODES: dict[str, str] = {
    "mean": "the mean over the layer's heads (the default)",
    "max": "the element-wise maximum over the layer's heads",
}

#: Probes whose F is a distance (low = syntactically close): dependency decoders and MART read -F.
DISTANCE_PROBES = ("distance",)

#: Probes whose F is a span chart (F[l][r-1] scores the span of words l..r-1; low = constituent), not a
#: word-pair matrix: only span decoders (``cky``) read them, and span decoders read nothing else.
SPAN_PROBES = ("distortion",)

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
            # the model's layers, not "0..L": decoding refuses layer 0, so a range with 0 in it misleads there
            raise LayerError(f"layer {k} out of range for a model with {num_layers} layers (its layers are "
                             f"1..{num_layers}, or {-num_layers}..-1 from the last; 0 is the embeddings)")
        out.append(a)
    if not out:
        raise LayerError("no layer requested; give at least one layer (0 = embeddings, -1 = last)")
    return tuple(out)


def default_metric(probe: str | None) -> str:
    """The metric a probe uses when none is given (``dist`` for pair and single).

    Example:
        >>> default_metric("distance"), default_metric(None)
        ('l2', 'dist')
    """
    return PROBE_METRICS[check_choice("probe", probe or "pair", PROBES)][0]


def default_subword(metric: str | None) -> str:
    """The subword policy a metric uses when none is given (``sum`` for cpmi, else ``avg``).

    Example:
        >>> default_subword("cpmi"), default_subword("dist")
        ('sum', 'avg')
    """
    return METRIC_SUBWORDS.get(metric or "", "avg")


def check_context(context: int | None) -> int:
    """``context`` (words of neighbouring sentences, ``--context``) as an int >= 0, else an :class:`OptionError`."""
    if context is None:
        return 0
    if isinstance(context, bool) or not isinstance(context, int) or context < 0:
        raise OptionError(f"context must be a whole number of words >= 0, got {context!r}")
    return context


def has_heads(probe: str | None, metric: str | None) -> bool:
    """Whether the probe's matrices have one value per attention head (``--head`` applies)."""
    return (probe or "pair", metric or default_metric(probe)) in HEAD_METRICS


def parse_head(value: str | int | None) -> str | int | None:
    """``"mean"``, ``"max"``, a head number (int >= 0) or None; an :class:`OptionError` otherwise.

    Example:
        >>> parse_head("3"), parse_head("max"), parse_head(None)
        (3, 'max', None)
    """
    if value is None or isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    text = str(value).strip()
    if text in HEAD_MODES:
        return text
    if text.isdigit():
        return int(text)
    raise OptionError(f"unknown head {value!r} (choose a head number from 0, or {', '.join(HEAD_MODES)})")


def split_probes(value: str | Iterable[str] | None) -> list[str]:
    """Probe names from ``"pair,attention"`` (or a list), each checked; ``["pair"]`` for None.

    Example:
        >>> split_probes("pair, distance")
        ['pair', 'distance']
    """
    names = value.split(",") if isinstance(value, str) else list(value or ["pair"])
    out = [check_choice("probe", n.strip(), PROBES) for n in names if n.strip()]
    if not out:
        raise OptionError("no probe given (choose from " + ", ".join(PROBES) + ")")
    return list(dict.fromkeys(out))


def split_metrics(value: str | Iterable[str]) -> list[str]:
    """Metric names from ``"prob,dist"`` (or a list), each checked, repeats dropped (``bench --metrics``).

    Example:
        >>> split_metrics("prob, cpmi")
        ['prob', 'cpmi']
    """
    names = value.split(",") if isinstance(value, str) else list(value)
    out = [check_choice("metric", n.strip(), METRICS) for n in names if n.strip()]
    if not out:
        raise OptionError("no metric given (choose from " + ", ".join(METRICS) + ")")
    return list(dict.fromkeys(out))


def check_probe(probe: str | None, metric: str | None, subword: str | None = "avg",
                head: str | int | None = None) -> None:
    """Refuse, in one line, a metric, subword policy or head the probe does not take.

    Raises:
        OptionError: an unknown probe, metric, subword policy or head value.
        SettingError: a known value the probe does not take (names settings as ``{probe}``, ``{metric}``, ...).
    """
    metric = check_choice("metric", metric, METRICS)
    subword = check_choice("subword policy", subword, SUBWORD_POLICIES)
    probe = check_choice("probe", probe, PROBES)
    if metric not in PROBE_METRICS[probe]:
        raise SettingError(f"{{probe}} {probe} takes {{metric}} {' or '.join(PROBE_METRICS[probe])}, not {metric}")
    if metric in METRIC_SUBWORDS and subword != METRIC_SUBWORDS[metric]:
        raise SettingError(f"{{metric}} {metric} takes {{subword}} {METRIC_SUBWORDS[metric]} only, not {subword} "
                           "(the chain rule sums the log-probabilities of word i's pieces)")
    if subword not in PROBE_SUBWORDS[probe] or (has_heads(probe, metric) and subword != "avg"):
        allowed = "avg" if has_heads(probe, metric) else " or ".join(PROBE_SUBWORDS[probe])
        raise SettingError(f"{{probe}} {probe} with {{metric}} {metric} takes {{subword}} {allowed}, not {subword} "
                           "(attention is merged to words as Clark et al.: mean over the rows of a word's pieces, "
                           "sum over its columns; distance builds one vector per word)")
    if parse_head(head) is not None and not has_heads(probe, metric):
        raise SettingError(f"{{head}} applies to probe attention and to probe distance with {{metric}} jsd or "
                           f"hellinger, not to probe {probe} with {{metric}} {metric}")


def check_attention_layers(probe: str | None, metric: str | None, layers: Iterable[int],
                           num_layers: int | None) -> None:
    """A :class:`LayerError` when a probe that reads attention weights (:func:`has_heads`) is asked
    for layer 0, the embeddings, which have none; ``layers`` are absolute (0 = embeddings)."""
    if has_heads(probe, metric) and 0 in list(layers):
        raise LayerError(f"layer 0 (the embeddings) has no attention, which probe {probe} with metric "
                         f"{metric or default_metric(probe)} reads; choose layers 1..{num_layers}")
