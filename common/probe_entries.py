"""What a probe and an impact metric are, and their two registries (torch-free).

A :class:`ProbeEntry` says how syntax is read out of a model: its metrics (the first is its default),
subword policies, which of its metrics keep one value per attention head (they need attention
weights), what it yields (a word-pair matrix or a span chart; a distance, low = close, or not), the
decoders of its authors' pipeline, its runner (a :class:`ProbeRunner`) and its cost in forward
sequences. A :class:`MetricEntry` says what an impact metric reads from the model (hidden states, or
the MLM head's probabilities, as natural logs or not), the subword policy it fixes, its own authors'
pipeline (``--faithful``) and its computation: how a word's value with one word masked is compared
with its value with a second word masked (``compare``, the masking probes), how two words' values of
one unmasked pass are compared (``between_words``, probe ``distance``), or the sentence job that plans
its own sequences (``job``, CPMI's chain rule).

The entries are created and registered where their code is, in :mod:`pmask.perturb.probes` (one module
per probe; :mod:`pmask.perturb.probes.measures` and :mod:`pmask.perturb.probes.cpmi` for metrics of
their own), when ``pmask`` is imported (``pmask/__init__.py`` imports :mod:`pmask.perturb.probes`). This
module imports nothing of ``pmask.perturb``: the engine reads a metric's computation from its entry.
Everything else derives from :data:`PROBE_ENTRIES` and :data:`METRIC_ENTRIES`: the tables of
:mod:`pmask.common.options` (CLI choices, help, validation, store manifests), the engine's reads,
the decoders' pairing checks and the ``--faithful`` defaults.

Example:
    >>> import pmask   # registers every probe and metric
    >>> METRIC_ENTRIES["cpmi"].mlm_head, METRIC_ENTRIES["cpmi"].subword
    (True, 'sum')
    >>> PROBE_ENTRIES["distortion"].yields, PROBE_ENTRIES["distance"].needs("jsd")
    ('span chart', ('attentions',))
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from pmask.common.errors import OptionError
from pmask.common.registry import Registry

if TYPE_CHECKING:   # annotations only: this module loads neither
    import numpy as np
    import torch

#: What a probe yields per sentence and layer.
WORD_PAIRS = "word-pair matrix"   # F[i][j] relates word j to word i
SPAN_CHART = "span chart"         # F[l][r-1] scores the span of words l..r-1 (low = constituent)

#: A masking comparison: a word's base values and its values with a second word masked,
#: ``[N, layers(, D)]`` each, to one impact per read ``[N, layers]``.
Compare = Callable[["torch.Tensor", "torch.Tensor"], "torch.Tensor"]
#: A measure between every two rows of one pass: ``[..., m, D]`` (vectors or distributions) to ``[..., m, m]``.
BetweenWords = Callable[["torch.Tensor"], "torch.Tensor"]


class ProbeRunner(Protocol):
    """What runs a probe: one array per sentence, in input order (None for a sentence too long for the
    model), a word-pair matrix ``F[l, i, j]`` (word j's relation to word i) or a span chart
    ``F[l, left, right - 1]``, ``[len(layers), n, n]`` (``[len(layers), H, n, n]`` for the metrics that keep
    every attention head). ``metric``, ``subword`` and ``tokenize`` are resolved settings
    (:func:`pmask.pipeline.request.resolve`); ``kwargs`` are the engine's (``batch_tokens``, ``include_cls``,
    ``progress``, ``stats``, ``fast_path``; ``checkpoint`` for a probe whose entry says it takes one).
    """

    def __call__(self, model: Any, sentences: Iterable[Any], *, layers: Sequence[int] | int | str, metric: str,
                 subword: str, tokenize: str, **kwargs: Any) -> Iterator[np.ndarray | None]: ...


@dataclass(frozen=True)
class AuthorsRecipe:
    """An authors' recipe (``--faithful``; "the authors' pipeline" in messages, not the ``pmask.pipeline`` wing):
    what it decodes with and which settings it fixes where none is given.

    Attributes:
        authors: who it reproduces ("Hoover et al."), for messages.
        decoders: the decoders of the recipe; the first is its default where the recipe picks one.
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
    """An impact metric ``d``: what it reads, what it fixes and how it is computed.

    Attributes:
        name, description: the name and the one line shown in CLI help and written into manifests.
        mlm_head: read from the MLM head (the probability of the original piece), not from hidden states.
        log_prob: compared as natural-log probabilities (base - current); implies ``mlm_head``.
        subword: the one subword policy it takes (None: the probe's policies) and ``subword_reason`` why.
        compare: how the masking probes (pair, single) compare a word's values (:data:`Compare`).
        between_words: how probe ``distance`` measures two words' states or attention rows (:data:`BetweenWords`).
        job: the sentence job class that plans its sequences and reads (None: the probe's), a
            ``pmask.perturb.engine.jobs.SentenceJob``.
        faithful: its own authors' pipeline under ``--faithful`` (None: the probe's).
        sequences: its own forward sequences for a sentence, from the pieces of each word, where they are not the
            probe's (its own :attr:`job`: cpmi's chain rule; distortion's metrics, each its rewrites; None: the
            probe's count from the number of words).
        pools: it compares states that may be pooled over a unit's pieces (a distance between vectors, not one
            piece's probability), so the units whose pieces are pooled take it (``UnitEntry.pooled``: EDUs).
    """

    name: str
    description: str
    mlm_head: bool = False
    log_prob: bool = False
    subword: str | None = None
    subword_reason: str = ""
    compare: Compare | None = None
    between_words: BetweenWords | None = None
    job: type[Any] | None = None
    faithful: AuthorsRecipe | None = None
    sequences: Callable[[list[int]], int] | None = None
    pools: bool = False

    @property
    def needs(self) -> str:
        """What it reads from the model: ``"MLM head"`` or ``"hidden states"``."""
        return "MLM head" if self.mlm_head else "hidden states"

    def comparison(self) -> Compare:
        """Its :attr:`compare`; a one-line :class:`OptionError` for a metric the masking probes cannot compute."""
        if self.compare is None:
            raise OptionError(f"metric {self.name} compares no masked values (the masking probes' metrics: "
                              f"{', '.join(n for n, e in METRIC_ENTRIES.items() if e.compare)})")
        return self.compare

    def measure(self) -> BetweenWords:
        """Its :attr:`between_words`; a one-line :class:`OptionError` for a metric that measures no two words."""
        if self.between_words is None:
            raise OptionError(f"metric {self.name} measures no two words of one pass (those that do: "
                              f"{', '.join(n for n, e in METRIC_ENTRIES.items() if e.between_words)})")
        return self.between_words


