"""``pmask bench``: a probing study in one call — many treebanks × layers × decoders, with baselines.

For every treebank (CoNLL-U file, or PTB file/folder) the impacts of all requested layers are
computed in one model pass into a resumable store ``OUTDIR/stores/<treebank>/``; the model is
loaded only when some store is incomplete, so rerunning a finished study recomputes nothing.
Every treebank × layer × decoder is then scored against gold, next to the baselines
(right-chain, left-chain, random projective; PTB: right/left-branching, random binary) on exactly
the same sentences, and :mod:`pmask.eval.bench.files` writes ``results.json``, ``results.csv``,
``results.md`` and the plots.

Example:
    >>> from pmask.eval.bench.run import BenchSettings, run_bench
    >>> result = run_bench(["ud/UD_German-PUD"], "out/", BenchSettings(model="random:tiny"))  # doctest: +SKIP
"""
from __future__ import annotations

import functools
import logging
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from pmask.common.display import RichDisplay
from pmask.common.errors import PmaskError
from pmask.common.files import Output, check_output, make_output_folder
from pmask.common.options import DEFAULT_ROOT, PUNCT_MODES, ROOT_MODES, check_choice, resolve_layers
from pmask.common.progress import progress_bar
from pmask.corpora.spec import CorpusSpec
from pmask.perturb.build import fill_stores
from pmask.perturb.distributed import is_main_rank
from pmask.perturb.fill import FillRequest
from pmask.perturb.impact_source import ImpactSource
from pmask.perturb.model_spec import ModelSpec
from pmask.trees.induce import refuse_layer_zero

logger = logging.getLogger(__name__)

#: Decoders used when none are requested, per task.
DEFAULT_DECODERS = {"dependency": ("eisner", "cle"), "constituency": ("mart",)}
_UD_FOLDER = re.compile(r"^UD_(?P<lang>[A-Za-z_]+)-")


@dataclass
class BenchSettings:
    """What a bench run does; recorded in ``results.json``.

    ``model``: the model and how impacts are computed with it (a name stands for ``ModelSpec(name)``;
    unset impact settings take their defaults). ``layers``: ints (0 = embeddings, negative from
    the top) or ``"all"`` (1..L); ``decoders``: None = eisner and cle for dependency treebanks,
    mart for PTB ones; ``limit``: the first N sentences of each treebank.
    """

    model: ModelSpec
    layers: Sequence[int] | str = "all"
    decoders: Sequence[str] | None = None
    root: str = DEFAULT_ROOT
    limit: int | None = None
    punct: str = "include"
    seed: int = 0

    def __post_init__(self) -> None:
        spec = ModelSpec(self.model) if isinstance(self.model, str) else self.model   # a name: ModelSpec(name)
        self.model = spec.with_defaults()

    def check(self) -> None:
        """One-line PmaskError for an unknown setting (before any work)."""
        check_choice("root mode", self.root, ROOT_MODES)
        self.model.impact.check()
        check_choice("punctuation mode", self.punct, PUNCT_MODES)
        refuse_layer_zero(self.layers, "layers")   # layer 0's impacts are all zeros: no tree to score
        if self.limit is not None and self.limit < 1:
            raise PmaskError(f"limit must be a positive number of sentences, not {self.limit}")

    def to_dict(self) -> dict[str, Any]:
        """The settings as ``results.json`` records them (one flat dict)."""
        spec = self.model
        return {"model": spec.name, "layers": self.layers if isinstance(self.layers, str) else list(self.layers),
                "decoders": None if self.decoders is None else list(self.decoders), "root": self.root,
                "limit": self.limit, **spec.impact.as_dict(), "punct": self.punct, "seed": self.seed,
                "device": spec.device, "dtype": None if spec.dtype == "auto" else spec.dtype,
                "batch_tokens": spec.batch_tokens, "random_init": spec.random_init}


@dataclass
class Treebank:
    """One input treebank: ``name`` = file stem (folder name for PTB folders), its sentences."""

    name: str
    language: str
    path: Path
    fmt: str
    sentences: list[Any]

    @property
    def task(self) -> str:
        return "constituency" if self.fmt == "ptb" else "dependency"


