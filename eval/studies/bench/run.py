"""``pmask bench``: a probing study in one call — many treebanks × probes × layers × decoders, with baselines.

For every treebank (CoNLL-U file, or PTB file/folder) and probe the impacts of all requested
layers are computed in one model pass into a resumable store (``OUTDIR/stores/<treebank>/`` for
probe pair, ``OUTDIR/stores/<treebank>.<probe>/`` for the others: :mod:`pmask.eval.studies.bench.probe_stores`);
the model is loaded only when some store is incomplete, so rerunning a finished study recomputes
nothing. Every treebank × probe × layer × decoder is then scored against gold, next to the baselines
(right-chain, left-chain, random projective; PTB: right/left-branching, random binary) on exactly
the same sentences, and :mod:`pmask.eval.studies.bench.results` writes ``results.json``, ``results.csv``,
``results.md`` and the plots.

Example:
    >>> from pmask.eval.studies.bench.run import BenchSettings, run_bench
    >>> result = run_bench(["ud/UD_German-PUD"], "out/", BenchSettings(model="random:tiny"))  # doctest: +SKIP
"""
from __future__ import annotations

import functools
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from pmask.common.display import RichDisplay
from pmask.common.errors import PmaskError
from pmask.common.labels import plural
from pmask.common.options import first_probe, resolve_layers
from pmask.common.output_checks import Output, check_output, make_output_folder
from pmask.common.progress import progress_bar
from pmask.eval.studies.bench.authors_recipes import check_faithful
from pmask.eval.studies.bench.bench_settings import BenchSettings
from pmask.eval.studies.bench.decoders import decoders_for, decoders_not_run, not_scored_line, probes_not_run
from pmask.eval.studies.bench.probe_stores import best_heads
from pmask.eval.studies.bench.rerun import check_rerun
from pmask.eval.studies.bench.treebanks import Treebank, find_treebanks
from pmask.perturb.fill.compute import FillRequest
from pmask.perturb.fill.distributed import is_main_rank
from pmask.perturb.fill.estimate import Computation, computation
from pmask.perturb.fill.model_spec import ModelSpec
from pmask.perturb.fill.stores import fill_stores
from pmask.perturb.source import ImpactSource
from pmask.pipeline.checks import refuse_for_family
from pmask.pipeline.request import model_family_of
from pmask.trees.registry import get_decoder
from pmask.trees.tasks import task_entry

logger = logging.getLogger(__name__)

__all__ = ["BenchPlan", "BenchResult", "BenchSettings", "decoders_for", "decoders_not_run", "ensure_stores",
           "plan_bench", "probes_not_run", "run_bench", "score_treebank"]


