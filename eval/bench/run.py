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

import logging
import os
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from pmask.common.errors import PmaskError, SettingError
from pmask.perturb.impact_source import ImpactSource
from pmask.perturb.model_spec import ModelSpec
from pmask.common.options import (DEFAULT_ROOT, PUNCT_MODES, ROOT_MODES, TOKENIZE_MODES, check_choice, check_probe,
                                  default_metric, has_heads)
from pmask.eval.bench.heads import best_heads, store_dir

logger = logging.getLogger(__name__)

#: Decoders used when none are requested, per task.
DEFAULT_DECODERS = {"dependency": ("eisner", "cle"), "constituency": ("mart",)}
_UD_FOLDER = re.compile(r"^UD_(?P<lang>[A-Za-z_]+)-")


@dataclass
class BenchSettings:
    """What a bench run does; recorded in ``results.json``.

    ``layers``: ints (0 = embeddings, negative from the top) or ``"all"`` (1..L); ``decoders``:
    None = eisner and cle for dependency treebanks, mart for PTB ones.
    """

    model: str
    layers: Sequence[int] | str = "all"
    decoders: Sequence[str] | None = None
    root: str = DEFAULT_ROOT
    limit: int | None = None
    metric: str | None = None         # None: each probe's default (pmask.common.options.PROBE_METRICS)
    subword: str = "avg"
    tokenize: str = "words"
    punct: str = "include"
    seed: int = 0
    device: str = "auto"
    dtype: str | None = None
    batch_tokens: int | None = None
    random_init: bool = False
    probes: Sequence[str] = ("pair",)   # each scored on its own store (pmask.common.options.PROBES)
    head: str | int | None = None      # head decoded by the probes that keep every head (None: mean)
    bias: float = 0.0                  # distance-split's right-branching bias

    def check(self) -> None:
        """One-line PmaskError for an unknown setting (before any work)."""
        check_choice("root mode", self.root, ROOT_MODES)
        for probe in self.probes:
            check_probe(probe, self.metric_for(probe), self.subword, self.head_for(probe))
        if self.head is not None and not any(self.head_for(p) is not None for p in self.probes):
            raise SettingError("{head} applies to probe attention and to probe distance with {metric} jsd or "
                               "hellinger, and none of them is benched")
        if self.bias and "distance-split" not in (self.decoders or ()):
            raise SettingError("{bias} is the right-branching bias of the distance-split decoder, which is not benched")
        check_choice("tokenisation mode", self.tokenize, TOKENIZE_MODES)
        check_choice("punctuation mode", self.punct, PUNCT_MODES)
        if self.limit is not None and self.limit < 1:
            raise PmaskError(f"limit must be a positive number of sentences, not {self.limit}")

    def metric_for(self, probe: str) -> str:
        """The metric ``probe`` runs with: the one given, else the probe's default."""
        return self.metric or default_metric(probe)

    def head_for(self, probe: str) -> str | int | None:
        """``head`` for a probe that keeps every head, None for the others."""
        return self.head if has_heads(probe, self.metric_for(probe)) else None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["probes"] = list(self.probes)
        data["layers"] = self.layers if isinstance(self.layers, str) else list(self.layers)
        data["decoders"] = None if self.decoders is None else list(self.decoders)
        return data


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
class BenchResult:
    """Everything ``results.json`` holds (see :meth:`to_dict`)."""

    settings: BenchSettings
    model: dict[str, Any]
    treebanks: list[dict[str, Any]]
    rows: list[dict[str, Any]] = field(default_factory=list)
    baselines: list[dict[str, Any]] = field(default_factory=list)
    breakdowns: list[dict[str, Any]] = field(default_factory=list)
    best_heads: list[dict[str, Any]] = field(default_factory=list)   # see pmask.eval.bench.heads
    timing: dict[str, Any] = field(default_factory=dict)
    is_main: bool = True   # False on torchrun ranks other than 0: they compute impacts, rank 0 alone scores and writes

    def describe(self, out_dir: str | os.PathLike) -> str:
        """One line: treebanks, rows, impacts computed/reused and seconds."""
        t = self.timing
        return (f"{out_dir}: {len(self.treebanks)} treebanks, {len(self.rows)} rows; impacts {t.get('computed', 0)} "
                f"computed, {t.get('reused', 0)} reused; {t.get('total_seconds', 0.0):.1f} s")

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "settings": self.settings.to_dict(), "treebanks": self.treebanks,
                "rows": self.rows, "baselines": self.baselines, "breakdowns": self.breakdowns,
                "best_heads": self.best_heads, "timing": self.timing}


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
    from pmask.corpora import read_corpus

    files = [item for path in inputs for item in _treebank_files(Path(path))]
    seen: dict[str, int] = {}
    out = []
    for path, fmt in dict.fromkeys(files):
        name = path.stem if path.is_file() else path.name
        if name in seen:
            name = f"{path.parent.name}-{name}"
        seen[name] = seen.get(name, 0) + 1
        sentences = read_corpus(path, fmt, limit=limit)
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


