"""What a store's numbers depend on: :class:`StoreSettings`, :class:`CorpusInfo` and their comparison."""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Sequence

from pmask.common.errors import LayerError
from pmask.common.files import sha256_file
from pmask.common.labels import plural
from pmask.common.options import METRICS, PROBES, SPAN_PROBES, SUBWORD_POLICIES, resolve_layers, split_random
from pmask.corpora.provenance import recorded_impact
from pmask.perturb.engine.impact_settings import ImpactSettings

# Written into every manifest so a store documents what its numbers mean (the option tables' text).
METRIC_DEFINITIONS = METRICS
SUBWORD_DEFINITIONS = SUBWORD_POLICIES
_MATRIX = "matrix[l, i, j] = impact of word j on word i at layers.resolved[l] (0 = embeddings)"
_MATRIX_HEADS = "matrix[l, h, i, j] = the value of word j for word i at head h of layers.resolved[l]"
_MATRIX_SPANS = ("span chart: matrix[l, a, b] = the score of the span of words a-1..b-1 (1-based a <= b, upper "
                 "triangle) at layers.resolved[l]; row and column 0 are unused (0), the whole sentence is 0")


@dataclass(frozen=True)
class StoreSettings:
    """What determines the numbers in a store; a resumed store must match on all of them.

    ``None`` means "not known yet" (e.g. before the model is loaded) and is not compared.
    ``layers`` are the layers as requested (ints, negative from the top, or ``"all"``);
    ``layers_resolved`` the absolute hidden-state indices (0 = embeddings, num_layers = last),
    worked out once by :meth:`resolved`.
    """

    model: str | None
    impact: ImpactSettings   # metric, subword policy, tokenisation mode, probe, context
    layers: tuple[int, ...] | str = (-1,)
    include_cls: bool = True
    revision: str | None = None                # as requested
    commit: str | None = None                  # resolved commit hash of the weights, when known
    random_init: bool | None = None
    dtype: str | None = None
    tokenizer: dict[str, Any] | None = None
    layers_resolved: tuple[int, ...] | None = None
    num_layers: int | None = None
    max_length: int | None = None
    model_info: dict[str, Any] | None = None   # LoadedModel.describe(), recorded, not compared
    heads: int | None = None                   # attention heads per layer when matrices keep every head

    def __post_init__(self) -> None:
        if self.model:
            name, random_init = split_random(self.model)   # the CLI's random:NAME
            if random_init:
                object.__setattr__(self, "model", name)
                object.__setattr__(self, "random_init", True)

    def resolved(self, num_layers: int | None) -> StoreSettings:
        """These settings with the requested layers resolved for a model of ``num_layers`` layers
        (unchanged when they already are, or when the depth is not known); LayerError for a layer
        outside the model."""
        if self.layers_resolved is not None or num_layers is None:
            return self
        return replace(self, layers_resolved=resolve_layers(self.layers, int(num_layers)),
                       num_layers=self.num_layers or int(num_layers))

    def manifest_fields(self) -> dict[str, Any]:
        """The top-level manifest entries ``model``, ``metric``, ``subword``, ``definitions``, ``probe``,
        ``heads``, ``include_cls``, ``tokenize``, ``layers``."""
        return {
            "model": {"name": self.model, "revision": self.revision, "commit": self.commit,
                      "random_init": self.random_init,
                      "dtype": self.dtype, "num_layers": self.num_layers, "max_length": self.max_length,
                      "tokenizer": self.tokenizer, "describe": self.model_info},
            "metric": self.impact.metric,
            "subword": self.impact.subword,
            "definitions": {"metric": METRIC_DEFINITIONS.get(self.impact.metric or ""),
                            "subword": SUBWORD_DEFINITIONS.get(self.impact.subword or ""),
                            "probe": PROBES.get(self.impact.probe or ""),
                            "matrix": (_MATRIX_SPANS if self.impact.probe in SPAN_PROBES
                                       else _MATRIX_HEADS if self.heads else _MATRIX)},
            "probe": self.impact.probe,
            "heads": self.heads,
            "include_cls": self.include_cls,
            "tokenize": self.impact.tokenize,
            "context": self.impact.context,
            "layers": {"requested": self.layers if isinstance(self.layers, str) else list(self.layers),
                       "resolved": None if self.layers_resolved is None else list(self.layers_resolved)},
        }

    @classmethod
    def from_manifest(cls, manifest: dict[str, Any]) -> StoreSettings:
        model, layers = manifest["model"], manifest["layers"]
        requested = layers.get("requested")
        resolved = layers.get("resolved")
        impact = ImpactSettings(**recorded_impact(manifest))   # an older store's as it meant them
        return cls(model=model.get("name"), impact=impact,
                   layers=tuple(requested) if isinstance(requested, list) else requested,
                   include_cls=manifest.get("include_cls", True), revision=model.get("revision"),
                   commit=model.get("commit"),
                   random_init=model.get("random_init"), dtype=model.get("dtype"),
                   tokenizer=model.get("tokenizer"), num_layers=model.get("num_layers"),
                   layers_resolved=None if resolved is None else tuple(resolved),
                   max_length=model.get("max_length"), model_info=model.get("describe"),
                   heads=manifest.get("heads"))


