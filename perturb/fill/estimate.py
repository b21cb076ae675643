"""What a run will compute, and what that costs, before any weights load: the library side of the cost line
every command that runs a model says (``pmask.cli.commands.shared.announce``) and of ``pmask.estimate``.

A :class:`Computation` is the records one store (or one run in memory) computes with a resolved model spec:
:func:`computation` builds it as the run will (under ``--faithful`` without a store, the texts the authors'
reader leaves: the unit's ``authors_texts``), :func:`estimate_cost` counts what each still lacks (a store
resumed: the records it does not hold, less what a killed run kept of the first of them,
:func:`pmask.perturb.store.plan.todo_of`) with :func:`pmask.perturb.probes.cost.estimate`, loading each model's
tokenizer and config once, never its weights. Records too long for the model are named (sentences, which the
engine leaves out) or refused (documents, which are never truncated nor left out).

Example:
    >>> estimate_cost([]).describe()
    '0 sentences to compute: 0 sequences, 0 tokens'
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from pmask.common.units import unit_of
from pmask.perturb.fill.model_spec import ModelSpec
from pmask.perturb.probes.cost import Estimate, total

__all__ = ["Computation", "check_fit", "computation", "estimate_cost"]


@dataclass(frozen=True)
class Computation:
    """The records one store (or one run in memory) computes.

    Attributes:
        sentences: the records, as the model will run on them.
        spec: the resolved model and impact settings (:func:`pmask.pipeline.request.resolve`).
        store: the store they are computed into (None: in memory); only what it lacks is counted.
        resume: the store is resumed (else it is computed anew).
        include_cls: the records run in the [CLS] layout (a store, ``--faithful``): a document's [CLS] unit counts.
    """

    sentences: Sequence[Any]
    spec: ModelSpec
    store: Path | None = None
    resume: bool = True
    include_cls: bool = True


def computation(spec: ModelSpec, sentences: Sequence[Any], *, store: str | Path | None = None, resume: bool = True,
                faithful: bool = False) -> Computation:
    """What a run computes: ``sentences`` with the resolved ``spec``, into ``store`` if given. Under ``faithful``
    without a store, the records as the authors' reader leaves them, where their unit says
    (``UnitEntry.authors_texts``: Wu et al.'s EDU texts), as :class:`pmask.perturb.source.ImpactSource` computes
    them; documents run in the [CLS] layout into a store or under ``faithful``."""
    texts = unit_of(sentences).authors_texts
    counted = texts(sentences) if faithful and store is None and texts is not None else sentences
    return Computation(counted, spec, None if store is None else Path(store), resume, store is not None or faithful)


def check_fit(computations: Sequence[Computation]) -> None:
    """Refuse, before the weights load, records longer than the model's positions that their unit never leaves
    out (documents; ``UnitEntry.skips_long`` False), all named: what :func:`estimate_cost` refuses, without the
    count (``pmask.parse`` and ``pmask.impacts``, which say no cost line). Reads each such model's tokenizer and
    config, nothing for records that may be left out.

    Raises:
        PmaskError: as :func:`pmask.perturb.engine.units.refuse_long`.
    """
    from pmask.perturb.alignment import align_sentence
    from pmask.perturb.engine.units import refuse_long
    from pmask.perturb.probes.cost import counting_parts, max_input

    for work in computations:
        unit = unit_of(work.sentences)
        if unit.skips_long or not work.sentences:
            continue
        tokenizer, config = counting_parts(str(work.spec.name))
        longest = max_input(tokenizer, config)
        if longest is not None:
            tokenize = str(work.spec.impact.tokenize)
            refuse_long([(str(s.id), len(align_sentence(tokenizer, s, tokenize, warn=False))) for s in work.sentences],
                        longest, str(work.spec.name), unit)


def estimate_cost(computations: Sequence[Computation]) -> Estimate:
    """The summed :class:`~pmask.perturb.probes.cost.Estimate` of ``computations`` (one tokenizer and config load
    per model; none for a computation with nothing left to do).

    Raises:
        PmaskError: records too long for the model that their unit never leaves out (documents), all named.
    """
    from pmask.perturb.probes.cost import BATCH_ROWS, counting_parts, estimate, matmul_rate, max_input
    from pmask.perturb.store.plan import todo_of

    parts: dict[str, tuple[Any, Any]] = {}
    estimates, rate = [], None
    for work in computations:
        spec, impact = work.spec, work.spec.impact
        left, kept = todo_of(work.store, len(work.sentences), work.resume) if work.store is not None else (
            list(range(len(work.sentences))), 0)
        todo = [work.sentences[k] for k in left]
        if not todo:
            estimates.append(Estimate(0, 0, 0, 0.0, record=unit_of(work.sentences).record))
            continue
        name = str(spec.name)
        if name not in parts:
            parts[name] = counting_parts(name)
        tokenizer, config = parts[name]
        if rate is None:
            d = int(getattr(config, "hidden_size", 768))
            rows = min(spec.batch_tokens or BATCH_ROWS, BATCH_ROWS * 4)   # the engine's batches' rows
            rate = matmul_rate(d, int(getattr(config, "intermediate_size", 4 * d)), rows=rows)
        estimates.append(estimate(todo, str(impact.probe), str(impact.metric), tokenizer, tokenize=str(impact.tokenize),
                                  context=impact.context_words, config=config, max_length=max_input(tokenizer, config),
                                  rate=rate, include_cls=work.include_cls, kept=kept, model=name))
    return total(estimates) if estimates else Estimate(0, 0, 0)