def _wanted(settings: BenchSettings, probe: str = "pair") -> Any:
    from pmask.perturb.store import StoreSettings

    return StoreSettings(model=settings.model, metric=settings.metric_for(probe), subword=settings.subword,
                         layers=settings.layers if isinstance(settings.layers, str) else tuple(settings.layers),
                         random_init=True if settings.random_init else None, tokenize=settings.tokenize, probe=probe)


def _cost(sentences: Sequence[Any], todo: Sequence[int], probe: str = "pair") -> int:
    """Forward sequences still to run (pair: n + n(n-1)/2 + 1 per sentence)."""
    from pmask.perturb.probes import sequences_per_sentence

    return sum(sequences_per_sentence(probe, len(sentences[i])) for i in todo)


def ensure_stores(treebanks: Sequence[Treebank], out_dir: Path, settings: BenchSettings,
                  model_loader: Callable[[], Any], progress: bool = True) -> dict[str, Any]:
    """Compute every treebank's missing impacts into ``out_dir/stores/<name>``; load the model only if needed.

    Returns:
        ``{"computed": sentences computed, "reused": sentences already stored, "model_loaded": bool,
        "seconds": wall time}``.
    """
    from tqdm.auto import tqdm

    from pmask.perturb.fill import compute_store
    from pmask.perturb.store import plan_store

    t0 = time.perf_counter()
    jobs = [(tb, probe) for probe in settings.probes for tb in treebanks]
    plans = {(tb.name, probe): plan_store(store_dir(out_dir, tb.name, probe), tb.sentences, _wanted(settings, probe),
                                          corpus_path=tb.path, resume=True) for tb, probe in jobs}
    info = {"computed": 0, "reused": sum(len(tb.sentences) - len(plans[tb.name, p]) for tb, p in jobs),
            "model_loaded": False}
    todo = [(tb, probe) for tb, probe in jobs if plans[tb.name, probe]]
    if todo:
        # lazy: torch is imported only once there is model work; under torchrun every rank computes its share
        from pmask.perturb.distributed import init_distributed

        init_distributed(settings.device)
        model = model_loader()
        info["model_loaded"] = True
        check_models_probes(model, settings, [p for _, p in todo])
        bar = tqdm(total=sum(_cost(tb.sentences, plans[tb.name, p], p) for tb, p in todo), unit="seq",
                   desc="treebanks", disable=not progress, position=0)
        for tb, probe in todo:
            bar.set_postfix_str(tb.name if len(settings.probes) == 1 else f"{tb.name} {probe}")
            summary = compute_store(model, tb.sentences, store_dir(out_dir, tb.name, probe), layers=settings.layers,
                                    metric=settings.metric_for(probe), subword=settings.subword,
                                    batch_tokens=settings.batch_tokens, corpus_path=tb.path, resume=True,
                                    progress=progress, tokenize=settings.tokenize, probe=probe)
            info["computed"] += summary.computed
            bar.update(_cost(tb.sentences, plans[tb.name, probe], probe))
        bar.close()
    info["seconds"] = round(time.perf_counter() - t0, 3)
    return info


def check_models_probes(model: Any, settings: BenchSettings, probes: Sequence[str]) -> None:
    """Refuse, before any store is computed, a probe the loaded model cannot serve (one line)."""
    from pmask.perturb.probes.support import check_support

    for probe in dict.fromkeys(probes):
        check_support(model, probe, settings.metric_for(probe), settings.layers, settings.subword,
                      settings.head_for(probe))


def _layers(settings: BenchSettings, store: Any) -> list[int]:
    from pmask.common.options import resolve_layers

    num_layers = store.num_layers or max(store.layers)
    return list(resolve_layers(settings.layers, int(num_layers)))


