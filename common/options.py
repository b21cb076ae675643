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

from typing import Iterable, Mapping, Sequence

from pmask.common.errors import LayerError, OptionError, SettingError
from pmask.common.probe_entries import METRIC_ENTRIES, PROBE_ENTRIES, AuthorsRecipe, MetricEntry, ProbeEntry
from pmask.common.registry import EntryNames, EntryTable
from pmask.common.tokenization import TOKENIZE_ENTRIES

#: Impact metrics ``d``, name -> description (a live view of :data:`pmask.common.probe_entries.METRIC_ENTRIES`).
METRICS: Mapping[str, str] = EntryTable(lambda: {n: e.description for n, e in METRIC_ENTRIES.items()})

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

#: How a sentence becomes model input (``--tokenize``): a view of :data:`pmask.common.tokenization.TOKENIZE_ENTRIES`.
TOKENIZE_MODES: Mapping[str, str] = EntryTable(lambda: {n: e.description for n, e in TOKENIZE_ENTRIES.items()})

#: Ways to read syntax out of a model without training (``--probe``); F[i][j] relates word j to word i.
#: Each description is "SHORT NAME: definition; cost" (the CLI shows the part before the colon).
#: This and the tables below are live views of :data:`pmask.common.probe_entries.PROBE_ENTRIES` and
#: :data:`~pmask.common.probe_entries.METRIC_ENTRIES`, where each probe's and metric's module registers it.
PROBES: Mapping[str, str] = EntryTable(lambda: {n: e.description for n, e in PROBE_ENTRIES.items()})

#: The metrics each probe takes; the first is its default.
PROBE_METRICS: Mapping[str, tuple[str, ...]] = EntryTable(lambda: {n: e.metrics for n, e in PROBE_ENTRIES.items()})

#: The subword policies each probe takes (attention and attention distributions always merge as Clark et al.).
PROBE_SUBWORDS: Mapping[str, tuple[str, ...]] = EntryTable(
    lambda: {n: e.subwords or tuple(SUBWORD_POLICIES) for n, e in PROBE_ENTRIES.items()})

#: Metrics that fix the subword policy: the chain rule sums word i's per-piece log-probabilities.
METRIC_SUBWORDS: Mapping[str, str] = EntryTable(lambda: {n: e.subword for n, e in METRIC_ENTRIES.items() if e.subword})

#: How F is made symmetric before decoding (``--symmetrize``; Hoover et al. 2021's options).
SYMMETRIZE_MODES: dict[str, str] = {
    "none": "F as it is (the default)",
    "sum": "F + F transposed",
    "triu": "the upper triangle mirrored: triu(F) + triu(F) transposed",
    "tril": "the lower triangle mirrored: tril(F) + tril(F) transposed",
}

#: (probe, metric) pairs whose values differ per attention head: stores keep every head, ``--head`` picks.
ATTENTION_HEAD_METRICS: Sequence[tuple[str, str]] = EntryNames(
    lambda: tuple((n, m) for n, e in PROBE_ENTRIES.items() for m in e.attention_head_metrics))

#: ``--head`` values besides a head number 0..H-1.
ATTENTION_HEAD_MODES: dict[str, str] = {
    "mean": "the mean over the layer's heads (the default)",
    "max": "the element-wise maximum over the layer's heads",
}

#: Probes whose F is a distance (low = syntactically close): dependency decoders and MART read -F.
DISTANCE_PROBES: Sequence[str] = EntryNames(lambda: tuple(n for n, e in PROBE_ENTRIES.items() if e.distance))

#: Probes whose F is a span chart (F[l][r-1] scores the span of words l..r-1; low = constituent), not a
#: word-pair matrix: only span decoders (``cky``) read them, and span decoders read nothing else.
SPAN_PROBES: Sequence[str] = EntryNames(lambda: tuple(n for n, e in PROBE_ENTRIES.items() if e.spans))

#: ``--model random:NAME`` = NAME's architecture and tokenizer with random weights.
RANDOM_PREFIX = "random:"

#: File types a figure (``--plot``) is written as, and a heatmap (``pmask heatmap --as``): named here, not
#: beside the drawing code, so that the parser builds its choices without importing ``pmask.eval``.
FIGURE_FORMATS = ("png", "svg", "pdf")
HEATMAP_FORMATS = (*FIGURE_FORMATS, "html")


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


def first_probe() -> str:
    """The first registered probe (pair: :data:`pmask.common.probe_entries.PROBE_ENTRIES` is in documentation
    order): the one :func:`pmask.pipeline.request.resolve` runs when none is given, whose name labels and
    ``bench``'s file names leave out.

    Example:
        >>> import pmask
        >>> first_probe()
        'pair'
    """
    return next(iter(PROBE_ENTRIES))


def metric_recipe(metric: str | None) -> AuthorsRecipe | None:
    """The metric's own authors' pipeline under ``--faithful`` (cpmi: Hoover et al.'s), None for a metric without
    one (its probe's pipeline applies) or an unknown name.

    Example:
        >>> metric_recipe("cpmi").decoders, metric_recipe("dist")
        (('mst-projective', 'mst'), None)
    """
    entry = METRIC_ENTRIES.get(metric or "")
    return entry.faithful if entry else None


