"""Inputs of one command that come from different runs: compare what each records of its making.

A prediction records its model and impact settings in ``<pred>.meta.json``, a store in its
``manifest.json``, a bench directory in ``results.json``. :func:`check_same_origin` compares them
before any work: a different model, random or trained weights, probe, metric, subword policy,
tokenisation or attention head is refused in one line naming both values (the page or map would present numbers of
one run as those of the other); different corpus files only warn (a store made from the text of a
treebank serves its CoNLL-U file as well: sentences are matched by id and words), and so does a
bench that scored other sentences than the prediction (another ``--limit`` or ``--max-words``, or
none of the prediction's corpus): its page then shows two scores of one model and layer that differ
because they are over different sentences, which a bench of a sample next to a prediction on the
whole treebank may mean to do.

Example:
    >>> given = ImpactSettings("dist", None, None, None, None)
    >>> a = Origin("pred.conllu (its .meta.json)", model="/m/bert", impact=given)
    >>> b = Origin("the store s/", model="/m/roberta", impact=given)
    >>> check_same_origin([a, b])   # doctest: +SKIP
    SettingError: inputs from different runs: model: pred.conllu (its .meta.json) has /m/bert, the store s/ ...
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from pmask.common.errors import SettingError
from pmask.common.files import read_json
from pmask.common.options import has_attention_heads, split_random
from pmask.corpora.provenance import meta_path, read_provenance, recorded_impact
from pmask.perturb.engine.impact_settings import UNSET, ImpactSettings
from pmask.perturb.fill.model_spec import absolute_if_local

logger = logging.getLogger(__name__)

#: Fields that must agree (a difference is refused), in the order they are reported.
MUST_AGREE = ("model", "random_init", "probe", "metric", "subword", "tokenize", "context", "head")


@dataclass(frozen=True)
class SentenceSet:
    """The sentences of one corpus file that an input scored (None: not recorded).

    Example:
        >>> SentenceSet("pud.conllu", None, 100, None, 100).describe()
        '100 sentences (limit 100, max-words none) of pud.conllu'
    """

    path: str | None
    sha256: str | None
    limit: int | None
    max_words: int | None
    count: int | None

    def describe(self) -> str:
        """``N sentences (limit L, max-words W) of PATH``."""
        return (f"{self.count if self.count is not None else 'some'} sentences (limit {self.limit or 'none'}, "
                f"max-words {self.max_words or 'none'}) of {self.path}")

    def same_file(self, other: SentenceSet) -> bool:
        """Whether both were read from one file: by contents when both record them, else by path."""
        if self.sha256 and other.sha256:
            return self.sha256 == other.sha256
        return self.path is not None and other.path is not None and (
            Path(self.path).resolve() == Path(other.path).resolve())

    def same_sentences(self, other: SentenceSet) -> bool:
        """Whether both are the same selection (limit, max-words, count) of one file."""
        return self.same_file(other) and (self.limit, self.max_words, self.count) == (
            other.limit, other.max_words, other.count)


@dataclass(frozen=True)
class Origin:
    """What made one input, as far as it records it (None = not recorded, not compared).

    ``head``: the attention head decoded, for the probes that keep every head (a store keeps them
    all and records none). ``sentences``: what a prediction (one set) or a bench (one per treebank)
    scored; None when not recorded.
    """

    label: str
    model: str | None = None
    random_init: bool | None = None
    impact: ImpactSettings = UNSET
    head: str | int | None = None
    corpus_sha256: str | None = None
    corpus_path: str | None = None
    sentences: tuple[SentenceSet, ...] | None = None

    def value(self, field: str) -> Any:
        """The recorded value of a :data:`MUST_AGREE` field (None when not recorded)."""
        return getattr(self.impact, field) if field in self.impact.as_dict() else getattr(self, field)


def _impact(record: dict[str, Any]) -> ImpactSettings:
    """The impact settings a meta.json, manifest or results.json records, an older record's as it meant them
    (:func:`pmask.corpora.provenance.recorded_impact`)."""
    return ImpactSettings(**recorded_impact(record))


def _model(name: Any) -> str | None:
    return absolute_if_local(str(name)) if name else None


def prediction_origin(pred: str | Path) -> Origin | None:
    """The origin ``<pred>.meta.json`` records; None without one, or for a baseline (no model)."""
    provenance = read_provenance(pred)
    if provenance is None or not provenance.model:
        return None
    impact = provenance.impact or {}
    corpus = provenance.corpus or {}
    scored = SentenceSet(corpus.get("path"), corpus.get("sha256"), corpus.get("limit"), corpus.get("max_words"),
                         provenance.sentences) if corpus.get("path") else None
    return Origin(f"{pred} (its {meta_path(pred).name})", model=_model(provenance.model.get("name")),
                  random_init=provenance.model.get("random_init"), impact=_impact(impact),
                  head=impact.get("head"), corpus_sha256=corpus.get("sha256"), corpus_path=corpus.get("path"),
                  sentences=(scored,) if scored else None)


def store_origin(store: str | Path, manifest: dict[str, Any]) -> Origin:
    """The origin a store's manifest records."""
    model = manifest.get("model") or {}
    corpus = manifest.get("corpus") or {}
    impact = _impact(manifest)
    return Origin(f"the store {store}", model=_model(model.get("name")), random_init=model.get("random_init"),
                  impact=impact, corpus_sha256=corpus.get("sha256"), corpus_path=corpus.get("path"))


