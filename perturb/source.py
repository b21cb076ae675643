"""Where impacts come from: an impact store, or a corpus and a model (optionally cached in a store).

:class:`ImpactSource` is the one place that decides between the two (and opens, continues or extends a
store); ``parse``, ``heatmap`` and ``sweep`` all read impacts through it. Each sentence's :class:`Impact` is
computed or read by :mod:`pmask.perturb.fill.layer_impacts`. torch and transformers are imported only when a model
is actually loaded.

Example:
    >>> src = ImpactSource.open(CorpusSpec("pud.conllu", limit=5), model=ModelSpec("bert-base-uncased"))
    ... # doctest: +SKIP
    >>> heads_input = list(src.impacts(layer=-1))  # doctest: +SKIP
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Iterator, Sequence, cast

from pmask.common.errors import HelperRankDone, SettingError, StoreSettingError
from pmask.common.model_families import MODEL_FAMILIES
from pmask.common.options import has_attention_heads, resolve_layers
from pmask.common.units import unit_of
from pmask.corpora import Sentence
from pmask.corpora.corpus_spec import CorpusSpec
from pmask.perturb.engine.impact_settings import ImpactSettings
from pmask.perturb.fill.add_layers import add_layers
from pmask.perturb.fill.compute import FillRequest
from pmask.perturb.fill.layer_impacts import (
    Impact,
    impacts_by_layer,
    impacts_from_model,
    impacts_from_store,
    impacts_from_store_by_layers,
)
from pmask.perturb.fill.model_spec import ModelSpec, absolute_if_local
from pmask.perturb.fill.stores import StoreRun, build_store, fill_stores
from pmask.perturb.models.bundled import DEFAULT_MODEL
from pmask.perturb.models.config import model_family
from pmask.perturb.probes.attention_heads import check_attention_head
from pmask.perturb.store import ImpactStore, read_manifest
from pmask.perturb.store.corpus import store_sentences
from pmask.perturb.store.plan import check_unit
from pmask.perturb.store.state import check_finished, store_state
from pmask.perturb.store.store_settings import StoreSettings

logger = logging.getLogger(__name__)

# StoreRun and build_store live in pmask.perturb.fill.stores; the CLI imports them from here too
__all__ = ["ImpactSource", "StoreRun", "build_store", "is_store"]


def is_store(path: str | Path) -> bool:
    """Whether ``path`` is an impact store directory (it holds a ``manifest.json``)."""
    path = Path(path)
    return path.is_dir() and (path / "manifest.json").is_file()


def _held(manifest: dict[str, Any]) -> set[int]:
    """Corpus positions a store holds or skipped as too long."""
    return {int(e["index"]) for e in manifest["sentences"]}


def _continued_by_default(store: str | Path) -> bool:
    """Whether a cache store is unfinished and was made with the default model (no ``--model``): rerunning
    the command that made it, still without a model, continues it with that model (a finished one is
    read without loading any model; one made with another model is refused, naming the command that
    finishes it)."""
    if not is_store(store):
        return False
    manifest = read_manifest(store)
    held = manifest.get("model") or {}
    return (not store_state(store, manifest).complete and held.get("name") == DEFAULT_MODEL
            and not held.get("random_init"))


def _extend_or_refuse(store: str | Path, manifest: dict[str, Any], *, asked: int) -> None:
    """A finished cache store that lacks sentences of the selection asked for (made with a smaller
    ``--limit``) is treated as an unfinished one: made with the default model, that model (which the resolver
    names when none is given) computes the missing sentences into it; else a one-line refusal naming the model
    that does."""
    held = manifest.get("model") or {}
    if held.get("name") == DEFAULT_MODEL and not held.get("random_init"):
        return
    n = len(_held(manifest))
    model = ("random:" if held.get("random_init") else "") + str(held.get("name"))
    made = {k: v for k, v in ((manifest.get("corpus") or {}).get("selection") or {}).items()
            if k in ("limit", "max_words") and v}
    how = " ".join(f"{{{k}}} {v}" for k, v in made.items())
    raise StoreSettingError(f"{store} holds {n} of the {asked} sentences asked for" + (f" (it was made with {how})"
                     if how else "") + f"; give {{model}} {model} to compute the other {asked - n} into it, "
                     f"or ask for the {n} it holds" + (f" ({how})" if how else ""))


class ImpactSource:
    """Sentences and their impacts, from a store or from a corpus and a model.

    Build one with :meth:`open`. ``sentences`` are read at once; the model is loaded, and a
    cache store computed, only when impacts are first asked for.
    """

    def __init__(self, sentences: list[Sentence], corpus: Path, *, store: Any = None,
                 model: ModelSpec | None = None, store_dir: Path | None = None, progress: bool = True,
                 loaded_model: Any = None, selection: CorpusSpec | None = None,
                 positions: list[int] | None = None, coverage: dict[str, Any] | None = None):
        self.sentences = sentences
        self.corpus = corpus
        self.selection = selection or CorpusSpec(corpus)   # the corpus format and filters the sentences were read with
        self.positions = positions   # each sentence's position in the store (None: 0, 1, 2, ...)
        self.coverage = coverage     # an unfinished store read anyway: its StoreState.coverage(), else None
        self.store = store
        self.model_spec = model or ModelSpec()   # as given until the request is resolved (use)
        self.computes = store is None and (store_dir is None or model is not None and model.name is not None
                                           or not is_store(store_dir))   # else a cache store is read (held_settings)
        self.store_dir = store_dir
        self.progress = progress
        self._model: Any = loaded_model

    @classmethod
    def open(cls, selection: CorpusSpec, *, model: ModelSpec | None = None, store: str | Path | None = None,
             corpus: str | Path | None = None, progress: bool = True, allow_incomplete: bool = False) -> ImpactSource:
        """A source for ``selection.path``: an impact store directory or a corpus.

        A store is read with the selection it was made with (format, ``--limit``, ``--max-words``);
        ``selection``'s own filters may narrow it (:func:`pmask.perturb.store.corpus.store_sentences`).
        An unfinished store (interrupted, or being written by another process) is refused, as is a
        ``store`` cache read without a model, unless ``allow_incomplete``: then the source holds the
        sentences stored so far, a warning says so, and :attr:`coverage` records it
        (:func:`pmask.perturb.store.state.check_finished`).

        Args:
            selection: the store or corpus path, with the corpus format and filters (a corpus selection).
            model: how impacts are computed from a corpus.
            store: with a corpus: cache impacts in this (resumable) store directory.
            corpus: with a store: the corpus it was made from (default: the path in its manifest).
            progress: show progress bars during model work.
            allow_incomplete: read an unfinished store (see above).

        Raises:
            UnfinishedStoreError: an unfinished store without ``allow_incomplete``.
        """
        if is_store(selection.path):
            opened = ImpactStore.open(selection.path)
            state = check_finished(opened.path, opened.manifest, allow_incomplete=allow_incomplete)
            picked = store_sentences(selection, opened.manifest, held=_held(opened.manifest), corpus=corpus)
            check_unit(opened.path, opened.manifest, picked.sentences)   # words never read as EDUs, nor the reverse
            given = model or ModelSpec()
            given.check_store(opened)
            check_attention_head(given.head, opened.heads, f"{opened.path}: ")
            return cls(picked.sentences, picked.selection.path, store=opened, model=given, progress=progress,
                       selection=picked.selection, positions=picked.positions,
                       coverage=None if state.complete else state.coverage())
        given = model or ModelSpec()   # unset impact settings: the resolver's, or a cache store's own
        # the command that made an unfinished cache store with the default model, run again without one: continue it
        continues = model is not None and store is not None and given.name is None and _continued_by_default(store)
        sentences, positions, coverage = selection.read(), None, None
        if store is not None and given.name is None and not continues and is_store(store):   # read without a model
            manifest = read_manifest(store)
            check_unit(store, manifest, sentences)
            state = check_finished(store, manifest, allow_incomplete=allow_incomplete)
            held = _held(manifest)
            if not state.complete:
                positions = [k for k in range(len(sentences)) if k in held]
                sentences, coverage = [sentences[k] for k in positions], state.coverage()
            elif len(held & set(range(len(sentences)))) < len(sentences):   # finished, for fewer sentences
                _extend_or_refuse(store, manifest, asked=len(sentences))
                continues = True
        out = cls(sentences, selection.path, model=given, store_dir=None if store is None else Path(store),
                  progress=progress, selection=selection, positions=positions, coverage=coverage)
        out.computes = out.computes or continues
        return out

    def inputs(self) -> list[Path]:
        """Every file or folder this source reads (outputs must never overwrite one)."""
        paths = [self.selection.path, self.corpus]
        for store in (self.store.path if self.store is not None else None, self.store_dir):
            if store is not None:
                paths.append(Path(store))
        return paths

    # -- model

    @property
    def model(self) -> Any:
        """The loaded model (loaded on first use)."""
        if self._model is None:
            self._model = self.model_spec.load()
        return self._model

    def describe_model(self) -> dict[str, Any] | None:
        """The model's description (``LoadedModel.describe()``, as recorded in a store's manifest),
        with a local model directory named by its absolute path on every route."""
        if self.store is not None:
            held = self.store.manifest.get("model") or {}
            described = dict(held.get("describe") or held)
        else:
            described = dict(self.model.describe())
        if described.get("name"):
            described["name"] = absolute_if_local(str(described["name"]))
        return described

    def model_name(self) -> str | None:
        """The model's name as :meth:`describe_model` gives it."""
        return (self.describe_model() or {}).get("name")

    def held_settings(self) -> ImpactSettings | None:
        """The impact settings of the store impacts will be read from (a store SOURCE, or a cache store read
        without a model), None when they will be computed."""
        if self.store is not None:
            return self.store.settings.impact
        if not self.computes and self.store_dir is not None:
            return StoreSettings.from_manifest(read_manifest(self.store_dir)).impact
        return None

    def family(self, spec: ModelSpec) -> Any:
        """The family of the model impacts are computed with (``pmask.common.model_families.ModelFamily``): the
        loaded model's, else the one a store read here recorded (stores of the masked family record none: None),
        else read from ``spec``'s config (no weights load); None for a model that says none."""
        if self._model is not None:
            return getattr(self._model, "family", None)
        if self.store is not None or not self.computes and self.store_dir is not None:   # read: the store's own
            manifest = self.store.manifest if self.store is not None else read_manifest(cast(Path, self.store_dir))
            held = manifest.get("model") or {}
            return MODEL_FAMILIES.get(str((held.get("describe") or held).get("family")))   # masked ones record none
        return model_family(str(spec.name))   # named: resolved

    def use(self, spec: ModelSpec) -> None:
        """Compute (or read) impacts with ``spec``, the resolved model and settings of the run
        (:func:`pmask.pipeline.request.prepare`): its name when impacts are computed, the store's settings when
        they are read."""
        self.model_spec = spec

    def use_model(self, loaded: Any) -> None:
        """Compute with ``loaded``, a model already loaded (the sources of several probes share one)."""
        self._model = loaded

    def impact_settings(self) -> dict[str, Any]:
        """The impact settings actually used: ``{"metric", "subword", "tokenize", "probe", "context"}`` and, for
        the attention-based probes, ``"head"`` (a store's own settings when reading one)."""
        impact = self.store.settings.impact if self.store is not None else self.model_spec.impact
        out: dict[str, Any] = impact.as_dict()
        if has_attention_heads(out["probe"], out["metric"]):
            out["head"] = self.model_spec.head if self.model_spec.head is not None else "mean"
        return out

    # -- impacts

    def _ensure_store(self, layers: Sequence[int] | str) -> None:
        if self.store is not None or self.store_dir is None:
            return
        if not self.computes:   # read a cache store without a model
            self.store = ImpactStore.open(self.store_dir)
            self.model_spec.check_store(self.store)
            check_attention_head(self.model_spec.head, self.store.heads, f"{self.store.path}: ")
            return
        request = FillRequest.for_model(self.model_spec, self.sentences, self.store_dir, corpus_path=self.corpus,
                                        layers=layers, resume=True, progress=self.progress,
                                        selection=self.selection.record())
        run, = fill_stores([request], self.model_spec, load=lambda: self.model)
        if not run.is_main:
            raise HelperRankDone(f"{self.store_dir}: this rank's share is stored; rank 0 writes the outputs")
        logger.info("%s", run.describe())   # the pipeline leaves its summary to the caller
        self.store = ImpactStore.open(self.store_dir)

    def _ensure_layers(self, layers: Sequence[int]) -> None:
        """Add ``layers`` the store lacks to it when a model is given, else a SettingError naming the stored ones."""
        held = list(self.store.layers)
        num = self.store.num_layers
        missing = [k for k in layers if (k + num + 1 if k < 0 and num is not None else k) not in held]
        if not missing:
            return
        if self.model_spec.name is None and self._model is None:
            raise SettingError(f"{{layer}} {', '.join(map(str, missing))} is not in the store {self.store.path} (it "
                               f"holds layers {', '.join(map(str, held))}); give {{model}} to compute it into the "
                               f"store")
        extension = add_layers(self.model, self.store.path, missing, batch_tokens=self.model_spec.batch_tokens,
                               progress=self.progress)
        logger.info("%s: layers %s added (it holds layers %s)", self.store.path,
                    ", ".join(map(str, extension.added)), ", ".join(map(str, extension.layers)))
        self.store = ImpactStore.open(self.store.path)

    def _positions(self, indices: Sequence[int] | None) -> list[int] | None:
        """Store positions of the sentences at ``indices`` (None: every sentence)."""
        if self.positions is None:
            return None if indices is None else list(indices)
        return list(self.positions) if indices is None else [self.positions[k] for k in indices]

    def impacts(self, layer: int = -1, *, include_cls: bool = False,
                indices: Sequence[int] | None = None) -> Iterator[Impact | None]:
        """Impacts at ``layer`` for every sentence (or the positions ``indices``), None = skipped."""
        self._ensure_store([layer])
        chosen: Sequence[Sentence] = self.sentences if indices is None else [self.sentences[k] for k in indices]
        if self.store is not None:
            self._ensure_layers([layer])
            return impacts_from_store(self.store, chosen, layer=layer, include_cls=include_cls,
                                      positions=self._positions(indices), head=self.model_spec.head)
        spec = self.model_spec
        chosen = self._as_computed(chosen, include_cls)
        return impacts_from_model(self.model, chosen, layer=layer, impact=spec.impact,
                                  include_cls=include_cls, batch_tokens=spec.batch_tokens, progress=self.progress,
                                  head=spec.head)

    @staticmethod
    def _as_computed(sentences: Sequence[Sentence], include_cls: bool) -> Sequence[Sentence]:
        """The records the model runs on: under ``--faithful`` (``include_cls``) without a store, as the authors'
        reader leaves them where their unit says (``UnitEntry.authors_texts``: Wu et al.'s EDU texts)."""
        texts = unit_of(sentences).authors_texts
        return texts(sentences) if include_cls and texts is not None else sentences

    def impacts_by_layers(self, layers: Sequence[int] | str, *, include_cls: bool = False
                          ) -> dict[int, list[Impact | None]]:
        """``{layer: [Impact or None per sentence]}`` for ``layers`` ("all": every layer the source has);
        one pass over the store or one engine run gives every layer."""
        self._ensure_store(layers)
        if self.store is not None:
            every = [k for k in self.store.layers if k != 0]  # "all" = 1..L: layer-0 impacts are all zero
            chosen = every if layers == "all" else list(cast(Sequence[int], layers))
            self._ensure_layers(chosen)
            stream = impacts_from_store_by_layers(self.store, self.sentences, chosen, include_cls=include_cls,
                                                  positions=self._positions(None), head=self.model_spec.head)
        else:
            chosen = (list(resolve_layers("all", self.model.num_layers)) if layers == "all"
                      else list(cast(Sequence[int], layers)))
            spec, sentences = self.model_spec, self._as_computed(self.sentences, include_cls)
            stream = impacts_by_layer(self.model, sentences, layers=chosen, impact=spec.impact,
                                      include_cls=include_cls, batch_tokens=spec.batch_tokens, progress=self.progress,
                                      head=spec.head)
        per_layer: dict[int, list[Impact | None]] = {layer: [] for layer in chosen}
        for item in stream:
            for k, layer in enumerate(chosen):
                per_layer[layer].append(None if item is None else item[k])
        return per_layer
