"""Rerunning ``pmask bench`` into an OUTDIR that already holds a study: reuse, extend or refuse.

The earlier study is what ``OUTDIR/results.json`` records (settings, treebanks, rows) and, for the
stores of a first run that never finished, what each store's manifest records. This run is compared
with it before any work:

* **the same study**: reused as it is (no model work when the stores are complete);
* **a wider study**, more treebanks, probes, metrics (``--metrics``), layers or decoders and everything
  else the same:
  extended (new stores, layers added to the stored sentences); every earlier row comes out the same;
* **other stores**, another model or weights, metric, subword policy or tokenisation, ``--faithful`` asked or
  no longer asked (the authors' pipelines: other impacts, other decodings), or other sentences
  (``--limit``, ``--max-words``, a treebank file's contents): refused whatever the flags,
  since the stores hold impacts of another model or of other sentences; another ``-o`` is needed;
* **other scores**, another root, punctuation, seed, bias or head, an optional score (``scores``: ``hoover_uuas``)
  asked or no longer asked, or a narrower study (a
  treebank, probe, metric, layer or decoder left out): refused unless ``rescore`` (``--rescore``), which
  replaces the results files and reuses the stores.

A row's key is (treebank, probe, metric, layer, decoder). A study of several metrics keeps each
(probe, metric) in its own store (:func:`pmask.eval.studies.bench.probe_stores.store_dir`); one of one metric per
probe keeps the folders of earlier releases, so going from one to several metrics computes the
kept metric's store again under its new name.

A refusal is one line naming each difference as ``SETTING EARLIER (this run: NOW)``.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from pmask.common.errors import SettingError, StoreError
from pmask.common.files import read_json
from pmask.common.options import resolve_layers, split_random
from pmask.corpora.provenance import recorded_impact
from pmask.eval.scores.columns import optional_scores
from pmask.perturb.fill.model_spec import absolute_if_local
from pmask.perturb.store import read_manifest

logger = logging.getLogger(__name__)

#: Settings that decide what the stores hold (a difference needs another OUTDIR), as ``results.json`` names them.
STORE_FIELDS = ("subword", "tokenize", "limit", "max_words", "context")
#: Settings that decide only how the stored impacts are scored (a difference needs ``rescore``).
SCORE_FIELDS = ("root", "punct", "seed", "bias", "head", "symmetrize", "absolute")
#: What a study recorded before a field existed stands for (its default).
_UNRECORDED = {"context": 0, "symmetrize": "none", "absolute": False}
#: How a message names a dimension of the study (``{name}``: the command line shows its flag).
_DIMENSIONS = ("treebank", "{probe}", "{metrics}", "{layers}", "{decoders}")

Cell = tuple[str, str, str, int | None, str]   # treebank, probe, metric, layer (None: not compared), decoder


@dataclass(frozen=True)
class Verdict:
    """How this run relates to the earlier study: differences that need another OUTDIR, differences
    that need ``rescore``, and what it adds."""

    other_stores: list[str]
    other_scores: list[str]
    added: list[str]


def _shown(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value))
    return str(value)


def _difference(name: str, earlier: Any, now: Any) -> str:
    return f"{{{name}}} {_shown(earlier)} (this run: {_shown(now)})"


def _plain(text: str) -> str:
    """``text`` with each ``{name}`` shown bare (for log lines; errors are rendered by their front end)."""
    return SettingError(text).render()


def read_earlier(out_dir: Path) -> dict[str, Any] | None:
    """``OUTDIR/results.json`` as a dict (None when there is none).

    Raises:
        SettingError: a results.json that is not a bench's (this run would replace it).
    """
    path = Path(out_dir) / "results.json"
    if not path.is_file():
        return None
    try:
        data = read_json(path)
    except (OSError, ValueError) as err:   # ValueError: UnicodeDecodeError, json.JSONDecodeError
        raise SettingError(f"{path}: unreadable ({err}); this run would replace it: choose another -o") from None
    if not isinstance(data, dict) or not isinstance(data.get("settings"), dict):
        raise SettingError(f"{path}: records no bench settings; this run would replace it: choose another -o")
    return data


def _model_key(name: Any, random_init: Any) -> tuple[str, bool]:
    base, random = split_random(str(name or ""))
    return absolute_if_local(base) if base else "", bool(random or random_init)


def _model_record(earlier: dict[str, Any]) -> dict[str, Any]:
    """The model as the earlier study's stores described it ({} when not recorded)."""
    model = earlier.get("model")
    return model if isinstance(model, dict) else {}


