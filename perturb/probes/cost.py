"""What a run will cost, known before any weights are loaded: the forward sequences each probe runs
for the sentences still to compute (exact), the tokens in them (exact: the tokenizer's own
alignment of each sentence, as the engine builds it) and a rough time on this machine.

A probe's cost per sentence is :func:`sentence_cost`: its registered sequence formula (the
``sequences`` of its entry in :data:`pmask.common.probe_entries.PROBE_ENTRIES`; CPMI's depends on the
pieces: its metric entry's ``sequences``, :func:`pmask.perturb.probes.cpmi.cpmi_sequences`) times the
sentence's model input length
(every sequence of a sentence is that long: a masked word keeps one mask per piece; not so for
probe ``distortion``, whose ``sub`` and ``dc`` rewrites are shorter: its tokens are an upper bound,
about 1.25x on PUD). A record whose unit runs a job of its own (``UnitEntry.job``: a document of EDUs)
is counted by its unit's ``sequences``: U(U+1)/2 for U units (its EDUs, and the [CLS] unit 0 that a store and
``--faithful`` mask like an EDU: :func:`pmask.perturb.engine.documents.document_sequences`), each its whole
input long. A sentence longer than the model's positions is left out by the engine, so it costs nothing: the
estimate names it; a record the unit never leaves out (a document) is refused here, before any model work.
The time is a FLOP estimate: the encoder's multiply-adds for those tokens (:func:`encoder_flop`)
divided by the float32 matrix-multiply rate this machine reaches in a short numpy measurement shaped as
the engine's batches are (:func:`matmul_rate`: ``batch_tokens`` rows, the median of many products, about
0.2 s), times :data:`OVERHEAD`; rough (a factor of about 2 either way): it leaves out the MLM head, the
fast path's shortcuts and other processes on the machine. (A product of 512 rows measured a small model's
rate 5-15x too low: at hidden size 128 it lasts tens of microseconds, and its threads' start-up, not its
arithmetic, was timed.)

This module imports no torch (a probe's formula is imported from its module when it is asked for).

Example:
    >>> Estimate(sentences=2, sequences=13, tokens=91, seconds=200.0).describe()
    '2 sentences to compute: 13 sequences, 91 tokens, about 3 min 20 s on this machine'
    >>> Estimate(sentences=1, sequences=120, tokens=9000, record="document").describe()
    '1 document to compute: 120 sequences, 9,000 tokens'
    >>> Estimate(sentences=1, sequences=7, tokens=35, too_long=("s2",)).describe()
    '1 sentence to compute: 7 sequences, 35 tokens; 1 sentence too long for the model is left out: s2'
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np

from pmask.common.labels import plural
from pmask.common.options import metric_entry, probe_entry
from pmask.common.units import unit_entry, unit_of
from pmask.perturb.engine.units import refuse_long

logger = logging.getLogger(__name__)

#: Measured time over the FLOP floor (the README's Speed table: about 1.2x for bert-base on CPU).
OVERHEAD = 1.25


@dataclass(frozen=True)
class Estimate:
    """The cost of computing ``sentences`` sentences (for one probe, or summed over several).

    Attributes:
        sentences: sentences to compute (a resumed store: those it does not hold yet).
        sequences: forward sequences the engine runs for them.
        tokens: model-input tokens in those sequences.
        seconds: rough wall time on this machine (None: unknown).
        rate: the measured float32 FLOP/s the time was computed from (None: unknown).
        record: what one of ``sentences`` is: ``"sentence"``, or ``"document"`` (of EDUs).
        too_long: the ids of the sentences longer than the model's positions, which the engine leaves out.
    """

    sentences: int
    sequences: int
    tokens: int
    seconds: float | None = None
    rate: float | None = None
    record: str = "sentence"
    too_long: tuple[str, ...] = ()

    def __add__(self, other: Estimate) -> Estimate:
        secs = None if self.seconds is None or other.seconds is None else self.seconds + other.seconds
        records = {e.record for e in (self, other) if e.sentences or e.too_long} or {other.record}
        record = records.pop() if len(records) == 1 else "record"
        return Estimate(self.sentences + other.sentences, self.sequences + other.sequences,
                        self.tokens + other.tokens, secs, self.rate or other.rate, record,
                        self.too_long + other.too_long)

    def describe(self) -> str:
        """One line: ``1000 sentences to compute: 238,512 sequences, 7.1 M tokens, about 2 h 40 min …``, and the
        sentences too long for the model, which are left out."""
        tokens = f"{self.tokens / 1e6:.1f} M tokens" if self.tokens >= 1_000_000 else f"{self.tokens:,} tokens"
        line = f"{plural(self.sentences, self.record)} to compute: {self.sequences:,} sequences, {tokens}"
        if self.sentences and self.seconds is not None:
            line += f", about {duration(self.seconds)} on this machine"
        if self.too_long:
            more = f" and {len(self.too_long) - 10} more" if len(self.too_long) > 10 else ""
            verb = "is" if len(self.too_long) == 1 else "are"
            line += (f"; {plural(len(self.too_long), self.record)} too long for the model {verb} left out: "
                     f"{', '.join(self.too_long[:10])}{more}")
        return line


def duration(seconds: float) -> str:
    """``9600`` -> ``'2 h 40 min'``: two units at most, rounded.

    Example:
        >>> duration(9600), duration(200), duration(0.4)
        ('2 h 40 min', '3 min 20 s', '1 s')
    """
    s = max(1, round(seconds))
    h, m, sec = s // 3600, s % 3600 // 60, s % 60
    if h:
        return f"{h} h {m} min" if m else f"{h} h"
    if m:
        return f"{m} min {sec} s" if sec else f"{m} min"
    return f"{sec} s"


def sentence_cost(probe: str, metric: str, pieces: Sequence[int], length: int,
                  family: Any = None) -> tuple[int, int]:
    """Forward sequences and tokens ``probe`` runs for one sentence.

    Args:
        probe: a key of :data:`pmask.common.probe_entries.PROBE_ENTRIES`.
        metric: its metric (``cpmi``'s sequences depend on the pieces; distortion's on the metric).
        pieces: the number of pieces of each word.
        length: the model input length (pieces, context and special tokens).
        family: the model's :class:`~pmask.common.model_families.ModelFamily` (None: the masked LMs'): a family
            that reads the probe or metric its own way counts its own (``ModelFamily.sequences``).

    Returns:
        ``(sequences, tokens)``; tokens = sequences x ``length``.
    """
    counted = family.sequences(probe, metric) if family is not None else None
    if counted is not None:   # a model family's own reading of the probe or metric counts its own inputs
        sequences = counted(list(pieces))
        return sequences, sequences * length
    own = metric_entry(metric).sequences
    # a metric with its own count (cpmi's chain rule counts pieces; distortion's each its rewrites), else the probe's
    sequences = own(list(pieces)) if own is not None else probe_entry(probe).sequences(len(pieces))
    return sequences, sequences * length


def encoder_flop(length: int, config: Any, layers: int | None = None) -> float:
    """Multiply-add FLOP of one sequence of ``length`` tokens through ``layers`` (default: all) encoder layers:
    per layer 2(4d² + 2·d·d_ff) per token (projections, feed-forward) + 4·T·d per token (attention)."""
    d = int(getattr(config, "hidden_size", 768))
    ff = int(getattr(config, "intermediate_size", 4 * d))
    n = layers if layers is not None else int(getattr(config, "num_hidden_layers", 12))
    return n * length * (2 * (4 * d * d + 2 * d * ff) + 4 * length * d)


#: Rows of the measured product: the engine's tokens per batch on CPU (``DEFAULT_BATCH_TOKENS``), every
#: feed-forward product's rows.
BATCH_ROWS = 2048


def matmul_rate(d: int = 768, ff: int = 3072, seconds: float = 0.2, rows: int = BATCH_ROWS) -> float:
    """Float32 FLOP/s of a [rows, d] x [d, ff] matrix product on this machine: the median of the products
    run in about ``seconds`` (a few slowed by other processes move it little)."""
    rng = np.random.default_rng(0)
    a, b = rng.random((rows, d), dtype=np.float32), rng.random((d, ff), dtype=np.float32)
    a @ b   # warm-up
    times: list[float] = []
    start = time.perf_counter()
    while time.perf_counter() - start < seconds or len(times) < 3:
        began = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - began)
    return 2 * rows * d * ff / max(float(np.median(times)), 1e-9)


def record_cost(sentence: Any, alignment: Any, probe: str, metric: str, include_cls: bool,
                family: Any = None) -> tuple[int, int]:
    """Forward sequences and tokens of one record: a sentence by its probe's formula (:func:`sentence_cost`),
    a record whose unit runs a job of its own by its unit's (``UnitEntry.sequences``: a document of EDUs,
    U(U+1)/2 for its U units, its EDUs and the [CLS] unit with ``include_cls``), every sequence its whole input
    long."""
    length = len(alignment)
    unit = unit_entry(getattr(sentence, "unit", "word"))
    if unit.sequences is not None:
        sequences = unit.sequences(alignment.n_words + int(include_cls))
        return sequences, sequences * length
    pieces = [len(alignment.pieces(i)) for i in range(alignment.n_words)]
    return sentence_cost(probe, metric, pieces, length, family)


def estimate(sentences: Iterable[Any], probe: str, metric: str, tokenizer: Any, *, tokenize: str, context: int,
             config: Any = None, max_length: int | None = None, rate: float | None = None, include_cls: bool = True,
             kept: int = 0, model: str = "the model") -> Estimate:
    """The cost of computing ``sentences`` (all of them: pass only those still to compute) with ``probe``.

    Args:
        sentences: :class:`pmask.corpora.Sentence` objects or lists of words.
        probe, metric: the probe and its metric.
        tokenizer: the model's fast tokenizer (:func:`pmask.perturb.models.tokenizer.load_tokenizer`).
        tokenize: the tokenisation mode (:data:`pmask.common.tokenization.TOKENIZE_ENTRIES`).
        context: words of neighbouring sentences (``--context``): counted in each input's length.
        config: the model config (hidden sizes, layers); None: no time.
        max_length: sentences longer than this (tokens) are skipped by the engine and cost nothing (named in
            :attr:`Estimate.too_long`); a record its unit never leaves out is refused.
        rate: FLOP/s; None: :func:`matmul_rate` at the config's sizes.
        include_cls: documents of EDUs run with the [CLS] unit (a store, ``--faithful``).
        kept: sequences of the first of ``sentences`` a resumed store kept (its part done: not run again).
        model: the model's name, for the refusal of records too long for it.

    Returns:
        An :class:`Estimate`.

    Raises:
        PmaskError: records longer than ``max_length`` that their unit never leaves out (documents), all named.
    """
    from pmask.perturb.alignment import align_sentence, get_aligner
    from pmask.perturb.alignment.neighbours import add_context

    chosen = list(sentences)
    if context:
        chosen = add_context(chosen, context)
    get_aligner(tokenize)   # an unknown mode: refused here

    def aligner(tokenizer: Any, sentence: Any) -> Any:   # quietly: the run says each warning once, grouped
        return align_sentence(tokenizer, sentence, tokenize, warn=False)

    from pmask.common.model_families import detect_family

    family = detect_family(config) if config is not None else None   # its own readings cost their own
    unit = unit_of(chosen)
    alignments = [aligner(tokenizer, sentence) for sentence in chosen]
    ids = [str(getattr(sentence, "id", k + 1)) for k, sentence in enumerate(chosen)]
    if max_length is not None and not unit.skips_long:   # never truncated nor left out: refused, all named
        refuse_long([(i, len(a)) for i, a in zip(ids, alignments)], max_length, model, unit)
    n = sequences = tokens = 0
    flop = 0.0
    too_long: list[str] = []
    for k, (sentence, alignment) in enumerate(zip(chosen, alignments)):
        length = len(alignment)
        if max_length is not None and length > max_length:   # as the engine: longer than the positions, left out
            too_long.append(ids[k])
            continue
        seqs, _ = record_cost(sentence, alignment, probe, metric, include_cls, family)
        seqs -= min(kept, seqs) if k == 0 else 0
        n, sequences, tokens = n + 1, sequences + seqs, tokens + seqs * length
        if config is not None:
            flop += seqs * encoder_flop(length, config)
    if config is None:
        return Estimate(n, sequences, tokens, record=unit.record, too_long=tuple(too_long))
    d = int(getattr(config, "hidden_size", 768))
    rate = rate or matmul_rate(d, int(getattr(config, "intermediate_size", 4 * d)))
    return Estimate(n, sequences, tokens, flop / rate * OVERHEAD, rate, unit.record, tuple(too_long))


def counting_parts(name: str) -> tuple[Any, Any]:
    """The tokenizer and config of model ``name`` (a hub name, a directory, a bundled model's name, a GGUF file,
    ``random:NAME``), read without its weights, as :func:`pmask.perturb.models.load.load_model` reads them (its
    refusals, one line), the tokenizer set up for the model's family as a run sets it up."""
    from pmask.common.options import split_random
    from pmask.perturb.models.config import load_config, locate, quiet_transformers
    from pmask.perturb.models.gguf import is_gguf, model_folder
    from pmask.perturb.models.tokenizer import load_tokenizer, prepare_tokenizer

    name = split_random(name)[0]
    _, where, local_only = locate(name)
    with quiet_transformers():
        if is_gguf(where):   # its de-quantised folder holds the tokenizer (made once, kept for the run)
            where = str(model_folder(where)[0])
        config, family = load_config(where, None, local_only)
        tokenizer = load_tokenizer(where, local_files_only=local_only, needs_mask_token=family.needs_mask_token)
        prepare_tokenizer(tokenizer, family, name)   # a causal input's start token is in its length
    return tokenizer, config


def max_input(tokenizer: Any, config: Any) -> int | None:
    """The longest input the model takes (position embeddings, the tokenizer's maximum), None if neither says."""
    sizes = [int(v) for v in (getattr(config, "max_position_embeddings", None),
                              getattr(tokenizer, "model_max_length", None)) if v and int(v) < 10**6]
    return min(sizes) if sizes else None


def total(estimates: Iterable[Estimate]) -> Estimate:
    """Several probes' (or stores') estimates summed (``bench``)."""
    out = Estimate(0, 0, 0, 0.0)
    for e in estimates:
        out = out + e
    return out


__all__ = ["BATCH_ROWS", "OVERHEAD", "Estimate", "counting_parts", "duration", "encoder_flop", "estimate",
           "matmul_rate", "max_input", "record_cost", "sentence_cost", "total"]