def score_treebank(tb: Treebank, stores: Any, settings: BenchSettings) -> dict[str, list[dict[str, Any]]]:
    """Rows (every probe × layer × decoder), baseline rows, breakdowns and best heads of one treebank.

    ``stores``: ``{probe: opened store}`` (or one store, read as the pair probe's).
    """
    from pmask.eval.bench import scoring as sc

    stores = stores if isinstance(stores, dict) else {"pair": stores}
    root = settings.root if tb.task == "dependency" else None
    base = {"treebank": tb.name, "language": tb.language}
    out: dict[str, list[dict[str, Any]]] = {"rows": [], "baselines": [], "breakdowns": [], "best_heads": []}
    golds: list[Any] = list(tb.sentences)
    for probe, store in stores.items():
        layers = _layers(settings, store)
        head = settings.head_for(probe)
        impacts = ImpactSource(list(tb.sentences), tb.path, store=store,
                               model=ModelSpec(head=head)).impacts_by_layers(layers)
        labels = {"probe": probe, **({"head": "mean" if head is None else head} if store.heads else {})}
        for layer in layers:
            for decoder in decoders_for(tb, settings):
                score, golds = sc.score_decoder(tb.sentences, impacts[layer], decoder=decoder, layer=layer,
                                                root=settings.root, punct=settings.punct, seed=settings.seed,
                                                bias=settings.bias)
                key = {**base, **labels, "layer": layer, "decoder": decoder, "root": root}
                out["rows"].append({**key, **sc.summary(score, golds)})
                if (details := sc.breakdown(score)) is not None:
                    out["breakdowns"].append({**key, **details})
        if store.heads:
            out["best_heads"] += best_heads(tb, store, settings, probe, layers, decoders_for(tb, settings))
    for name, score in sc.score_baselines(golds, tb.task, root=settings.root, punct=settings.punct,
                                          seed=settings.seed).items():
        key = {**base, "baseline": name, "root": root}
        out["baselines"].append({**key, **sc.summary(score, golds)})
        if (details := sc.breakdown(score)) is not None:
            out["breakdowns"].append({**key, **details})
    return out


def _default_loader(settings: BenchSettings) -> Callable[[], Any]:
    return ModelSpec(settings.model, random_init=settings.random_init, device=settings.device,
                     dtype=settings.dtype or "auto").load


def run_bench(inputs: Sequence[str | os.PathLike], out_dir: str | os.PathLike, settings: BenchSettings, *,
              model_loader: Callable[[], Any] | None = None, progress: bool = True,
              write: bool = True) -> BenchResult:
    """Run a whole study and (with ``write``) write its files into ``out_dir``.

    Args:
        inputs: treebank files or folders (CoNLL-U; PTB ``.mrg`` file or folder).
        out_dir: output directory (stores under ``stores/``, results beside them).
        settings: see :class:`BenchSettings`.
        model_loader: returns the loaded model; called at most once, and only when a store is incomplete
            (default: ``pmask.perturb.load_model`` with the settings' model, device and dtype).
        progress: tqdm bars over treebanks, sentences and scoring.
        write: write results.json/csv/md and the plots (see :mod:`pmask.eval.bench.files`).

    Returns:
        A :class:`BenchResult`: one row per treebank × layer × decoder, one baseline row per
        treebank × baseline, breakdowns, the model description and timings.
    """
    from tqdm.auto import tqdm

    from pmask.perturb.store import ImpactStore

    settings.check()
    t0 = time.perf_counter()
    out = Path(out_dir)
    treebanks = find_treebanks(inputs, settings.limit)
    for tb in treebanks:
        decoders_for(tb, settings)   # refuse a decoder/treebank mismatch before any model work
        if tb.task == "dependency" and settings.root == "gold":
            missing = next((s for s in tb.sentences if s.root is None), None)
            if missing is not None:
                raise PmaskError(f"root mode gold needs gold heads, but {missing.where()} has none")
    info = ensure_stores(treebanks, out, settings, model_loader or _default_loader(settings), progress)
    if os.environ.get("RANK", "0") not in ("", "0"):
        return BenchResult(settings=settings, model={}, treebanks=[], timing=info, is_main=False)
    t_scoring = time.perf_counter()
    result = BenchResult(settings=settings, model={}, treebanks=[])
    for tb in tqdm(treebanks, desc="scoring", unit="treebank", disable=not progress):
        stores = {probe: ImpactStore.open(store_dir(out, tb.name, probe)) for probe in settings.probes}
        store = next(iter(stores.values()))
        result.model = result.model or dict(store.manifest.get("model") or {})
        part = score_treebank(tb, stores, settings)
        for key in ("rows", "baselines", "breakdowns", "best_heads"):
            getattr(result, key).extend(part[key])
        result.treebanks.append({"treebank": tb.name, "language": tb.language, "path": str(tb.path),
                                 "format": tb.fmt, "task": tb.task, "sentences": len(tb.sentences),
                                 "words": sum(len(s) for s in tb.sentences),
                                 "store": str(store.path), "skipped_too_long": len(store.skipped),
                                 **({"stores": {p: str(s.path) for p, s in stores.items()}}
                                    if len(stores) > 1 else {})})
    impact_seconds = info.pop("seconds")
    result.timing = {**info, "impact_seconds": impact_seconds,
                     "scoring_seconds": round(time.perf_counter() - t_scoring, 3),
                     "total_seconds": round(time.perf_counter() - t0, 3)}
    if write:
        from pmask.eval.bench.files import write_outputs

        write_outputs(result, out)
    logger.info("bench: %d treebanks, %d rows, %d computed, %d reused, %.1f s", len(treebanks), len(result.rows),
                result.timing["computed"], result.timing["reused"], result.timing["total_seconds"])
    return result