@dataclass
class BenchResult(RichDisplay):
    """Everything ``results.json`` holds (see :meth:`to_dict`); a notebook shows its tables."""

    settings: BenchSettings
    model: dict[str, Any]
    treebanks: list[dict[str, Any]]
    rows: list[dict[str, Any]] = field(default_factory=list)
    baselines: list[dict[str, Any]] = field(default_factory=list)
    breakdowns: list[dict[str, Any]] = field(default_factory=list)
    best_heads: list[dict[str, Any]] = field(default_factory=list)   # see pmask.eval.studies.bench.probe_stores
    timing: dict[str, Any] = field(default_factory=dict)
    is_main: bool = True   # False on torchrun ranks other than 0: they compute impacts, rank 0 alone scores and writes

    def describe(self, out_dir: str | os.PathLike) -> str:
        """One line: treebanks, rows, impacts computed/reused and seconds."""
        t = self.timing
        return (f"{out_dir}: {plural(len(self.treebanks), 'treebank')}, {plural(len(self.rows), 'row')}; "
                f"impacts {t.get('computed', 0)} "
                f"computed, {t.get('reused', 0)} reused; {t.get('total_seconds', 0.0):.1f} s")

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "settings": self.settings.to_dict(), "treebanks": self.treebanks,
                "rows": self.rows, "baselines": self.baselines, "breakdowns": self.breakdowns,
                "best_heads": self.best_heads, "timing": self.timing}

    @classmethod
    def read(cls, out_dir: str | os.PathLike) -> BenchResult:
        """The finished bench in ``out_dir``, as :func:`run_bench` returned it (from its ``results.json``), so that
        :meth:`to_pandas` and :meth:`to_markdown` work on it without rerunning anything.

        Raises:
            PmaskError: ``out_dir`` holds no readable ``results.json`` of a bench.
        """
        from pmask.eval.studies.bench.rerun import read_earlier

        data = read_earlier(Path(out_dir))
        if data is None:
            raise PmaskError(f"{out_dir}: no results.json (no finished bench there)")
        tables = {key: list(data.get(key) or []) for key in ("rows", "baselines", "breakdowns", "best_heads")}
        return cls(settings=BenchSettings.from_dict(data["settings"]), model=dict(data.get("model") or {}),
                   treebanks=list(data.get("treebanks") or []), rows=tables["rows"], baselines=tables["baselines"],
                   breakdowns=tables["breakdowns"], best_heads=tables["best_heads"],
                   timing=dict(data.get("timing") or {}))

    def to_markdown(self) -> str:
        """The title, the settings and the best setting of each probe per treebank (what ``pmask bench``
        prints; ``results.md`` has them and every layer, the best heads and the baselines)."""
        from pmask.eval.studies.bench.results import summary_markdown

        return summary_markdown(self)

    def to_pandas(self, table: str = "rows") -> Any:
        """``"rows"``, ``"baselines"``, ``"breakdowns"`` (long form), ``"best_heads"`` or ``"treebanks"`` as a pandas
        ``DataFrame``; needs ``pmask[pandas]``."""
        from pmask.eval.outputs.frames import bench_frame

        return bench_frame(self, table)


