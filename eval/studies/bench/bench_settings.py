"""What a ``pmask bench`` run does (:class:`BenchSettings`), recorded in ``results.json`` and read back from it
(:meth:`BenchSettings.from_dict`); :mod:`pmask.eval.studies.bench.run` runs it."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Sequence

from pmask.common.errors import PmaskError, SettingError
from pmask.common.labels import either
from pmask.common.options import (
    PUNCT_MODES,
    ROOT_MODES,
    SYMMETRIZE_MODES,
    check_choice,
    split_metrics,
    split_probes,
)
from pmask.common.probe_entries import AuthorsRecipe
from pmask.common.units import unit_of
from pmask.eval.scores.columns import check_asked, optional_scores
from pmask.eval.studies.bench.treebanks import Treebank
from pmask.perturb.fill.model_spec import ModelSpec
from pmask.pipeline.checks import refuse_layer_zero
from pmask.pipeline.request import Decoding, Inputs, Request, authors_recipe, probe_request, resolve
from pmask.trees.registry import DECODERS, get_decoder
from pmask.trees.tasks import task_entry

__all__ = ["BenchSettings"]


@dataclass
class BenchSettings:
    """What a bench run does; recorded in ``results.json``.

    ``model``: the model and how impacts are computed with it (a name stands for ``ModelSpec(name)``;
    unset impact settings take each probe's defaults; ``model.head`` is decoded by the probes that
    keep every head). ``probes``: each scored on its own store (None: the model's probe, else
    pair). ``layers``: ints (0 = embeddings, negative from the top) or ``"all"`` (1..L);
    ``decoders``: None = eisner and cle for dependency treebanks, mart for PTB ones; ``limit``: the
    first N sentences of each treebank (after ``max_words``); ``max_words``: only sentences of at most
    N words (PTB: counted without punctuation, traces and $/#, the WSJ10 filter); ``bias``: the
    distance-split decoder's right-branching bias; ``scores``: optional scores, by name, added to the rows
    and baselines of the treebanks whose trees they score (``hoover_uuas``: Hoover et al.'s UUAS; each
    recorded as ``NAME: true`` only when asked); ``faithful``: every probe (and metric)
    with an authors' pipeline (:meth:`pipeline`) runs it, as ``pmask parse --faithful`` does, into a store of
    its own, the others their clean pipeline (recorded only when set; each row says which).
    """

    model: ModelSpec
    layers: Sequence[int] | str = "all"
    decoders: Sequence[str] | None = None
    root: str | None = None     # None: gold when every sentence of the dependency treebanks has gold heads
    limit: int | None = None
    punct: str = "include"
    seed: int = 0
    probes: Sequence[str] | None = None
    bias: float = 0.0
    max_words: int | None = None
    symmetrize: str | None = None   # F made symmetric before decoding (Hoover et al.; None: none)
    absolute: bool = False     # |F| before that
    metrics: Sequence[str] | None = None   # several metrics, each on its own store (None: model's metric)
    scores: tuple[str, ...] = ()  # optional scores asked, by name (hoover_uuas: Hoover et al.'s UUAS)
    faithful: bool = False     # the authors' pipelines where a probe or metric has one
    _subword: str | None = field(default=None, init=False, repr=False)   # the subword policy given, if any
    # documents of EDUs (every treebank): their metric outranks a model's recorded one, as in resolve
    _inputs: Inputs = field(default=Inputs(), init=False, repr=False)
    _given: Any = field(default=None, init=False, repr=False)   # the impact settings as given (--faithful fills them)
    _symmetrize: str | None = field(default=None, init=False, repr=False)   # symmetrize as given
    _family: Any = field(default=None, init=False, repr=False)   # the model's family, once the settings are checked

    def __post_init__(self) -> None:
        spec = ModelSpec(self.model) if isinstance(self.model, str) else self.model   # a name: its spec
        impact = spec.impact
        if self.metrics is not None:
            self.metrics = tuple(split_metrics(self.metrics))
            if impact.metric is not None:   # --metric M is --metrics M
                raise SettingError("{metric} and {metrics} both given: name every metric in {metrics}")
            if len(self.metrics) == 1:   # the one-metric case is --metric's
                impact, self.metrics = replace(impact, metric=self.metrics[0]), None
        self._subword, self._symmetrize = impact.subword, self.symmetrize
        self._given = replace(impact, probe=None)
        # the probe and (unless given) the metric are chosen per probe by spec_for; the shared settings now
        shared = resolve(Request(replace(spec, impact=replace(impact, probe=None))))
        given = self.probes if self.probes is not None else spec.impact.probe
        self.probes = tuple(split_probes(given) if given is not None else [str(shared.impact.probe)])
        self.model = replace(shared.model, impact=replace(shared.impact, probe=None, metric=impact.metric))

    @property
    def family(self) -> Any:
        """The model's family (:meth:`use_family`; None before): its decoders and symmetrisation are the "model"
        layer of the bench's resolved decodings."""
        return self._family

    def use_family(self, family: Any, treebanks: Sequence[Treebank], root: str | None) -> None:
        """Resolve the decoding again with the model's ``family`` (read from its config once the settings are
        checked: :func:`pmask.pipeline.request.model_family_of`), from the root given (``root``) and the
        symmetrisation given."""
        self._family, self.root, self.symmetrize = family, root, self._symmetrize
        self.resolve_decoding(treebanks)

    def request_for(self, probe: str, metric: str | None = None) -> Request:
        """The resolved request ``probe`` runs (:func:`pmask.pipeline.request.probe_request`): ``metric`` (of
        :attr:`metrics`; its default subword policy unless one was given), else the metric given or the probe's
        default; the head only for a probe keeping every head."""
        impact = self.model.impact if metric is None else replace(self.model.impact, metric=metric,
                                                                  subword=self._subword)
        if self.faithful:   # the pipeline fills what was not given: the given settings, not the shared defaults
            impact = replace(self._given, metric=impact.metric)
        return probe_request(Request(replace(self.model, impact=impact), Decoding(faithful=self.faithful)),
                             probe, self._inputs)

    def spec_for(self, probe: str, metric: str | None = None) -> ModelSpec:
        """The model spec ``probe`` runs with (:meth:`request_for`)."""
        return self.request_for(probe, metric).model

    @property
    def given_impact(self) -> Any:
        """The impact settings as given (None: not given; the probe left out), which ``--faithful``'s pipelines fill."""
        return self._given

    def recipe(self, probe: str, metric: str | None = None) -> AuthorsRecipe | None:
        """The authors' pipeline ``probe`` (with ``metric``) runs under :attr:`faithful`: the metric's own, else the
        probe's (:func:`pmask.pipeline.request.authors_recipe`); None without :attr:`faithful` or without one."""
        return authors_recipe(self.spec_for(probe, metric).impact) if self.faithful else None

    def decoding_for(self, probe: str, metric: str | None, decoder: str) -> Decoding:
        """The resolved decoding of ``decoder``'s rows of ``probe`` (and ``metric``), as ``pmask parse`` decodes them
        (:func:`pmask.pipeline.request.resolve`): a faithful run decodes with the pipeline's mode, its undirected
        decoders symmetrised as given, else as the pipeline says; its [CLS]-layout decoders (eisner, cle) take
        neither the given symmetrisation nor ``absolute`` (``parse --faithful`` refuses them there), nor does a
        decoder that reads span charts."""
        dec = get_decoder(decoder)
        faithful = self.recipe(probe, metric) is not None
        plain = "symmetrize" in dec.ignores or (faithful and not dec.undirected)
        given = Decoding(decoder, 1, self.root, faithful, False, self.seed, self.bias,
                         None if plain else self._symmetrize,
                         self.absolute and "absolute" not in dec.ignores and (not faithful or dec.undirected))
        return resolve(replace(self.request_for(probe, metric), decoding=given), self._inputs).decoding

    def store_path(self, out_dir: Any, treebank: str, probe: str, metric: str | None) -> Any:
        """Where the impacts of ``treebank`` under ``probe`` and ``metric`` are kept
        (:func:`pmask.eval.studies.bench.probe_stores.store_dir`; an authors' pipeline's in a folder of its own)."""
        from pmask.eval.studies.bench.probe_stores import store_dir

        return store_dir(out_dir, treebank, probe, None if metric is None else self.store_metric(metric),
                         faithful=self.recipe(probe, metric) is not None)

    def resolve_decoding(self, treebanks: Sequence[Treebank]) -> None:
        """Choose the root and symmetrisation left unset, as :func:`pmask.pipeline.request.resolve` does for every
        run (root gold when every sentence of the dependency treebanks has gold heads); when every treebank is
        documents of EDUs, each probe's metric unless given is one their unit takes (``dist``, not a model's recorded
        ``prob``)."""
        rooted = [s for tb in treebanks if "root" in task_entry(tb.task).settings for s in tb.sentences]
        gold = all(s.root is not None for s in rooted)
        done = resolve(Request(self.model, Decoding(root=self.root, symmetrize=self.symmetrize)),
                       Inputs(gold_heads=gold, family=self.family))
        self.root, self.symmetrize = done.decoding.root, done.decoding.symmetrize
        firsts = [tb.sentences[0] for tb in treebanks if tb.sentences]
        if firsts and len({unit_of([s]).name for s in firsts}) == 1:   # one unit: the probes' defaults are its
            self._inputs = Inputs.of(firsts[:1], family=self.family)
        else:
            self._inputs = Inputs(family=self.family)

    def metric_for(self, probe: str) -> str:
        """The metric ``probe`` runs with (with several :attr:`metrics`: the first)."""
        return self.metrics[0] if self.metrics else str(self.spec_for(probe).impact.metric)

    @property
    def runs(self) -> list[tuple[str, str]]:
        """``(probe, metric)`` of every store of a treebank: each probe with each of :attr:`metrics` (or its one)."""
        if self.metrics:
            return [(p, m) for p in self.probes or () for m in self.metrics]
        return [(p, self.metric_for(p)) for p in self.probes or ()]

    def store_metric(self, metric: str) -> str | None:
        """The metric a store's folder is named by: None with one metric per probe (earlier releases' folders)."""
        return metric if self.metrics else None

    def scores_for(self, task: str) -> tuple[str, ...]:
        """The optional scores asked (:attr:`scores`) that score the trees of ``task``, in the order of the tables."""
        return tuple(name for name, cls in optional_scores().items() if cls.task == task and name in self.scores)

    def attention_head_for(self, probe: str) -> str | int | None:
        """The head decoded for ``probe`` (None for a probe without a head axis)."""
        return self.spec_for(probe).head

    def check(self) -> None:
        """One-line PmaskError for an unknown setting (before any work)."""
        if self.root is not None:   # else chosen once the treebanks are read
            check_choice("root mode", self.root, ROOT_MODES)
        for probe, metric in self.runs:   # a metric some probe does not take: refused here, in one line
            self.spec_for(probe, self.store_metric(metric)).impact.check(self.attention_head_for(probe))
            refuse_layer_zero(self.layers, "layers", probe)   # layer 0's impacts are all zeros: no tree to score
        if self.model.head is not None and all(self.attention_head_for(p) is None for p in self.probes or ()):
            raise SettingError("{head} applies to probe attention and to probe distance with {metric} jsd or "
                               "hellinger, and none of them is benched")
        biased = [name for name, decoder in DECODERS.items() if "bias" in decoder.settings]
        if self.bias and not set(biased) & set(self.decoders or ()):
            raise SettingError(f"{{bias}} is the right-branching bias of the {either(biased)} decoder, which is not "
                               "benched")
        check_choice("punctuation mode", self.punct, PUNCT_MODES)
        check_asked(self.scores)   # an unknown optional score: refused by name
        if self.symmetrize is not None:
            check_choice("symmetrization", self.symmetrize, SYMMETRIZE_MODES)
        if self.limit is not None and self.limit < 1:
            raise PmaskError(f"limit must be a positive number of sentences, not {self.limit}")
        if self.max_words is not None and self.max_words < 1:
            raise PmaskError(f"max_words must be a positive number of words, not {self.max_words}")

    def to_dict(self) -> dict[str, Any]:
        """The settings as ``results.json`` records them: one flat dict, the keys of earlier releases
        first (``metric`` None: each of several probes has its default, which ``metrics`` names)."""
        spec, probes = self.model, list(self.probes or ())
        # several metrics: {probe: [metric, ...]}, and subword the one given (None: each metric's default)
        metrics: dict[str, Any] = {p: list(self.metrics) if self.metrics else self.metric_for(p) for p in probes}
        impact = spec.impact if not self.metrics else replace(spec.impact, subword=self._subword)
        if self.faithful:   # as given: each pipeline fills the rest (from_dict gives them back as given)
            impact = replace(self._given, metric=spec.impact.metric)
        metric = impact.metric or (metrics[probes[0]] if len(probes) == 1 and not self.metrics else None)
        return {"model": spec.name, "layers": self.layers if isinstance(self.layers, str) else list(self.layers),
                "decoders": None if self.decoders is None else list(self.decoders), "root": self.root,
                "limit": self.limit, "metric": metric, "subword": impact.subword, "tokenize": impact.tokenize,
                "punct": self.punct, "seed": self.seed,
                "device": spec.device, "dtype": None if spec.dtype == "auto" else spec.dtype,
                "batch_tokens": spec.batch_tokens, "random_init": spec.random_init,
                "probes": probes, "metrics": metrics, "head": spec.head, "bias": self.bias,
                "max_words": self.max_words, "context": impact.context, "symmetrize": self.symmetrize,
                "absolute": self.absolute, **{name: True for name in optional_scores() if name in self.scores},
                **({"faithful": True} if self.faithful else {})}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BenchSettings:
        """The settings :meth:`to_dict` recorded (``results.json``'s ``settings``), as a run would have them."""
        from pmask.perturb.engine.impact_settings import ImpactSettings

        recorded = data.get("metrics") or {}
        several = next((list(m) for m in recorded.values() if isinstance(m, list)), None)
        impact = ImpactSettings(metric=None if several else data.get("metric"), subword=data.get("subword"),
                                tokenize=data.get("tokenize"), probe=None, context=data.get("context") or None)
        model = ModelSpec(data.get("model"), random_init=bool(data.get("random_init")), impact=impact,
                          device=data.get("device") or "auto", dtype=data.get("dtype") or "auto",
                          batch_tokens=data.get("batch_tokens"), head=data.get("head"))
        layers = data.get("layers", "all")
        return cls(model=model, layers=layers if isinstance(layers, str) else tuple(layers),
                   decoders=data.get("decoders"), root=data.get("root"), limit=data.get("limit"),
                   punct=data.get("punct", "include"), seed=data.get("seed", 0), probes=data.get("probes") or None,
                   bias=data.get("bias", 0.0), max_words=data.get("max_words"), symmetrize=data.get("symmetrize"),
                   absolute=bool(data.get("absolute")), metrics=several,
                   scores=tuple(name for name in optional_scores() if data.get(name)),
                   faithful=bool(data.get("faithful")))