@dataclass(frozen=True)
class ProbeEntry:
    """A probe: a way to read syntax out of a model without training.

    Attributes:
        name: the ``--probe`` value.
        description: "SHORT NAME: definition; cost" (the CLI shows the part before the colon).
        metrics: the metrics it takes; the first is its default.
        runner: its arrays, one per sentence (a :class:`ProbeRunner`).
        sequences: its forward sequences for a sentence of n words (the ``include_cls`` layout).
        subwords: the subword policies it takes (None: every one).
        attention_head_metrics: its metrics whose values differ per attention head (read from attention weights;
            stores keep every head, ``--head`` picks; subword ``avg`` only).
        yields: :data:`WORD_PAIRS` or :data:`SPAN_CHART` (read only by span decoders, ``cky``).
        distance: F is a distance, low = syntactically close (dependency decoders and MART read -F).
        decodes_layer_zero: its layer-0 values are a tree like any other layer's (not all zeros).
        bare_input: takes a tokenisation mode without special tokens (``--tokenize bare``).
        checkpoint: its runner takes the engine's ``checkpoint`` (a store keeps a sentence under way).
        faithful: its authors' pipeline (None: it has no ``--faithful`` mode).
    """

    name: str
    description: str
    metrics: tuple[str, ...]
    runner: ProbeRunner
    sequences: Callable[[int], int]
    subwords: tuple[str, ...] | None = None
    attention_head_metrics: tuple[str, ...] = ()
    yields: str = WORD_PAIRS
    distance: bool = False
    decodes_layer_zero: bool = False
    bare_input: bool = False
    checkpoint: bool = False
    faithful: AuthorsRecipe | None = None

    @property
    def spans(self) -> bool:
        """Whether it yields span charts rather than word-pair matrices."""
        return self.yields == SPAN_CHART

    @property
    def attention_only(self) -> bool:
        """Whether every metric it takes reads attention weights."""
        return set(self.metrics) <= set(self.attention_head_metrics)

    def needs(self, metric: str) -> tuple[str, ...]:
        """What it reads from the model with ``metric``: ``("attentions",)``, ``("MLM head",)`` or
        ``("hidden states",)``."""
        if metric in self.attention_head_metrics:
            return ("attentions",)
        entry = METRIC_ENTRIES.get(metric)
        return (entry.needs if entry else "hidden states",)


#: The impact metrics, in documentation order (the order their modules register them in:
#: :mod:`pmask.perturb.probes`). ``H(x∖S)_p`` is the hidden state at piece ``p`` with the words ``S`` masked.
METRIC_ENTRIES: Registry[MetricEntry] = Registry("metric")

#: The probes, in documentation order (``pair`` first: the default); F[i][j] relates word j to word i.
PROBE_ENTRIES: Registry[ProbeEntry] = Registry("probe")
