"""The cost line the commands that run a model say before model work, and ``--dry-run`` (that line
alone): :func:`announce` over :func:`pmask.perturb.probes.cost.estimate`, for the sentences each store still
lacks (:func:`pmask.perturb.store.plan.remaining`). Reads the corpus, the tokenizer and the config;
never the weights.

Example:
    >>> import argparse
    >>> announce(argparse.Namespace(dry_run=False), []) is None   # nothing to compute: nothing said
    True
"""
from __future__ import annotations

import argparse
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from pmask.cli.outcome import Outcome

logger = logging.getLogger("pmask.cli")

#: The dry run's closing line.
DRY_RUN = "dry run: nothing was computed or written"


@dataclass(frozen=True)
class Work:
    """Sentences one store (or one in-memory run) computes: its corpus, model spec and store."""

    sentences: Sequence[Any]
    spec: Any                       # a resolved pmask.perturb.fill.model_spec.ModelSpec
    store: Path | None = None       # a store being resumed: only what it lacks is counted
    resume: bool = True


def _todo(work: Work) -> list[Any]:
    from pmask.perturb.store.layout import MANIFEST, read_manifest
    from pmask.perturb.store.plan import remaining

    if work.store is None or not work.resume or not (Path(work.store) / MANIFEST).is_file():
        return list(work.sentences)
    return [work.sentences[k] for k in remaining(read_manifest(work.store), len(work.sentences))]


def cost_of(works: Sequence[Work]) -> Any:
    """The summed :class:`~pmask.perturb.probes.cost.Estimate` of ``works`` (one tokenizer load per model)."""
    from pmask.perturb.probes.cost import counting_parts, estimate, matmul_rate, max_input, total

    parts: dict[str, tuple[Any, Any]] = {}
    estimates, rate = [], None
    for work in works:
        spec = work.spec
        if spec.name not in parts:
            parts[spec.name] = counting_parts(str(spec.name))
        tokenizer, config = parts[spec.name]
        if rate is None:
            d = int(getattr(config, "hidden_size", 768))
            rate = matmul_rate(d, int(getattr(config, "intermediate_size", 4 * d)))
        impact = spec.impact
        estimates.append(estimate(_todo(work), str(impact.probe), impact.metric, tokenizer,
                                  tokenize=str(impact.tokenize or "words"), context=impact.context or 0,
                                  config=config, max_length=max_input(tokenizer, config), rate=rate))
    return total(estimates)


def announce(args: argparse.Namespace, works: Sequence[Work]) -> Outcome | None:
    """Say what ``works`` will cost (one ``pmask:`` line); the Outcome that ends a ``--dry-run``, else None."""
    dry = bool(getattr(args, "dry_run", False))
    if works:
        from pmask.common.errors import PmaskError

        try:
            logger.info("%s", cost_of(works).describe())
        except PmaskError as err:   # a run leaves the error to its own checks (which say it in their words)
            if dry:
                raise
            logger.debug("no cost estimate: %s", err)
    return Outcome(summary=DRY_RUN) if dry else None


def corpus_works(args: argparse.Namespace, path: Path, probes: Sequence[str], store: Any = None,
                 resume: bool = True) -> list[Work]:
    """One :class:`Work` per probe over the corpus at ``path`` (none when ``path`` is a store: it holds its impacts)."""
    from pmask.cli.commands.shared import corpus_spec, request_of
    from pmask.perturb.source import is_store
    from pmask.pipeline.request import Inputs, probe_request

    if is_store(path):
        return []
    sentences = corpus_spec(args, path).read()
    request, inputs = request_of(args), Inputs.of(sentences)
    return [Work(sentences, probe_request(request, p, inputs).model, None if store is None else Path(store), resume)
            for p in probes]


def bench_works(args: argparse.Namespace, settings: Any) -> list[Work]:
    """``bench``'s stores: every treebank x probe (x metric), each counted for what it lacks."""
    from pmask.eval.studies.bench.treebanks import find_treebanks

    treebanks = find_treebanks(args.inputs, settings.limit, settings.max_words)
    return [Work(tb.sentences, settings.spec_for(probe, metric),
                 settings.store_path(Path(args.output), tb.name, probe, metric))
            for probe, metric in settings.runs for tb in treebanks]


__all__ = ["DRY_RUN", "Work", "announce", "bench_works", "corpus_works", "cost_of"]
