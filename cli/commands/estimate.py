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
    include_cls: bool = True        # documents of EDUs run with the [CLS] unit (any store; --faithful)


def _todo(work: Work) -> tuple[list[Any], int]:
    """The records a store lacks, and the sequences of the first of them it kept part done (a killed run's)."""
    from pmask.perturb.store.layout import MANIFEST, read_manifest
    from pmask.perturb.store.plan import remaining

    if work.store is None or not work.resume or not (Path(work.store) / MANIFEST).is_file():
        return list(work.sentences), 0
    left = remaining(read_manifest(work.store), len(work.sentences))
    return [work.sentences[k] for k in left], _kept(Path(work.store), left[0] if left else None)


def _kept(store: Path, first: int | None) -> int:
    """Sequences a store's ``partial.safetensors`` holds of the record at position ``first`` (0: none)."""
    import json

    from pmask.perturb.store.layout import PARTIAL

    if first is None or not (store / PARTIAL).is_file():
        return 0
    try:
        import safetensors

        with safetensors.safe_open(str(store / PARTIAL), framework="numpy") as f:
            index = json.loads((f.metadata() or {})["pmask_partial"])["index"]
            done = int(f.get_tensor("done_sequences")[0])
    except Exception:  # noqa: BLE001 - a damaged file is only recomputed by the run: count it whole
        return 0
    return done if index == first else 0


def cost_of(works: Sequence[Work]) -> Any:
    """The summed :class:`~pmask.perturb.probes.cost.Estimate` of ``works`` (one tokenizer load per model)."""
    from pmask.perturb.probes.cost import BATCH_ROWS, counting_parts, estimate, matmul_rate, max_input, total

    parts: dict[str, tuple[Any, Any]] = {}
    estimates, rate = [], None
    for work in works:
        spec = work.spec
        if spec.name not in parts:
            parts[spec.name] = counting_parts(str(spec.name))
        tokenizer, config = parts[spec.name]
        if rate is None:
            d = int(getattr(config, "hidden_size", 768))
            rows = min(spec.batch_tokens or BATCH_ROWS, BATCH_ROWS * 4)   # the engine's batches' rows
            rate = matmul_rate(d, int(getattr(config, "intermediate_size", 4 * d)), rows=rows)
        impact = spec.impact
        todo, kept = _todo(work)
        estimates.append(estimate(todo, str(impact.probe), impact.metric, tokenizer,
                                  tokenize=str(impact.tokenize or "words"), context=impact.context or 0,
                                  config=config, max_length=max_input(tokenizer, config), rate=rate,
                                  include_cls=work.include_cls, kept=kept))
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
                 resume: bool = True, authors_texts: bool = False) -> list[Work]:
    """One :class:`Work` per probe over the corpus at ``path`` (none when ``path`` is a store: it holds its impacts).

    Documents of EDUs run with the [CLS] unit into a store or under ``--faithful``; ``authors_texts``: a
    ``--faithful`` run without a store computes them on the EDU texts as Wu et al.'s reader leaves them
    (``parse``: :func:`pmask.corpora.scidtb.authors_documents`).
    """
    from pmask.cli.commands.shared import corpus_spec, request_of
    from pmask.corpora.scidtb import authors_documents
    from pmask.corpora.sentence import is_documents
    from pmask.perturb.source import is_store
    from pmask.pipeline.request import Inputs, probe_request

    if is_store(path):
        return []
    sentences = corpus_spec(args, path).read()
    request, inputs = request_of(args), Inputs.of(sentences)
    faithful = bool(getattr(args, "faithful", False))
    counted = (authors_documents(sentences) if authors_texts and faithful and store is None and is_documents(sentences)
               else sentences)
    return [Work(counted, probe_request(request, p, inputs).model, None if store is None else Path(store), resume,
                 include_cls=store is not None or faithful)
            for p in probes]


def bench_works(args: argparse.Namespace, settings: Any) -> list[Work]:
    """``bench``'s stores: every treebank x probe (x metric), each counted for what it lacks."""
    from pmask.eval.studies.bench.treebanks import find_treebanks

    treebanks = find_treebanks(args.inputs, settings.limit, settings.max_words)
    return [Work(tb.sentences, settings.spec_for(probe, metric),
                 settings.store_path(Path(args.output), tb.name, probe, metric))
            for probe, metric in settings.runs for tb in treebanks]


__all__ = ["DRY_RUN", "Work", "announce", "bench_works", "corpus_works", "cost_of"]
