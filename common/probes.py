"""Every probe and every impact metric, one entry each (torch-free): the one place to add one.

A :class:`MetricEntry` says what an impact metric reads from the model (hidden states, or the
MLM head's probabilities, as natural logs or not), the subword policy it fixes and its own
authors' pipeline (``--faithful``). A :class:`ProbeEntry` says how syntax is read out of the
model: its metrics (the first is its default), subword policies, which of its metrics keep one
value per attention head (they need attention weights), what it yields (a word-pair matrix or a
span chart; a distance, low = close, or not), the decoders of its authors' pipeline, and where its
runner and its cost in forward sequences live, as ``"module:function"`` strings that
:func:`resolve` imports when they are called (so this module stays torch-free).

Everything else derives from :data:`PROBE_ENTRIES` and :data:`METRIC_ENTRIES`: the tables of
:mod:`pmask.common.options` (CLI choices, help, validation, store manifests), the engine's reads,
the decoders' pairing checks and the ``--faithful`` defaults. Adding a metric or a probe is one
entry here plus its computation.

Example:
    >>> METRIC_ENTRIES["cpmi"].mlm_head, METRIC_ENTRIES["cpmi"].subword
    (True, 'sum')
    >>> PROBE_ENTRIES["distortion"].yields, PROBE_ENTRIES["distance"].needs("jsd")
    ('span chart', ('attentions',))
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Sequence, TypeVar, overload

#: What a probe yields per sentence and layer.
WORD_PAIRS = "word-pair matrix"   # F[i][j] relates word j to word i
SPAN_CHART = "span chart"         # F[l][r-1] scores the span of words l..r-1 (low = constituent)


@dataclass(frozen=True)
class Faithful:
    """An authors' pipeline (``--faithful``): what it decodes with and which settings it fixes
    where none is given.

    Attributes:
        authors: who it reproduces ("Hoover et al."), for messages.
        decoders: the decoders of the pipeline; the first is its default where the pipeline picks one.
        metric: the metric when none is given (whatever a bundled model records).
        renames: a metric given -> the authors' variant of it (Kim et al.'s ``cos`` is ``cossim``).
        tokenize, context: the tokenisation mode and the words of context when none is given.
        symmetrize: how an undirected decoder makes F symmetric when not told.
    """

    authors: str
    decoders: tuple[str, ...]
    metric: str | None = None
    renames: Mapping[str, str] = field(default_factory=dict)
    tokenize: str | None = None
    context: int | None = None
    symmetrize: str | None = None


@dataclass(frozen=True)
class MetricEntry:
    """An impact metric ``d``: what it reads and what it fixes.

    Attributes:
        name, description: the name and the one line shown in CLI help and written into manifests.
        mlm_head: read from the MLM head (the probability of the original piece), not from hidden states.
        log_prob: compared as natural-log probabilities (base - current); implies ``mlm_head``.
        subword: the one subword policy it takes (None: the probe's policies) and ``subword_reason`` why.
        job: the sentence job that plans its sequences and reads (``"module:Class"``; None: the probe's).
        faithful: its own authors' pipeline under ``--faithful`` (None: the probe's).
    """

    name: str
    description: str
    mlm_head: bool = False
    log_prob: bool = False
    subword: str | None = None
    subword_reason: str = ""
    job: str | None = None
    faithful: Faithful | None = None

    @property
    def needs(self) -> str:
        """What it reads from the model: ``"MLM head"`` or ``"hidden states"``."""
        return "MLM head" if self.mlm_head else "hidden states"


@dataclass(frozen=True)
class ProbeEntry:
    """A probe: a way to read syntax out of a model without training.

    Attributes:
        name: the ``--probe`` value.
        description: "SHORT NAME: definition; cost" (the CLI shows the part before the colon).
        metrics: the metrics it takes; the first is its default.
        runner: ``"module:function"`` yielding one array per sentence (None = too long), called as
            ``run(model, sentences, layers=..., metric=..., subword=..., **kwargs)``.
        sequences: ``"module:function"``, forward sequences for a sentence of n words.
        subwords: the subword policies it takes (None: every one).
        head_metrics: its metrics whose values differ per attention head (read from attention weights;
            stores keep every head, ``--head`` picks; subword ``avg`` only).
        yields: :data:`WORD_PAIRS` or :data:`SPAN_CHART` (read only by span decoders, ``cky``).
        distance: F is a distance, low = syntactically close (dependency decoders and MART read -F).
        decodes_layer_zero: its layer-0 values are a tree like any other layer's (not all zeros).
        bare_input: takes ``--tokenize bare`` (no special tokens).
        checkpoint: its runner takes the engine's ``checkpoint`` (a store keeps a sentence under way).
        faithful: its authors' pipeline (None: it has no ``--faithful`` mode).
    """

    name: str
    description: str
    metrics: tuple[str, ...]
    runner: str
    sequences: str
    subwords: tuple[str, ...] | None = None
    head_metrics: tuple[str, ...] = ()
    yields: str = WORD_PAIRS
    distance: bool = False
    decodes_layer_zero: bool = False
    bare_input: bool = False
    checkpoint: bool = False
    faithful: Faithful | None = None

    @property
    def spans(self) -> bool:
        """Whether it yields span charts rather than word-pair matrices."""
        return self.yields == SPAN_CHART

    @property
    def attention_only(self) -> bool:
        """Whether every metric it takes reads attention weights."""
        return set(self.metrics) <= set(self.head_metrics)

    def needs(self, metric: str) -> tuple[str, ...]:
        """What it reads from the model with ``metric``: ``("attentions",)``, ``("MLM head",)`` or
        ``("hidden states",)``."""
        if metric in self.head_metrics:
            return ("attentions",)
        entry = METRIC_ENTRIES.get(metric)
        return (entry.needs if entry else "hidden states",)


_CHAIN_RULE = "the chain rule sums the log-probabilities of word i's pieces"

#: The impact metrics, in documentation order; ``H(x∖S)_p`` is the hidden state at piece ``p`` with the words
#: ``S`` masked.
METRIC_ENTRIES: dict[str, MetricEntry] = {e.name: e for e in [
    MetricEntry("dist", "Euclidean distance between H(x without word i)_p and H(x without words i, j)_p at each "
                        "piece p of word i"),
    MetricEntry("prob", "p(original piece at p | x without word i) - p(original piece at p | x without words i, j) "
                        "under the MLM head applied to the layer's state, at each piece p of word i", mlm_head=True),
    MetricEntry("cos", "1 - cosine similarity between H(x without word i)_p and H(x without words i, j)_p "
                       "at each piece p of word i"),
    MetricEntry("cpmi", "conditional PMI (Hoover et al. 2021): log p(word i | x without i) - log p(word i | x without "
                        "i, j) in nats under the MLM head, word i's pieces by the left-to-right chain rule",
                mlm_head=True, log_prob=True, subword="sum", subword_reason=_CHAIN_RULE,
                job="pmask.perturb.probes.cpmi:CpmiJob",
                faithful=Faithful("Hoover et al.", ("mst-projective", "mst"), tokenize="words-ptb", context=30,
                                  symmetrize="sum")),
    MetricEntry("l1", "L1 distance between the hidden states of words i and j (probe distance)"),
    MetricEntry("l2", "Euclidean distance between the hidden states of words i and j (probe distance)"),
    MetricEntry("jsd", "Jensen-Shannon distance (square root of the divergence, natural log) between the attention "
                       "distributions of words i and j (probe distance)"),
    MetricEntry("hellinger", "Hellinger distance between the attention distributions of words i and j (probe "
                             "distance)"),
    MetricEntry("cossim", "(cosine similarity + 1) / 2 between the hidden states of words i and j, a similarity read "
                          "as a distance: the cos of Kim et al.'s code (probe distance, --faithful)"),
    MetricEntry("weight", "the attention weight itself (probe attention, which has no other metric)"),
    MetricEntry("all", "the mean of every distortion term of a span: substitution, decontextualization and movement "
                       "(probe distortion)"),
    MetricEntry("sub", "substitution: the span replaced by one mask, distortion of the words outside it (probe "
                       "distortion)"),
    MetricEntry("dc", "decontextualization: the span alone between masks, distortion of its words (probe distortion)"),
    MetricEntry("move", "movement: the span moved to the front and to the end, distortion of every part (probe "
                        "distortion)"),
]}

#: The probes, in documentation order (``pair`` first: the default); F[i][j] relates word j to word i.
PROBE_ENTRIES: dict[str, ProbeEntry] = {e.name: e for e in [
    ProbeEntry("pair", "perturbed masking (Wu et al. 2020), the default: F[i][j] = d(H(x without i)_i, H(x without "
                       "i, j)_i); 1 + n + n(n-1)/2 sequences per sentence",
               metrics=("dist", "cos", "prob", "cpmi"),
               runner="pmask.perturb.engine.runner:impact_matrices", sequences="pmask.perturb.probes:pair_sequences",
               checkpoint=True,
               faithful=Faithful("Wu et al.", ("eisner", "cle", "mst-projective", "mst"), metric="dist")),
    ProbeEntry("single", "single masking, word i left unmasked: F[i][j] = d(H(x)_i, H(x without j)_i); n + 1 "
                         "sequences",
               metrics=("dist", "cos", "prob"),
               runner="pmask.perturb.probes.single:single_matrices", sequences="pmask.perturb.probes.single:sequences",
               checkpoint=True),
    ProbeEntry("attention", "attention weights merged to words as Clark et al. 2019: F[i][j] = attention of word i to "
                            "word j, the mean over i's pieces of the sum over j's pieces; 1 sequence",
               metrics=("weight",), subwords=("avg",), head_metrics=("weight",),
               runner="pmask.perturb.probes.onepass:attention_matrices",
               sequences="pmask.perturb.probes.onepass:sequences"),
    ProbeEntry("distance", "syntactic distance (Kim et al. 2020), low = close: F[i][j] = distance between words i and "
                           "j, their unmasked hidden states (cos, l1, l2) or attention distributions (jsd, hellinger); "
                           "1 sequence",
               metrics=("l2", "l1", "cos", "jsd", "hellinger", "cossim"), subwords=("avg", "first"),
               head_metrics=("jsd", "hellinger"), distance=True, decodes_layer_zero=True, bare_input=True,
               runner="pmask.perturb.probes.onepass:distance_matrices",
               sequences="pmask.perturb.probes.onepass:sequences",
               faithful=Faithful("Kim et al.", ("distance-split",), renames={"cos": "cossim"}, tokenize="bare")),
    ProbeEntry("distortion", "contextual distortion (Li & Lu 2023), a span chart, low = constituent: F[l][r-1] = how "
                             "far the words' states move when span l..r-1 is substituted, decontextualized or moved; "
                             "about 2n(n+1) sequences",
               metrics=("all", "sub", "dc", "move"), subwords=("avg",), yields=SPAN_CHART, decodes_layer_zero=True,
               runner="pmask.perturb.probes.distortion:distortion_charts",
               sequences="pmask.perturb.probes.distortion:sequences",
               faithful=Faithful("Li & Lu", ("cky",))),
]}


def resolve(dotted: str) -> Any:
    """The object a registry entry names as ``"package.module:name"`` (imported now, so a test may stand in
    for it by patching the module's attribute).

    Example:
        >>> resolve("pmask.common.probes:WORD_PAIRS")
        'word-pair matrix'
    """
    module, _, name = dotted.partition(":")
    return getattr(importlib.import_module(module), name)



# ---------------------------------------------------------------------------- views of the entries

V = TypeVar("V")


class EntryTable(Mapping[str, V]):
    """A read-only table computed from the entries each time it is read, so a patched registry shows at once
    (the tables of :mod:`pmask.common.options` are these)."""

    def __init__(self, make: Callable[[], Mapping[str, V]]):
        self._make = make

    def __getitem__(self, key: str) -> V:
        return self._make()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._make())

    def __len__(self) -> int:
        return len(self._make())

    def __repr__(self) -> str:
        return repr(dict(self._make()))


class EntryNames(Sequence[V]):
    """A read-only tuple computed from the entries each time it is read."""

    def __init__(self, make: Callable[[], tuple[V, ...]]):
        self._make = make

    @overload
    def __getitem__(self, index: int) -> V: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[V]: ...

    def __getitem__(self, index: int | slice) -> V | Sequence[V]:
        return self._make()[index]

    def __len__(self) -> int:
        return len(self._make())

    def __eq__(self, other: object) -> bool:
        return tuple(self) == (tuple(other) if isinstance(other, (tuple, EntryNames)) else other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return repr(self._make())
