"""What several commands share: their request from the parsed arguments (:func:`request_of`: the
corpus, model, impact and decoding settings as given; :mod:`pmask.pipeline.request` resolves it),
the impact source, the cost line said once the checks pass and before any model work (:func:`announce`,
over :func:`pmask.perturb.fill.estimate.estimate_cost`; ``--dry-run`` ends there), the checks of a store
used as a cache, and the Ctrl-C lines of commands that fill impact stores.

Example:
    >>> import argparse
    >>> probes_of(argparse.Namespace(probe=["pair", "single"]))
    ['pair', 'single']
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from pmask.cli.commands.command import NOTHING
from pmask.cli.outcome import Outcome
from pmask.common.errors import PmaskError, SettingError, StoreError
from pmask.common.labels import plural
from pmask.common.output_checks import Output, check_output
from pmask.corpora.corpus_spec import CorpusSpec

if TYPE_CHECKING:
    from pmask.perturb.fill.estimate import Computation
    from pmask.perturb.source import ImpactSource
    from pmask.pipeline.request import Request

logger = logging.getLogger("pmask.cli")

#: The dry run's closing line.
DRY_RUN = "dry run: nothing was computed or written"

# ---------------------------------------------------------------------------- library settings

def corpus_spec(args: argparse.Namespace, path: Path) -> CorpusSpec:
    """The corpus at ``path`` read as ``--format``, ``--limit`` and ``--max-words`` say."""
    return CorpusSpec(path, args.format, limit=args.limit, max_words=args.max_words)


def request_of(args: argparse.Namespace) -> Request:
    """The request of the parsed arguments of any command: what was given, None where nothing was
    (:func:`pmask.pipeline.request.resolve` chooses the rest, as for ``pmask.parse``); ``--probes``
    (several) leave the probe to the study, which resolves one request per probe."""
    from pmask.pipeline.request import Request

    source = getattr(args, "source", None)
    corpus = source if source is not None else getattr(args, "input", None)
    if getattr(args, "context", None) and corpus is not None and str(corpus) == "-":
        raise SettingError("{context} takes neighbouring sentences from the corpus file, which standard input is not; "
                           "give the corpus as a file")
    def given(name: str, default: Any = None) -> Any:   # a flag the command may not take
        return getattr(args, name, default)

    return Request.build(
        model=args.model, random_init=args.random_init, device=args.device, dtype=args.dtype,
        batch_tokens=args.batch_tokens, threads=args.threads, head=args.head,
        probe=args.probe if isinstance(args.probe, str) else None, metric=args.metric, subword=args.subword,
        tokenize=args.tokenize, context=args.context, decoder=given("decoder"),
        layers=given("layer", given("layers", -1)), root=given("root"), faithful=given("faithful", False),
        multiroot=given("multiroot", False), seed=given("seed", 0), bias=given("bias", 0.0),
        symmetrize=given("symmetrize"), absolute=given("absolute", False),
        corpus=None if corpus is None else corpus_spec(args, Path(corpus)))


def impact_source(args: argparse.Namespace) -> ImpactSource:
    """The impacts of SOURCE (a store, or a corpus and the model), an unfinished store allowed, with the
    request's impact settings resolved and checked (``heatmap``: nothing is decoded) and its cost said."""
    from pmask.perturb.source import ImpactSource
    from pmask.pipeline.request import prepare

    request = request_of(args)
    source = ImpactSource.open(corpus_spec(args, args.source), model=request.model, store=getattr(args, "store", None),
                               corpus=getattr(args, "corpus", None), progress=not args.quiet,
                               allow_incomplete=True)   # heatmap: maps of single sentences (warned when unfinished)
    announce(args, computations_of(args, source, prepare(request, source, decodes=False)))
    return source


# ---------------------------------------------------------------------------- the cost line

def computations_of(args: argparse.Namespace, source: ImpactSource, request: Request) -> list[Computation]:
    """What a command that reads the impacts of SOURCE computes with the resolved ``request``: nothing when
    SOURCE is a store or a cache store is read without a model; else its records, into ``--store`` if given
    (under ``--faithful`` without one, as the authors' reader leaves them)."""
    from pmask.perturb.fill.estimate import computation

    if source.store is not None or not source.computes:
        return []
    store = getattr(args, "store", None)
    return [computation(request.model, source.sentences, store=store, faithful=request.decoding.faithful)]