def _store_differences(earlier: dict[str, Any], now: dict[str, Any], treebanks: Sequence[Any]) -> list[str]:
    """What makes the stores differ: model and weights, metric per probe, subword, tokenisation, sentences."""
    old, model = earlier["settings"], _model_record(earlier)
    out = []
    before = _model_key(model.get("name") or old.get("model"), model.get("random_init", old.get("random_init")))
    if before != _model_key(now["model"], now["random_init"]):
        out.append(_difference("model", old.get("model") or model.get("name"), now["model"]))
    metrics = _metrics(old)
    several = any(isinstance(m, list) for m in [*metrics.values(), *now["metrics"].values()])
    for probe in now["probes"]:   # one metric per probe on both sides: the same folder, so the same metric
        if (probe in metrics and metrics[probe] is not None and not several
                and metrics[probe] != now["metrics"][probe]):
            out.append(f"{{metric}} of probe {probe} {metrics[probe]} (this run: {now['metrics'][probe]})")
    if bool(old.get("faithful")) != bool(now.get("faithful")):   # the authors' pipelines: other stores, other rows
        # the pipelines fill the impact settings: their differences would only repeat this one
        return out + [_difference("faithful", bool(old.get("faithful")), bool(now.get("faithful")))]
    both_several = all(isinstance(m, list) for m in [*metrics.values(), *now["metrics"].values()])
    out += [_difference(key, old.get(key), now[key]) for key in STORE_FIELDS
            if old.get(key, _UNRECORDED.get(key)) != now[key]
            and (key != "subword" or not several or both_several)]   # one vs several metrics: other folders
    if not out:   # the same selection: the same sentences unless a file changed
        recorded = {t.get("treebank"): t.get("sentences_sha256") for t in earlier.get("treebanks") or []}
        out += [f"treebank {tb.name}: other sentences (its file changed)" for tb in treebanks
                if recorded.get(tb.name) not in (None, tb.fingerprint["sentences_sha256"])]
    return out


def _metrics(settings: dict[str, Any]) -> dict[str, Any]:
    """``{probe: metric}`` (or ``{probe: [metric, ...]}``) as results.json's settings record them."""
    probes = settings.get("probes") or [recorded_impact(settings)["probe"]]   # an earlier release's: pair
    return settings.get("metrics") or {p: settings.get("metric") for p in probes}


def _cells(rows: Sequence[dict[str, Any]], with_layers: bool, settings: dict[str, Any]) -> set[Cell]:
    """The rows' keys; a row of an earlier release names no metric: its probe's, from ``settings``."""
    metrics = _metrics(settings)
    return {(r["treebank"], probe, str(r.get("metric") or metrics.get(probe)), r["layer"] if with_layers else None,
             r["decoder"]) for r in rows for probe in [recorded_impact(r)["probe"]]}


def planned_cells(treebanks: Sequence[Any], settings: Any, decoders_for: Callable[..., list[str]],
                  num_layers: int | None) -> set[Cell]:
    """The (treebank, probe, metric, layer, decoder) rows this run will give (layers None when
    ``num_layers`` is unknown); ``decoders_for(treebank, probe, metric)``."""
    layers: Sequence[int | None] = [None] if num_layers is None else resolve_layers(settings.layers, num_layers)
    return {(tb.name, probe, metric, layer, decoder) for tb in treebanks for probe, metric in settings.runs
            for layer in layers for decoder in decoders_for(tb, probe, metric)}