def ensure_stores(treebanks: Sequence[Treebank], out_dir: Path, settings: BenchSettings,
                  model_loader: Callable[[], Any], progress: bool = True,
                  skip: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """Compute every treebank's missing impacts for every probe (but those ``skip`` names for it: not scored
    there) into its store (``out_dir/stores/<name>`` for pair, ``<name>.<probe>`` for the others), as
    ``pmask impact --resume`` does
    (:func:`pmask.perturb.fill.stores.fill_stores`: every store planned first, the model loaded once and
    only if some store has work left, and checked against every probe before any is computed).

    Returns:
        ``{"computed": sentences computed, "reused": sentences already stored, "model_loaded": bool,
        "seconds": wall time}``.
    """
    t0 = time.perf_counter()
    planned = [(probe, settings.store_metric(metric)) for probe, metric in settings.runs]

    def checked() -> Any:   # the model, refused in one line for a probe or metric it cannot serve
        from pmask.perturb.probes.support import check_support

        model = model_loader()
        for probe, metric in planned:
            impact = settings.spec_for(probe, metric).impact
            check_support(model, probe, str(impact.metric), settings.layers, subword=str(impact.subword),
                          head=settings.attention_head_for(probe))
        return model

    load = functools.cache(checked)
    make_output_folder(out_dir)
    make_output_folder(out_dir / "stores")
    requests = [FillRequest.for_model(settings.spec_for(probe, metric), tb.sentences,
                                      settings.store_path(out_dir, tb.name, probe, metric),
                                      corpus_path=tb.path, layers=settings.layers, resume=True, progress=progress,
                                      selection={"format": tb.fmt, "limit": settings.limit,
                                                 "max_words": settings.max_words})
                for probe, metric in planned for tb in treebanks if probe not in (skip or {}).get(tb.name, ())]
    runs = fill_stores(requests, settings.model, load, overall="treebanks")   # one bar over all, with the time left
    return {"computed": sum(run.summary.computed for run in runs if run.summary is not None),
            "reused": sum(run.sentences - run.todo for run in runs),
            "model_loaded": load.cache_info().misses > 0,
            "seconds": round(time.perf_counter() - t0, 3)}


def _layers(settings: BenchSettings, store: Any) -> list[int]:
    num_layers = store.num_layers or max(store.layers)
    return list(resolve_layers(settings.layers, int(num_layers)))


def score_treebank(tb: Treebank, stores: Any, settings: BenchSettings) -> dict[str, list[dict[str, Any]]]:
    """Rows (every probe × layer × decoder), baseline rows, breakdowns and best heads of one treebank.

    ``stores``: ``{probe: opened store}`` or ``{(probe, metric): opened store}`` (several metrics; see
    :attr:`BenchSettings.runs`), or one store, read as the pair probe's. Every row names its metric.
    """
    from pmask.eval.studies.bench import scoring as sc

    if settings.root is None or settings.symmetrize is None:   # not run by run_bench: chosen now, as it would
        settings.resolve_decoding([tb])
    root_mode = str(settings.root)
    stores = stores if isinstance(stores, dict) else {first_probe(): stores}
    root = settings.root if "root" in task_entry(tb.task).settings else None
    base = {"treebank": tb.name, "language": tb.language}
    out: dict[str, list[dict[str, Any]]] = {"rows": [], "baselines": [], "breakdowns": [], "best_heads": []}
    golds: list[Any] = list(tb.sentences)
    scores = settings.scores_for(tb.task)
    for run, store in stores.items():
        probe, metric = run if isinstance(run, tuple) else (run, settings.metric_for(run))
        decoders = decoders_for(tb, settings, probe, metric)
        if not decoders:   # nothing reads what it gives on this treebank's task
            continue
        layers = _layers(settings, store)
        head = settings.attention_head_for(probe)
        faithful = settings.recipe(probe, metric) is not None   # the [CLS] layout: the authors' decoders read it
        impacts = ImpactSource(list(tb.sentences), tb.path, store=store,
                               model=ModelSpec(head=head)).impacts_by_layers(layers, include_cls=faithful)
        labels = {"probe": probe, "metric": metric,
                  **({"head": "mean" if head is None else head} if store.heads else {}), "faithful": faithful}
        decodings = {decoder: settings.decoding_for(probe, metric, decoder) for decoder in decoders}
        for layer in layers:
            for decoder in decoders:
                score, golds = sc.score_decoder(tb.sentences, impacts[layer], decodings[decoder].at(layer),
                                                punct=settings.punct, scores=scores)
                key = {**base, **labels, "layer": layer, "decoder": decoder, "root": root}
                out["rows"].append({**key, **sc.summary(score, golds)})
                if (details := sc.breakdown(score)) is not None:
                    out["breakdowns"].append({**key, **details})
        if store.heads:
            out["best_heads"] += [{**b, "metric": metric} for b in
                                  best_heads(tb, store, settings, probe, layers, decoders)]
    undirected = any(get_decoder(d).undirected for p, m in settings.runs for d in decoders_for(tb, settings, p, m))
    for name, score in sc.score_baselines(golds, tb.task, root=root_mode, punct=settings.punct, seed=settings.seed,
                                          scores=scores, undirected=undirected).items():
        key = {**base, "baseline": name, "root": root}
        out["baselines"].append({**key, **sc.summary(score, golds)})
        if (details := sc.breakdown(score)) is not None:
            out["breakdowns"].append({**key, **details})
    return out


def _treebank_record(tb: Treebank, stores: dict[Any, Any], settings: BenchSettings, not_run: list[str],
                     skipped: list[str]) -> dict[str, Any]:
    """What ``results.json`` records of a treebank: its file, task, sentences, stores, decoders run and not run,
    and the probes not scored on it (only when some are not)."""
    store = next(iter(stores.values()))
    return {"treebank": tb.name, "language": tb.language, "path": str(tb.path), "format": tb.fmt, "task": tb.task,
            **tb.fingerprint, "sentences": len(tb.sentences), "words": sum(len(s) for s in tb.sentences),
            "store": str(store.path), "skipped_too_long": len(store.skipped),
            **({"stores": {" ".join(k) if isinstance(k, tuple) else k: str(s.path)
                           for k, s in stores.items()}} if len(stores) > 1 else {}),
            "decoders": list(dict.fromkeys(d for p, m in settings.runs or [("", "")]
                                           for d in decoders_for(tb, settings, p or None, m or None))),
            "decoders_not_run": not_run, **({"probes_not_run": skipped} if skipped else {})}


def run_bench(inputs: Sequence[str | os.PathLike], out_dir: str | os.PathLike, settings: BenchSettings, *,
              model_loader: Callable[[], Any] | None = None, progress: bool = True,
              write: bool = True, rescore: bool = False) -> BenchResult:
    """Run a whole study and (with ``write``) write its files into ``out_dir``: :func:`plan_bench`, then
    :meth:`BenchPlan.run`.

    Args:
        inputs: treebank files or folders (CoNLL-U; PTB ``.mrg`` file or folder).
        out_dir: output directory (stores under ``stores/``, results beside them).
        settings: see :class:`BenchSettings`.
        model_loader: returns the loaded model; called at most once, and only when a store is incomplete
            (default: the model of the first run's spec, ``ModelSpec.load``).
        progress: tqdm bars over each store's sentences and over the scoring.
        write: write results.json/csv/md and the plots (see :mod:`pmask.eval.studies.bench.results`).
        rescore: when ``out_dir`` holds a study with other scoring settings (root, punct, seed, bias,
            head) or more treebanks, probes, layers or decoders than this run, replace its results
            (without it that is refused; see :mod:`pmask.eval.studies.bench.rerun`).

    Returns:
        A :class:`BenchResult`: one row per treebank × probe × layer × decoder, one baseline row per
        treebank × baseline, breakdowns, best heads (probes that keep every head), the model
        description and timings.
    """
    return plan_bench(inputs, out_dir, settings, rescore=rescore).run(model_loader=model_loader, progress=progress,
                                                                        write=write)


@dataclass
class BenchPlan:
    """A study read and checked, not run yet (:func:`plan_bench`): its treebanks (read once), settings with their
    decoding resolved, the decoders not run and the probes not scored on each treebank."""

    out: Path
    settings: BenchSettings
    treebanks: list[Treebank]
    not_run: dict[str, list[str]]
    skipped: dict[str, list[str]]
    started: float

    def computations(self) -> list[Computation]:
        """What the study computes: every treebank's records for each probe (and metric) scored on it, into its
        store (only what each store lacks is counted)."""
        settings = self.settings
        return [computation(settings.spec_for(probe, settings.store_metric(metric)), tb.sentences,
                            store=settings.store_path(self.out, tb.name, probe, metric))
                for probe, metric in settings.runs for tb in self.treebanks if probe not in self.skipped[tb.name]]

    def run(self, *, model_loader: Callable[[], Any] | None = None, progress: bool = True,
            write: bool = True) -> BenchResult:
        """Fill the stores (the model loaded once, only if one lacks something), score and (with ``write``) write."""
        from pmask.perturb.store import ImpactStore

        out, settings, treebanks, skipped = self.out, self.settings, self.treebanks, self.skipped
        first = settings.runs[0]   # one model for every run: loaded (and checked) as the first run's
        load = model_loader or settings.spec_for(first[0], settings.store_metric(first[1])).load
        info = ensure_stores(treebanks, out, settings, load, progress, skipped)
        if not is_main_rank():
            return BenchResult(settings=settings, model={}, treebanks=[], timing=info, is_main=False)
        t_scoring = time.perf_counter()
        result = BenchResult(settings=settings, model={}, treebanks=[])
        for tb in progress_bar(treebanks, desc="scoring", unit="treebank", enabled=progress):
            stores: dict[Any, Any] = {(probe, metric) if settings.metrics else probe: ImpactStore.open(
                settings.store_path(out, tb.name, probe, metric)) for probe, metric in settings.runs
                if probe not in skipped[tb.name]}
            store = next(iter(stores.values()))
            result.model = result.model or dict(store.manifest.get("model") or {})
            part = score_treebank(tb, stores, settings)
            for key in ("rows", "baselines", "breakdowns", "best_heads"):
                getattr(result, key).extend(part[key])
            result.treebanks.append(_treebank_record(tb, stores, settings, self.not_run[tb.name], skipped[tb.name]))
            if self.not_run[tb.name]:
                logger.warning("bench: %s is a %s treebank: %s not run on it", tb.name, tb.task,
                               ", ".join(self.not_run[tb.name]))
        impact_seconds = info.pop("seconds")
        result.timing = {**info, "impact_seconds": impact_seconds,
                         "scoring_seconds": round(time.perf_counter() - t_scoring, 3),
                         "total_seconds": round(time.perf_counter() - self.started, 3)}
        if write:
            from pmask.eval.studies.bench.results import write_outputs

            write_outputs(result, out)
        logger.debug("bench: %d treebanks, %d rows, %d computed, %d reused, %.1f s", len(treebanks),
                     len(result.rows), result.timing["computed"], result.timing["reused"],
                     result.timing["total_seconds"])
        return result


def _use_family(treebanks: Sequence[Treebank], settings: BenchSettings, root: str | None) -> None:
    """The model's family, read from its config once the settings are checked (no weights load): the decoding
    resolved again with its defaults, and what it does not run refused in one line (causal: prob, distortion, EDUs)."""
    settings.use_family(model_family_of(settings.model), treebanks, root)
    for tb in treebanks:
        for probe, metric in settings.runs:
            impact = settings.spec_for(probe, settings.store_metric(metric)).impact
            refuse_for_family(impact, settings.model.name, settings.family, tb.sentences)


def plan_bench(inputs: Sequence[str | os.PathLike], out_dir: str | os.PathLike, settings: BenchSettings, *,
               rescore: bool = False) -> BenchPlan:
    """Read every treebank once and check the study before any model work (every refusal in one line): the
    settings, the output folder, the decoding (resolved), decoders and probes against the treebanks, gold heads,
    the authors' pipelines under ``--faithful`` and an earlier study in ``out_dir`` (see :func:`run_bench`)."""
    settings.check()
    t0 = time.perf_counter()
    out = Path(out_dir)
    check_output(Output(out, folder=True))   # the study's folder (its parent must exist), before any work
    treebanks = find_treebanks(inputs, settings.limit, settings.max_words)
    given_root = settings.root
    settings.resolve_decoding(treebanks)
    not_run, skipped = decoders_not_run(treebanks, settings), probes_not_run(treebanks, settings)
    for tb in treebanks:   # refuse a decoder/treebank/probe mismatch before any model work
        rooted = "root" in task_entry(tb.task).settings
        missing = next((s for s in tb.sentences if s.root is None), None) if rooted else None
        if missing is not None and given_root == "gold":
            raise PmaskError(f"root mode gold needs gold heads, but {missing.where()} has none")
        if missing is not None:
            raise PmaskError(f"{missing.where()} has no gold heads to score against; bench needs gold treebanks")
    _use_family(treebanks, settings, given_root)
    not_run, skipped = decoders_not_run(treebanks, settings), probes_not_run(treebanks, settings)
    check_faithful(treebanks, settings)
    check_rerun(out, settings, treebanks, lambda tb, probe=None, metric=None: decoders_for(tb, settings, probe, metric),
                rescore)
    for tb in treebanks:
        for probe in skipped[tb.name]:   # one line each; no store is made for it there
            logger.warning("bench: %s", not_scored_line(probe, tb, settings))
    return BenchPlan(out, settings, treebanks, not_run, skipped, t0)
