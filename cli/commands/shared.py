"""What several commands share: their request from the parsed arguments (:func:`request_of`: the
corpus, model, impact and decoding settings as given; :mod:`pmask.pipeline.request` resolves it),
the impact source, the checks of a store used as a cache and of the layers decoded, and the Ctrl-C
lines of commands that fill impact stores.

Example:
    >>> import argparse
    >>> probes_of(argparse.Namespace(probe=["pair", "single"]))
    ['pair', 'single']
"""
from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pmask.cli.commands.command import NOTHING
from pmask.common.errors import PmaskError, SettingError, StoreError
from pmask.common.labels import plural
from pmask.common.output_checks import Output, check_output
from pmask.corpora.corpus_spec import CorpusSpec

if TYPE_CHECKING:
    from pmask.perturb.source import ImpactSource
    from pmask.pipeline.request import Request

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
    request's impact settings resolved (``heatmap``: nothing is decoded)."""
    from pmask.perturb.source import ImpactSource
    from pmask.pipeline.request import prepare

    request = request_of(args)
    source = ImpactSource.open(corpus_spec(args, args.source), model=request.model, store=getattr(args, "store", None),
                               corpus=getattr(args, "corpus", None), progress=not args.quiet,
                               allow_incomplete=True)   # heatmap: maps of single sentences (warned when unfinished)
    prepare(request, source, decodes=False)
    return source


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
    """The probes a command decodes: as given, a store SOURCE's own (its manifest), else pair."""
    from pmask.perturb.source import is_store
    from pmask.perturb.store.layout import read_manifest

    probe = getattr(args, "probe", None)
    if isinstance(probe, list):
        return probe
    source = getattr(args, "source", None)
    if probe is None and source is not None and is_store(source):
        with contextlib.suppress(PmaskError):   # an unreadable store is reported when it is opened
            return [read_manifest(source).get("probe") or "pair"]
    return [probe or "pair"]


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
    """What an interrupted run kept in ``store`` (``count`` finished sentences), and ``how`` to go on."""
    from pmask.perturb.store.layout import PARTIAL

    part = (store / PARTIAL).is_file()   # the sentence under way, kept (see StoreWriter.tick)
    if not count and not part:
        return f"interrupted before any sentence was stored in {store}; nothing was kept"
    more = " and the work done on the next one" if part else ""
    return f"interrupted: {store} keeps {plural(count or 0, 'finished sentence')}{more}; {how}"


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