def probe_entry(probe: str | None) -> ProbeEntry:
    """The registry entry of ``probe`` (:data:`pmask.common.probe_entries.PROBE_ENTRIES`); an :class:`OptionError`
    listing the probes otherwise.

    Example:
        >>> probe_entry("distance").distance, probe_entry("pair").metrics[0]
        (True, 'dist')
    """
    return PROBE_ENTRIES.lookup(probe)


def metric_entry(metric: str | None) -> MetricEntry:
    """The registry entry of ``metric`` (:data:`pmask.common.probe_entries.METRIC_ENTRIES`); an :class:`OptionError`
    listing the metrics otherwise.

    Example:
        >>> metric_entry("prob").mlm_head, metric_entry("dist").mlm_head
        (True, False)
    """
    return METRIC_ENTRIES.lookup(metric)


def check_context(context: int | None) -> int:
    """``context`` (words of neighbouring sentences, ``--context``) as an int >= 0, else an :class:`OptionError`."""
    if isinstance(context, bool) or not isinstance(context, int) or context < 0:
        raise OptionError(f"context must be a whole number of words >= 0, got {context!r}")
    return context


def has_attention_heads(probe: str | None, metric: str | None) -> bool:
    """Whether the probe's matrices have one value per attention head with ``metric`` (``--head`` applies)."""
    entry = PROBE_ENTRIES.get(probe or "")
    return entry is not None and metric in entry.attention_head_metrics


def parse_attention_head(value: str | int | None) -> str | int | None:
    """``"mean"``, ``"max"``, a head number (int >= 0) or None; an :class:`OptionError` otherwise.

    Example:
        >>> parse_attention_head("3"), parse_attention_head("max"), parse_attention_head(None)
        (3, 'max', None)
    """
    if value is None or isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    text = str(value).strip()
    if text in ATTENTION_HEAD_MODES:
        return text
    if text.isdigit():
        return int(text)
    raise OptionError(f"unknown head {value!r} (choose a head number from 0, or {', '.join(ATTENTION_HEAD_MODES)})")


def split_probes(value: str | Iterable[str]) -> list[str]:
    """Probe names from ``"pair,attention"`` (or a list), each checked.

    Example:
        >>> split_probes("pair, distance")
        ['pair', 'distance']
    """
    names = value.split(",") if isinstance(value, str) else list(value)
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


def check_metric(metric: str | None, subword: str | None) -> tuple[str, str]:
    """``(metric, subword)``, or a one-line error: an :class:`OptionError` for an unknown metric or subword
    policy, a :class:`SettingError` for a subword policy the metric does not take (whichever probe runs it)."""
    metric = check_choice("metric", metric, METRICS)
    subword = check_choice("subword policy", subword, SUBWORD_POLICIES)
    fixed = METRIC_ENTRIES[metric]
    if fixed.subword and subword != fixed.subword:
        raise SettingError(f"{{metric}} {metric} takes {{subword}} {fixed.subword} only, not {subword} "
                           f"({fixed.subword_reason})")
    return metric, subword


def check_probe(probe: str | None, metric: str | None, subword: str | None, head: str | int | None = None) -> None:
    """Refuse, in one line, a metric, subword policy or head the probe does not take.

    Raises:
        OptionError: an unknown probe, metric, subword policy or head value.
        SettingError: a known value the probe does not take (names settings as ``{probe}``, ``{metric}``, ...).
    """
    metric, subword = check_metric(metric, subword)
    entry = probe_entry(probe)
    if metric not in entry.metrics:
        raise SettingError(f"{{probe}} {probe} takes {{metric}} {' or '.join(entry.metrics)}, not {metric}")
    subwords = entry.subwords or tuple(SUBWORD_POLICIES)
    if subword not in subwords or (has_attention_heads(probe, metric) and subword != "avg"):
        allowed = "avg" if has_attention_heads(probe, metric) else " or ".join(subwords)
        raise SettingError(f"{{probe}} {probe} with {{metric}} {metric} takes {{subword}} {allowed}, not {subword} "
                           "(attention is merged to words as Clark et al.: mean over the rows of a word's pieces, "
                           "sum over its columns; distance builds one vector per word)")
    if parse_attention_head(head) is not None and not has_attention_heads(probe, metric):
        raise SettingError(f"{{head}} applies to {_attention_head_probes()}, not to probe {probe} with {{metric}} "
                           f"{metric}")


def _attention_head_probes() -> str:
    """The probes and metrics ``--head`` applies to, in prose ("probe attention and to probe distance with ...")."""
    parts = []
    for entry in PROBE_ENTRIES.values():
        if entry.attention_only:
            parts.append(f"probe {entry.name}")
        elif entry.attention_head_metrics:
            parts.append(f"probe {entry.name} with {{metric}} {' or '.join(entry.attention_head_metrics)}")
    return " and to ".join(parts)


def check_attention_layers(probe: str | None, metric: str | None, layers: Iterable[int],
                           num_layers: int | None) -> None:
    """A :class:`LayerError` when a probe that reads attention weights (:func:`has_attention_heads`) is asked
    for layer 0, the embeddings, which have none; ``layers`` are absolute (0 = embeddings)."""
    if has_attention_heads(probe, metric) and 0 in list(layers):
        raise LayerError(f"layer 0 (the embeddings) has no attention, which probe {probe} with metric "
                         f"{metric} reads; choose layers 1..{num_layers}")