@dataclass(frozen=True)
class CorpusInfo:
    """Identity of the sentence list: ``sentences_sha256`` hashes every (id, words) pair in order,
    ``digests`` holds a short hash of each pair.

    On resume the sentences are compared (impacts depend on the words alone, so re-exporting a
    corpus with other annotations keeps a store valid). A longer list whose first sentences are the
    stored ones extends the store (e.g. a larger ``--limit``); a shorter prefix needs nothing new.
    The file ``path`` and its ``sha256`` are recorded for provenance, and ``selection`` (the
    ``format``, ``limit`` and ``max_words`` the sentences were read with) so that a reader of the
    store selects the same sentences (absent in stores written before it was recorded). ``unit`` is
    what a record's ``words`` hold (``Sentence.unit``: ``"word"``, or ``"edu"`` for documents of EDUs):
    the same texts read as words or as EDUs give other numbers, so a store is never resumed or read
    for the other unit (None: a store written before it was recorded, not compared).
    """

    n_sentences: int
    sentences_sha256: str
    path: str | None = None
    sha256: str | None = None
    digests: tuple[str, ...] = ()
    selection: dict[str, Any] | None = None
    unit: str | None = None

    @classmethod
    def of(cls, sentences: Sequence[Any], path: str | os.PathLike | None = None,
           selection: dict[str, Any] | None = None) -> CorpusInfo:
        """Fingerprint ``sentences`` (objects with ``.id`` and ``.words``), hashing ``path`` if given;
        ``selection``: how they were selected from it (``CorpusSpec.record()``)."""
        h = hashlib.sha256()
        digests = []
        for s in sentences:
            item = json.dumps([str(s.id), list(s.words)], ensure_ascii=True).encode("ascii")
            h.update(item)
            h.update(b"\n")
            digests.append(hashlib.sha256(item).hexdigest()[:16])
        file_sha = None
        if path is not None:
            path = Path(path)
            if path.is_file():
                file_sha = sha256_file(path)
            path = str(path.resolve())
        return cls(len(sentences), h.hexdigest(), path, file_sha, tuple(digests),
                   None if selection is None else dict(selection), corpus_unit(sentences))

    def describe(self) -> str:
        where = f" from {self.path}" if self.path else ""
        return f"{plural(self.n_sentences, 'sentence')}{where} (sha256 {self.sentences_sha256[:12]})"


def corpus_unit(sentences: Sequence[Any]) -> str | None:
    """What the records of ``sentences`` hold: the first one's ``unit`` (``"word"`` when it has none), None
    for no sentence (one unit per corpus, as :func:`pmask.common.units.unit_of` reads it)."""
    return str(getattr(sentences[0], "unit", "word")) if len(sentences) else None


def unit_mismatch(stored_corpus: dict[str, Any], unit: str | None) -> str | None:
    """``"unit: store has 'edu', requested 'word'"`` when a store's recorded unit is not ``unit`` (None when
    they agree, or either is not known)."""
    held = stored_corpus.get("unit")
    if held is None or unit is None or held == unit:
        return None
    return f"unit: store has {held!r}, requested {unit!r}"


def norm_model(name: str) -> str:
    """Local model directories as absolute paths (so ``./m`` and ``/x/m`` compare equal); hub names as given."""
    p = Path(name).expanduser()
    return str(p.resolve()) if p.exists() else name


def _jsonable(x: Any) -> Any:
    return json.loads(json.dumps(x, default=str))


#: The settings a resumed store must match besides its model and layers, in the order mismatches are named.
COMPARED = ("probe", "revision", "commit", "random_init", "dtype", "metric", "subword", "include_cls", "tokenizer",
            "tokenize", "heads", "context")


def _compared(s: StoreSettings) -> tuple[Any, ...]:
    impact = s.impact
    return (impact.probe, s.revision, s.commit, s.random_init, s.dtype, impact.metric, impact.subword, s.include_cls,
            s.tokenizer, impact.tokenize, s.heads, impact.context)


def settings_mismatches(stored: StoreSettings, requested: StoreSettings, *, more_layers: bool = False) -> list[str]:
    """One ``"field: store has X, requested Y"`` string per compared field that differs.

    Requested layers that are a subset of the stored ones are accepted (a resumed run keeps
    computing the stored layers, so every sentence in a store has the same layers); with
    ``more_layers`` any layers of the model are (the caller adds the missing ones to the store).
    """
    out: list[str] = []

    def differ(name: str, a: Any, b: Any) -> None:
        if a is None or b is None:
            return
        if _jsonable(a) != _jsonable(b):
            out.append(f"{name}: store has {a!r}, requested {b!r}")

    differ("model", norm_model(stored.model) if stored.model else None,
           norm_model(requested.model) if requested.model else None)
    for name, a, b in zip(COMPARED, _compared(stored), _compared(requested)):
        differ(name, a, b)
    # Layers: compare absolute indices when both sides know them or can work them out from the
    # stored model's depth, else the requested form.
    try:
        mine = requested.resolved(requested.num_layers or stored.num_layers).layers_resolved
    except LayerError as err:
        out.append(f"layers: {err}")
        return out
    theirs = stored.layers_resolved
    if mine is not None and theirs is not None:
        if not set(mine) <= set(theirs) and not more_layers:
            out.append(f"layers: store has {list(theirs)}, requested {list(mine)}")
    elif not more_layers:
        differ("layers", stored.layers, requested.layers)
    return out