def _by_dimension(cells: set[Cell], other: set[Cell]) -> list[str]:
    """Per dimension, the values of ``cells`` that ``other`` lacks, as ``{layers} 1, 2`` (a dimension is
    compared among the cells whose earlier dimensions ``other`` has: a treebank left out is not also
    reported as its decoders left out)."""
    out = []
    for k, name in enumerate(_DIMENSIONS):
        theirs = {c[k] for c in other}
        missing = sorted({c[k] for c in cells} - theirs, key=str)
        if missing and missing != [None]:
            out.append(f"{name} {_shown(missing)}")
        cells = {c for c in cells if c[k] in theirs}
    return out


def compare(earlier: dict[str, Any], settings: Any, treebanks: Sequence[Any],
            decoders_for: Callable[..., list[str]]) -> Verdict:
    """How this run (``settings`` over ``treebanks``) relates to the ``earlier`` results.json."""
    now, old = settings.to_dict(), earlier["settings"]
    other_stores = _store_differences(earlier, now, treebanks)
    other_scores = [_difference(key, old.get(key), now[key]) for key in SCORE_FIELDS
                    if key in old and old.get(key) != now[key]]
    other_scores += [_difference(key, old.get(key, False), now.get(key, False)) for key in optional_scores()
                     if old.get(key, False) != now.get(key, False)]   # recorded only when asked
    num_layers = _model_record(earlier).get("num_layers")
    before = _cells(earlier.get("rows") or [], num_layers is not None, old)
    planned = planned_cells(treebanks, settings, decoders_for, num_layers)
    if before - planned:
        dropped = _by_dimension(before, planned) or [f"{len(before - planned)} rows of the earlier study"]
        other_scores += [f"{what} left out" for what in dropped]
    added = [f"{what} added" for what in _by_dimension(planned, before)] if planned - before else []
    return Verdict(other_stores, other_scores, added)


def _selection_differences(out_dir: Path, settings: Any, treebanks: Sequence[Any]) -> list[str]:
    """How the stores already in ``out_dir`` (e.g. of a first run that never finished) were selected
    otherwise than this run's sentences: the first such store, and how many more there are."""
    out = []
    for tb in treebanks:
        for probe, metric in settings.runs:
            path = settings.store_path(out_dir, tb.name, probe, metric)
            try:
                selection = read_manifest(path)["corpus"].get("selection") if path.is_dir() else None
            except StoreError:
                continue   # reported when the store is opened
            differs = [_difference(key, selection.get(key), getattr(settings, key))
                       for key in ("limit", "max_words") if selection and selection.get(key) != getattr(settings, key)]
            if differs:
                out.append(f"the store {path} has " + ", ".join(differs))
    return out[:1] + ([f"{len(out) - 1} more stores likewise"] if len(out) > 1 else [])


def check_rerun(out_dir: Path, settings: Any, treebanks: Sequence[Any], decoders_for: Callable[..., list[str]],
                rescore: bool = False) -> None:
    """Refuse, in one line and before any work, a run that would replace the results of another
    study in ``out_dir`` or extend its stores with another selection (see the module's docstring);
    log what a wider run adds.

    Raises:
        SettingError: naming every difference and what to do (another -o, or ``rescore``).
    """
    out_dir = Path(out_dir)
    earlier = read_earlier(out_dir)
    if earlier is None:
        stores = _selection_differences(out_dir, settings, treebanks)
        verdict = Verdict(stores, [], [])
    else:
        verdict = compare(earlier, settings, treebanks, decoders_for)
    what = f"{out_dir} holds a bench made with other settings: "
    if verdict.other_stores:
        raise SettingError(what + "; ".join(verdict.other_stores + verdict.other_scores) + "; its stores were "
                           "computed for those settings: choose another -o for this run")
    if verdict.other_scores and not rescore:
        raise SettingError(what + "; ".join(verdict.other_scores) + "; rerun with {rescore} to replace its "
                           "results (its stores are reused), or choose another -o")
    if verdict.other_scores:
        logger.info("%s: replacing the results of the earlier study (%s)", out_dir,
                    _plain("; ".join(verdict.other_scores)))
    if verdict.added:
        logger.info("%s: extending the earlier study: %s", out_dir, _plain("; ".join(verdict.added)))