@dataclass
class BenchResult(RichDisplay):
    """Everything ``results.json`` holds (see :meth:`to_dict`); a notebook shows its tables."""

    settings: BenchSettings
    model: dict[str, Any]
    treebanks: list[dict[str, Any]]
    rows: list[dict[str, Any]] = field(default_factory=list)
    baselines: list[dict[str, Any]] = field(default_factory=list)
    breakdowns: list[dict[str, Any]] = field(default_factory=list)
    timing: dict[str, Any] = field(default_factory=dict)
    is_main: bool = True   # False on torchrun ranks other than 0: they compute impacts, rank 0 alone scores and writes

    def describe(self, out_dir: str | os.PathLike) -> str:
        """One line: treebanks, rows, impacts computed/reused and seconds."""
        t = self.timing
        return (f"{out_dir}: {len(self.treebanks)} treebanks, {len(self.rows)} rows; impacts {t.get('computed', 0)} "
                f"computed, {t.get('reused', 0)} reused; {t.get('total_seconds', 0.0):.1f} s")

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "settings": self.settings.to_dict(), "treebanks": self.treebanks,
                "rows": self.rows, "baselines": self.baselines, "breakdowns": self.breakdowns, "timing": self.timing}

    def to_pandas(self, table: str = "rows") -> Any:
        """``"rows"``, ``"baselines"``, ``"breakdowns"`` (long form) or ``"treebanks"`` as a pandas
        ``DataFrame``; needs ``pmask[pandas]``."""
        from pmask.eval.frames import bench_frame

        return bench_frame(self, table)


def language_of(path: Path, sentences: Sequence[Any]) -> str:
    """Language of a treebank: from a ``UD_<Language>-<name>`` folder, else ``# language``-style
    metadata, else the file stem's prefix (``de_pud-ud-test`` -> ``de``)."""
    for part in (path.parent.name, path.name):
        m = _UD_FOLDER.match(part)
        if m:
            return m.group("lang").replace("_", " ")
    for sent in sentences[:1]:
        meta = getattr(getattr(sent, "source", None), "metadata", None) or {}
        for key in ("language", "lang"):
            if meta.get(key):
                return str(meta[key])
    return path.stem.split("_")[0]


def _treebank_files(path: Path) -> list[tuple[Path, str]]:
    if not path.exists():
        raise PmaskError(f"{path}: no such file or directory")
    if path.is_dir():
        conllu = sorted([*path.rglob("*.conllu"), *path.rglob("*.conll")])
        if conllu:
            return [(p, "conllu") for p in conllu]
        if any(path.rglob("*.mrg")):
            return [(path, "ptb")]
        raise PmaskError(f"{path}: folder holds no .conllu or .mrg file")
    if path.suffix in (".conllu", ".conll"):
        return [(path, "conllu")]
    if path.suffix == ".mrg":
        return [(path, "ptb")]
    raise PmaskError(f"{path}: not a treebank (expected .conllu/.conll, .mrg, or a folder of them)")


def find_treebanks(inputs: Sequence[str | os.PathLike], limit: int | None = None) -> list[Treebank]:
    """Read every treebank named by ``inputs`` (files or folders), the first ``limit`` sentences each.

    Names are file stems (a repeated stem gets its parent folder's name prepended).
    """
    files = [item for path in inputs for item in _treebank_files(Path(path))]
    seen: dict[str, int] = {}
    out = []
    for path, fmt in dict.fromkeys(files):
        name = path.stem if path.is_file() else path.name
        if name in seen:
            name = f"{path.parent.name}-{name}"
        seen[name] = seen.get(name, 0) + 1
        sentences = CorpusSpec(path, fmt, limit=limit).read()
        if not sentences:
            raise PmaskError(f"{path}: no sentences")
        out.append(Treebank(name, language_of(path, sentences), path, fmt, sentences))
    if not out:
        raise PmaskError("no treebank given")
    return out