def announce(args: argparse.Namespace, computations: Sequence[Computation]) -> Outcome | None:
    """Say what ``computations`` will cost (one ``pmask:`` line, after the notes the checks held back:
    :func:`pmask.cli.logs.release_notes`); the Outcome that ends a ``--dry-run``, else None.

    Raises:
        PmaskError: records too long for the model that are never left out (documents), all named, before any
            model work.
    """
    from pmask.cli.logs import release_notes
    from pmask.perturb.fill.estimate import estimate_cost

    line = estimate_cost(computations).describe() if computations else None
    release_notes()
    if line is not None:
        logger.info("%s", line)
    return Outcome(summary=DRY_RUN) if getattr(args, "dry_run", False) else None


def command_line() -> list[str] | None:
    """The command line as run (recorded in an output's .meta.json)."""
    return ["pmask", *sys.argv[1:]] if sys.argv else None


# ---------------------------------------------------------------------------- checks

def check_cache_store(args: argparse.Namespace) -> None:
    """``--store`` as a cache it fills is an output folder too; a finished store is only read."""
    store = getattr(args, "store", None)
    if store is not None and not _complete_store(store):
        check_output(Output(store, folder=True))   # a finished one is only read (one with work left: fill_stores)


def _complete_store(path: Any) -> bool:
    """A finished impact store: read as a cache it needs nothing written (a read-only one serves too)."""
    from pmask.perturb.source import is_store
    from pmask.perturb.store.layout import read_manifest

    if not is_store(path):
        return False
    with contextlib.suppress(PmaskError):   # an unreadable store is reported when it is opened
        return bool(read_manifest(path).get("complete"))
    return False


def probes_of(args: argparse.Namespace) -> list[str]:
    """The probes given (``--probe``, or several ``--probes``); none when none is given (the resolver chooses
    each run's, or a store's own)."""
    probe = getattr(args, "probe", None)
    return probe if isinstance(probe, list) else [probe] if probe else []


# ---------------------------------------------------------------------------- Ctrl-C

def stored_sentences(store: Path) -> int | None:
    """Sentences a store holds (finished, not skipped), None when there is no readable store."""
    from pmask.perturb.store.layout import read_manifest

    if not (store / "manifest.json").is_file():
        return None
    try:
        manifest = read_manifest(store)
    except StoreError:
        return None
    return sum(1 for e in manifest["sentences"] if "skipped" not in e)


def kept(store: Path, count: int | None, how: str) -> str:
    """What an interrupted run kept in ``store`` (``count`` finished records: sentences, or documents as the
    store's corpus records its unit), and ``how`` to go on."""
    from pmask.common.units import WORD, unit_entry
    from pmask.perturb.store.layout import PARTIAL, read_manifest

    record = WORD.record
    with contextlib.suppress(PmaskError, KeyError, TypeError):   # no store or an unreadable one: sentences
        record = unit_entry((read_manifest(store).get("corpus") or {}).get("unit") or WORD.name).record
    part = (store / PARTIAL).is_file()   # the record under way, kept (see StoreWriter.tick)
    if not count and not part:
        return f"interrupted before any {record} was stored in {store}; nothing was kept"
    more = " and the work done on the next one" if part else ""
    return f"interrupted: {store} keeps {plural(count or 0, f'finished {record}')}{more}; {how}"


def decoding_interrupted(args: argparse.Namespace, hint: str) -> str:
    """The Ctrl-C line of a command that decodes impacts of SOURCE (computed, cached in ``--store``,
    or read from a store SOURCE, which may be getting layers added); ``hint`` ends the line when
    nothing was saved."""
    source, cache, model = getattr(args, "source", None), getattr(args, "store", None), getattr(args, "model", None)
    if source is not None and (Path(str(source)) / "manifest.json").is_file():
        if not model:   # read without a model: no layer is added, nothing is kept
            return NOTHING
        return (f"interrupted: the store {source} keeps every layer it finished adding (adding layers resumes "
                f"where it stopped): rerun the same command to continue; nothing else was written")
    if cache is not None:
        return kept(Path(cache), stored_sentences(Path(cache)),
                    "rerun the same command to continue from them (the store is resumed)")
    return f"interrupted: nothing was saved (impacts are computed in memory){hint}"


#: ``decoding_interrupted``'s hint for commands that take ``--store``.
STORE_HINT = "; add --store DIR to keep computed impacts across runs"