def bench_origin(bench: str | Path) -> Origin | None:
    """The origin a ``pmask bench`` directory's ``results.json`` records (None when unreadable: its
    reader reports that)."""
    path = Path(bench) if Path(bench).is_file() else Path(bench) / "results.json"
    data = read_json(path, unreadable="none")
    if data is None:
        return None
    model = data["model"] if isinstance(data, dict) and isinstance(data.get("model"), dict) else {}
    settings = data["settings"] if isinstance(data, dict) and isinstance(data.get("settings"), dict) else {}
    treebanks = data.get("treebanks") if isinstance(data, dict) and isinstance(data.get("treebanks"), list) else None
    sets = None if treebanks is None else tuple(
        SentenceSet(t.get("path"), t.get("sha256"), settings.get("limit"), settings.get("max_words"),
                    t.get("sentences")) for t in treebanks if isinstance(t, dict))
    return Origin(f"the bench {bench}", model=_model(model.get("name") or settings.get("model")),
                  random_init=model.get("random_init"), impact=_bench_impact(settings), sentences=sets)


def _bench_impact(settings: dict[str, Any]) -> ImpactSettings:
    """A bench's impact settings: those of its one probe (an older bench's as it meant them, pair before probes
    were recorded); with several probes only the settings they share (subword policy, tokenisation)."""
    probes = settings.get("probes") or []
    if len(probes) <= 1:
        return _impact({**settings, "probe": probes[0] if probes else None})
    return ImpactSettings(None, settings.get("subword"), settings.get("tokenize"), None, settings.get("context"))


def source_origin(source: Any) -> Origin:
    """The origin of an impact source (``pmask.perturb.source.ImpactSource``) without loading
    its model: its store's manifest, or the model spec it will compute with."""
    spec = source.model_spec
    if source.store is not None:
        held = store_origin(source.store.path, source.store.manifest)
        head = spec.head if source.store.heads else None
        return Origin(held.label, held.model, held.random_init, held.impact, head if head is not None else
                      ("mean" if source.store.heads else None), held.corpus_sha256, held.corpus_path)
    name, random_init = split_random(spec.name) if spec.name else (None, False)
    impact = spec.impact   # resolved (pmask.pipeline.request.prepare)
    chosen = spec.head if spec.head is not None else "mean"
    head = chosen if has_attention_heads(impact.probe, impact.metric) else None
    return Origin(f"the model {spec.name}", model=_model(name), random_init=random_init or spec.random_init,
                  impact=impact, head=head)


def _shown(field: str, value: Any) -> str:
    if field == "random_init":
        return "random weights" if value else "trained weights"
    return str(value)


def check_same_origin(origins: Sequence[Origin | None], *, hint: str = "give inputs made by the same run") -> None:
    """Refuse inputs that disagree on a :data:`MUST_AGREE` field; warn when their corpus files differ.

    Args:
        origins: one per input (None = records nothing, skipped); the first is the reference.
        hint: what the user can do, appended to the message.

    Raises:
        SettingError: one line naming the field, both inputs and both values.
    """
    known = [o for o in origins if o is not None]
    for field in MUST_AGREE:
        given = [(o, o.value(field)) for o in known if o.value(field) is not None]
        if not given:
            continue
        first, value = given[0]
        for other, theirs in given[1:]:
            differs = bool(theirs) != bool(value) if field == "random_init" else theirs != value
            if differs:
                raise SettingError(f"inputs from different runs: {field}: {first.label} has {_shown(field, value)}, "
                                   f"{other.label} has {_shown(field, theirs)}; {hint}")
    files = [o for o in known if o.corpus_sha256]
    for other in files[1:]:
        if other.corpus_sha256 != files[0].corpus_sha256:
            logger.warning("%s was made from %s, %s from %s (other file contents): sentences are matched by id and "
                           "words", files[0].label, files[0].corpus_path, other.label, other.corpus_path)
    _warn_other_sentences(known)


def _warn_other_sentences(origins: Sequence[Origin]) -> None:
    """Warn, one line each, when an input with several treebanks (a bench) scored other sentences of
    the first input's one corpus (a prediction), or none of them."""
    mine = next((o for o in origins if o.sentences and len(o.sentences) == 1), None)
    if mine is None or mine.sentences is None:
        return
    (scored,) = mine.sentences
    for other in origins:
        if other is mine or not other.sentences:
            continue
        same = next((s for s in other.sentences if s.same_file(scored)), None)
        if same is None:
            names = ", ".join(str(s.path) for s in other.sentences[:3]) + (", ..." if len(other.sentences) > 3 else "")
            logger.warning("%s scored none of the sentences of %s: none of its treebanks (%s) is %s; the page shows "
                           "scores over different sentences", other.label, mine.label, names, scored.path)
        elif not same.same_sentences(scored):
            logger.warning("%s scored %s, %s scored %s: the page shows scores over different sentences", mine.label,
                           scored.describe(), other.label, same.describe())