def decoders_for(treebank: Treebank, settings: BenchSettings) -> list[str]:
    """The requested decoders that fit the treebank's task (the task's defaults when none were given)."""
    from pmask.eval.bench.scoring import task_of

    if settings.decoders is None:
        return list(DEFAULT_DECODERS[treebank.task])
    chosen = [d for d in settings.decoders if task_of(d) == treebank.task]
    if not chosen:
        raise PmaskError(f"{treebank.path}: none of the decoders {', '.join(settings.decoders)} "
                         f"produces {treebank.task} trees")
    return chosen


def decoders_not_run(treebanks: Sequence[Treebank], settings: BenchSettings) -> dict[str, list[str]]:
    """Per treebank, the requested decoders that do not fit its task (they are not run there).

    Raises:
        PmaskError: a requested decoder that fits none of the treebanks (it would give no row at all).
    """
    from pmask.eval.bench.scoring import task_of

    requested = list(settings.decoders or [])
    tasks = {tb.task for tb in treebanks}
    useless = [d for d in requested if task_of(d) not in tasks]
    if useless:
        raise PmaskError(f"decoders {', '.join(useless)}: they produce {task_of(useless[0])} trees, but every treebank "
                         f"given is a {' and '.join(sorted(tasks))} treebank; leave them out of --decoders")
    return {tb.name: [d for d in requested if task_of(d) != tb.task] for tb in treebanks}


def ensure_stores(treebanks: Sequence[Treebank], out_dir: Path, settings: BenchSettings,
                  model_loader: Callable[[], Any], progress: bool = True) -> dict[str, Any]:
    """Compute every treebank's missing impacts into ``out_dir/stores/<name>``, as ``pmask impact --resume``
    does (:func:`pmask.perturb.build.fill_stores`: every store planned first, the model loaded once and
    only if some store has work left).

    Returns:
        ``{"computed": sentences computed, "reused": sentences already stored, "model_loaded": bool,
        "seconds": wall time}``.
    """
    t0 = time.perf_counter()
    load = functools.cache(model_loader)
    make_output_folder(out_dir)
    make_output_folder(out_dir / "stores")
    requests = [FillRequest.for_model(settings.model, tb.sentences, out_dir / "stores" / tb.name, corpus_path=tb.path,
                                      layers=settings.layers, resume=True, progress=progress,
                                      selection={"format": tb.fmt, "limit": settings.limit, "max_words": None})
                for tb in treebanks]
    runs = fill_stores(requests, settings.model, load)
    return {"computed": sum(run.summary.computed for run in runs if run.summary is not None),
            "reused": sum(run.sentences - run.todo for run in runs),
            "model_loaded": load.cache_info().misses > 0,
            "seconds": round(time.perf_counter() - t0, 3)}


def _layers(settings: BenchSettings, store: Any) -> list[int]:
    num_layers = store.num_layers or max(store.layers)
    return list(resolve_layers(settings.layers, int(num_layers)))


def score_treebank(tb: Treebank, store: Any, settings: BenchSettings) -> dict[str, list[dict[str, Any]]]:
    """Rows (every layer × decoder), baseline rows and breakdowns of one treebank."""
    from pmask.eval.bench import scoring as sc

    root = settings.root if tb.task == "dependency" else None
    base = {"treebank": tb.name, "language": tb.language}
    out: dict[str, list[dict[str, Any]]] = {"rows": [], "baselines": [], "breakdowns": []}
    layers = _layers(settings, store)
    impacts = ImpactSource(list(tb.sentences), tb.path, store=store).impacts_by_layers(layers)
    golds: list[Any] = list(tb.sentences)
    for layer in layers:
        for decoder in decoders_for(tb, settings):
            score, golds = sc.score_decoder(tb.sentences, impacts[layer], decoder=decoder, layer=layer,
                                            root=settings.root, punct=settings.punct, seed=settings.seed)
            key = {**base, "layer": layer, "decoder": decoder, "root": root}
            out["rows"].append({**key, **sc.summary(score, golds)})
            if (details := sc.breakdown(score)) is not None:
                out["breakdowns"].append({**key, **details})
    for name, score in sc.score_baselines(golds, tb.task, root=settings.root, punct=settings.punct,
                                          seed=settings.seed).items():
        key = {**base, "baseline": name, "root": root}
        out["baselines"].append({**key, **sc.summary(score, golds)})
        if (details := sc.breakdown(score)) is not None:
            out["breakdowns"].append({**key, **details})
    return out


def run_bench(inputs: Sequence[str | os.PathLike], out_dir: str | os.PathLike, settings: BenchSettings, *,
              model_loader: Callable[[], Any] | None = None, progress: bool = True,
              write: bool = True) -> BenchResult:
    """Run a whole study and (with ``write``) write its files into ``out_dir``.

    Args:
        inputs: treebank files or folders (CoNLL-U; PTB ``.mrg`` file or folder).
        out_dir: output directory (stores under ``stores/``, results beside them).
        settings: see :class:`BenchSettings`.
        model_loader: returns the loaded model; called at most once, and only when a store is incomplete
            (default: ``settings.model.load``).
        progress: tqdm bars over each store's sentences and over the scoring.
        write: write results.json/csv/md and the plots (see :mod:`pmask.eval.bench.files`).

    Returns:
        A :class:`BenchResult`: one row per treebank × layer × decoder, one baseline row per
        treebank × baseline, breakdowns, the model description and timings.
    """
    from pmask.perturb.store import ImpactStore

    settings.check()
    t0 = time.perf_counter()
    out = Path(out_dir)
    check_output(Output(out, folder=True))   # the study's folder (its parent must exist), before any work
    treebanks = find_treebanks(inputs, settings.limit)
    not_run = decoders_not_run(treebanks, settings)
    for tb in treebanks:
        decoders_for(tb, settings)   # refuse a decoder/treebank mismatch before any model work
        if tb.task == "dependency" and settings.root == "gold":
            missing = next((s for s in tb.sentences if s.root is None), None)
            if missing is not None:
                raise PmaskError(f"root mode gold needs gold heads, but {missing.where()} has none")
    info = ensure_stores(treebanks, out, settings, model_loader or settings.model.load, progress)
    if not is_main_rank():
        return BenchResult(settings=settings, model={}, treebanks=[], timing=info, is_main=False)
    t_scoring = time.perf_counter()
    result = BenchResult(settings=settings, model={}, treebanks=[])
    for tb in progress_bar(treebanks, desc="scoring", unit="treebank", enabled=progress):
        store = ImpactStore.open(out / "stores" / tb.name)
        result.model = result.model or dict(store.manifest.get("model") or {})
        part = score_treebank(tb, store, settings)
        for key in ("rows", "baselines", "breakdowns"):
            getattr(result, key).extend(part[key])
        result.treebanks.append({"treebank": tb.name, "language": tb.language, "path": str(tb.path),
                                 "format": tb.fmt, "task": tb.task, "sentences": len(tb.sentences),
                                 "words": sum(len(s) for s in tb.sentences),
                                 "store": str(out / "stores" / tb.name), "skipped_too_long": len(store.skipped),
                                 "decoders": decoders_for(tb, settings), "decoders_not_run": not_run[tb.name]})
        if not_run[tb.name]:
            logger.warning("bench: %s is a %s treebank: %s not run on it", tb.name, tb.task,
                           ", ".join(not_run[tb.name]))
    impact_seconds = info.pop("seconds")
    result.timing = {**info, "impact_seconds": impact_seconds,
                     "scoring_seconds": round(time.perf_counter() - t_scoring, 3),
                     "total_seconds": round(time.perf_counter() - t0, 3)}
    if write:
        from pmask.eval.bench.files import write_outputs

        write_outputs(result, out)
    logger.debug("bench: %d treebanks, %d rows, %d computed, %d reused, %.1f s", len(treebanks), len(result.rows),
                result.timing["computed"], result.timing["reused"], result.timing["total_seconds"])
    return result
