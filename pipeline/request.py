"""One typed request for a run, and the one function that chooses every default: :func:`resolve`.

A run is made of a corpus selection (:class:`~pmask.corpora.corpus_spec.CorpusSpec`: path, format,
limit, max_words), a model and how impacts are computed with it
(:class:`~pmask.perturb.fill.model_spec.ModelSpec`: name, random init, device, dtype, batch tokens,
threads, head, and its :class:`~pmask.perturb.engine.impact_settings.ImpactSettings`: probe, metric,
subword, tokenize, context) and how impacts become trees (:class:`Decoding`). A :class:`Request`
holds the three as given, None meaning "not given". Every front end builds one from what it was
given (each command from its arguments, ``pmask.parse``/``pmask.impacts``/``pmask.sweep`` from their
keywords, ``sweep`` and ``bench`` once per probe) and hands it to :func:`resolve` with what the run
reads (:class:`Inputs`: the corpus's task, whether every sentence has gold heads, a store's own
settings). Each unset value takes the first value of these layers, always in this order:

1. ``store``: a store's own settings, when impacts are read from a store (given values that differ
   from them are refused when the store is opened);
2. ``faithful``: under ``--faithful`` the authors' pipeline, the metric's own (cpmi: Hoover et
   al.'s) else the probe's (:class:`pmask.common.probe_entries.AuthorsRecipe`): its metric (a given one may be
   renamed to the authors' variant), tokenisation, context, decoder (the pipeline's first for the
   corpus's task) and symmetrisation (for an undirected decoder);
3. ``model``: the model's recorded defaults (a bundled model's metric for the pair probe), except on
   documents of EDUs, whose metric (``dist``) outranks a recorded one;
4. ``default``: the entries': probe pair, the probe's first metric, the metric's subword policy,
   tokenize words, context 0; the task's default decoder (a span probe's span decoder: cky); root
   gold when every sentence carries gold heads, else free; symmetrize none.

The resolved request records where each value came from (:attr:`Request.origins`: given, store,
faithful, model or default), so that a refusal can say why a value is what it is; it is checked
once (:func:`check_request`), in one line, before any model work.

Example:
    >>> from pmask.corpora import Sentence
    >>> inputs = Inputs.of([Sentence(id="1", words=["a", "b"], heads=[2, 0])])
    >>> done = resolve(Request(ModelSpec("bert-base-uncased", impact=ImpactSettings(probe="distortion",
    ...     metric=None, subword=None, tokenize=None, context=None))), inputs)
    >>> done.decoding.decoder, done.decoding.root, done.model.impact.metric, done.origins["decoder"]
    ('cky', 'gold', 'all', 'default')
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping, Sequence

from pmask.common.errors import SettingError
from pmask.common.labels import either
from pmask.common.options import SPAN_PROBES, has_attention_heads, metric_recipe
from pmask.common.probe_entries import PROBE_ENTRIES, AuthorsRecipe
from pmask.corpora.corpus_spec import CorpusSpec
from pmask.corpora.sentence import Sentence, is_documents
from pmask.perturb.engine.impact_settings import DOCUMENT_METRICS, UNSET, ImpactSettings
from pmask.perturb.fill.model_spec import ModelSpec, resolve_impact
from pmask.pipeline.induce import ParseSettings, check_settings, refuse_layer_zero
from pmask.trees.registry import DECODERS, get_decoder
from pmask.trees.tasks import corpus_task, task_entry

__all__ = ["ORIGINS", "Decoding", "Inputs", "Request", "authors_recipe", "check_context", "check_request",
           "default_decoders", "prepare", "probe_request", "resolve"]

#: Where a resolved value came from, in the order :func:`resolve` tries them.
ORIGINS = ("given", "store", "faithful", "model", "default")

#: The settings whose origin :attr:`Request.origins` records (those that have a default to resolve).
RESOLVED = ("probe", "metric", "subword", "tokenize", "context", "decoder", "root", "symmetrize")


@dataclass(frozen=True)
class Decoding:
    """How impacts become trees (None: not given; :func:`resolve` chooses).

    Attributes:
        decoder: a name of :data:`pmask.trees.registry.DECODERS`.
        layers: the layer decoded (``parse``: one int, -1 = last) or several (``sweep``, ``bench``:
            ints or "all").
        root: "gold" or "free" (dependency decoders).
        faithful: the authors' pipeline (``--faithful``).
        multiroot, seed, bias, absolute: as :class:`pmask.pipeline.induce.ParseSettings`.
        symmetrize: none, sum, triu or tril.
    """

    decoder: str | None = None
    layers: int | Sequence[int] | str = -1
    root: str | None = None
    faithful: bool = False
    multiroot: bool = False
    seed: int = 0
    bias: float = 0.0
    symmetrize: str | None = None
    absolute: bool = False

    def settings(self, layer: int | None = None) -> ParseSettings:
        """The resolved decoding of one layer (default: :attr:`layers` when it is one int, else 1) as
        the :class:`~pmask.pipeline.induce.ParseSettings` the parse pipeline records."""
        if layer is None:
            layer = self.layers if isinstance(self.layers, int) else 1
        if self.decoder is None or self.root is None or self.symmetrize is None:
            raise ValueError("resolve the request first (pmask.pipeline.request.resolve)")
        return ParseSettings(decoder=self.decoder, layer=layer, root=self.root, faithful=self.faithful,
                             multiroot=self.multiroot, seed=self.seed, bias=self.bias, symmetrize=self.symmetrize,
                             absolute=self.absolute)


@dataclass(frozen=True)
class Inputs:
    """What the run reads that decides a default: the corpus's task ("dependency" for CoNLL-U, .dp and
    text, "constituency" for bracketed trees), whether every sentence carries gold heads, and the
    settings of the store impacts are read from (None: they are computed)."""

    task: str = "dependency"
    gold_heads: bool = False
    held: ImpactSettings | None = None
    sentences: Sequence[Sentence] = field(default=(), compare=False, repr=False)   # for the checks

    @classmethod
    def of(cls, sentences: Sequence[Sentence], held: ImpactSettings | None = None) -> Inputs:
        """The inputs of a run over ``sentences`` (impacts read from a store holding ``held``, if given).

        Example:
            >>> from pmask.corpora import Sentence
            >>> Inputs.of([Sentence(id="1", words=["a"])]).gold_heads
            False
        """
        sentences = list(sentences)
        return cls(corpus_task(sentences), bool(sentences) and all(s.root is not None for s in sentences), held,
                   sentences)

    @classmethod
    def of_source(cls, source: Any) -> Inputs:
        """The inputs of an opened ``pmask.perturb.source.ImpactSource`` (its sentences, and the settings of
        the store it reads impacts from)."""
        return cls.of(source.sentences, source.held_settings())


@dataclass(frozen=True)
class Request:
    """What a run is made of (see the module's docstring): the model and impact settings, the
    decoding and the corpus; after :func:`resolve`, every setting chosen and :attr:`origins` saying
    where each came from."""

    model: ModelSpec = field(default_factory=lambda: ModelSpec(impact=UNSET))
    decoding: Decoding = Decoding()
    corpus: CorpusSpec | None = None
    origins: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def build(cls, *, model: str | None = None, random_init: bool = False, device: str = "auto", dtype: str = "auto",
              batch_tokens: int | None = None, threads: int | None = None, head: str | int | None = None,
              probe: str | None = None, metric: str | None = None, subword: str | None = None,
              tokenize: str | None = None, context: int | None = None, decoder: str | None = None,
              layers: int | Sequence[int] | str = -1, root: str | None = None, faithful: bool = False,
              multiroot: bool = False, seed: int = 0, bias: float = 0.0, symmetrize: str | None = None,
              absolute: bool = False, corpus: CorpusSpec | None = None) -> Request:
        """A request of what was given, one keyword per setting (the commands' builder and the API's call it
        with their arguments; None: not given).

        Example:
            >>> Request.build(probe="distance").impact
            ImpactSettings(metric=None, subword=None, tokenize=None, probe='distance', context=None)
        """
        impact = ImpactSettings(metric, subword, tokenize, probe, context)
        spec = ModelSpec(model, random_init=random_init, impact=impact, device=device, dtype=dtype,
                         batch_tokens=batch_tokens, threads=threads, head=head)
        return cls(spec, Decoding(decoder, layers, root, faithful, multiroot, seed, bias, symmetrize, absolute), corpus)

    @property
    def impact(self) -> ImpactSettings:
        return self.model.impact

    def origin(self, name: str) -> str:
        """Where setting ``name`` came from (``"given"`` for one not resolved yet)."""
        return self.origins.get(name, "given")


# ---------------------------------------------------------------------------- the one resolution

def resolve(request: Request, inputs: Inputs = Inputs()) -> Request:
    """``request`` with every default chosen, in the one order of the module's docstring.

    Args:
        request: what was given (None: not given).
        inputs: what the run reads (see :class:`Inputs`).

    Returns:
        A new :class:`Request`; its ``model`` names the default model (``pmask-tiny-en``) when none
        was given and impacts are computed (not when they are read from a store).

    Example:
        >>> resolve(Request(ModelSpec(impact=ImpactSettings("cpmi", None, None, None, None)),
        ...                 Decoding(faithful=True))).decoding.decoder
        'mst-projective'
    """
    origins: dict[str, str] = {}
    impact = _layer(UNSET, request.impact, "given", origins)
    if inputs.held is not None:
        impact = _layer(impact, inputs.held, "store", origins)
    if request.decoding.faithful:
        impact = _layer(impact, resolve_impact(impact, faithful=True, recorded=False, defaults=False), "faithful",
                        origins)
    if impact.metric is None and is_documents(inputs.sentences):
        # the discourse metric outranks a model's recorded one (prob cannot pool an EDU's pieces)
        impact = _layer(impact, replace(impact, metric=DOCUMENT_METRICS[0]), "default", origins)
    spec = request.model if inputs.held is not None else request.model.named()   # a store is read without one
    impact = _layer(impact, resolve_impact(impact, spec.name, defaults=False), "model", origins)
    impact = _layer(impact, impact.with_defaults(), "default", origins)
    decoding = _decoding(request.decoding, impact, inputs, origins)
    return replace(request, model=replace(spec, impact=impact), decoding=decoding,
                   origins=MappingProxyType({k: origins[k] for k in RESOLVED if k in origins}))


def _layer(impact: ImpactSettings, layer: ImpactSettings, origin: str, origins: dict[str, str]) -> ImpactSettings:
    """``impact`` with ``layer``'s values where they are new (unset before, or renamed by a pipeline)."""
    out = {}
    for f in fields(ImpactSettings):
        mine, theirs = getattr(impact, f.name), getattr(layer, f.name)
        if theirs is not None and theirs != mine:
            origins[f.name] = origin
            out[f.name] = theirs
    return replace(impact, **out) if out else impact


def _decoding(given: Decoding, impact: ImpactSettings, inputs: Inputs, origins: dict[str, str]) -> Decoding:
    """The decoder, root and symmetrisation of a run with the resolved ``impact`` (layers 2 and 4)."""
    pipeline = authors_recipe(impact) if given.faithful else None
    decoder, origins["decoder"] = given.decoder, "given"
    if decoder is None and pipeline is not None:   # the pipeline's first decoder of the corpus's task
        decoder = next((d for d in pipeline.decoders if get_decoder(d).task == inputs.task), None)
        origins["decoder"] = "faithful"
    if decoder is None:
        decoder, origins["decoder"] = default_decoders(inputs.task, impact.probe)[0], "default"
    root, origins["root"] = given.root, "given"
    if root is None:
        root, origins["root"] = ("gold" if inputs.gold_heads else "free"), "default"
    symmetrize, origins["symmetrize"] = given.symmetrize, "given"
    undirected = decoder in DECODERS and DECODERS[decoder].undirected
    if symmetrize is None and pipeline is not None and pipeline.symmetrize and undirected:
        symmetrize, origins["symmetrize"] = pipeline.symmetrize, "faithful"
    if symmetrize is None:
        symmetrize, origins["symmetrize"] = "none", "default"
    return replace(given, decoder=decoder, root=root, symmetrize=symmetrize)


def authors_recipe(impact: ImpactSettings) -> AuthorsRecipe | None:
    """The authors' pipeline ``--faithful`` runs with ``impact``: the metric's own, else the probe's (None: none).

    Example:
        >>> authors_recipe(ImpactSettings("cpmi", None, None, "pair", None)).authors
        'Hoover et al.'
    """
    entry = PROBE_ENTRIES.get(impact.probe or "")
    return metric_recipe(impact.metric) or (entry.faithful if entry else None)


def default_decoders(task: str, probe: str | None = None) -> tuple[str, ...]:
    """The decoders run when none is named: a span probe's span decoders (``cky``), else the task's
    (:class:`pmask.trees.tasks.TaskEntry`; ``parse`` and ``sweep`` run the first, ``bench`` every one).

    Example:
        >>> default_decoders("dependency"), default_decoders("constituency", "distortion")
        (('eisner', 'cle'), ('cky',))
    """
    if probe in SPAN_PROBES:
        return tuple(n for n, d in DECODERS.items() if d.spans)
    return task_entry(task).default_decoders


def probe_request(request: Request, probe: str, inputs: Inputs = Inputs()) -> Request:
    """``request`` for ``probe``, one of several run with one model (``sweep``, ``bench``), resolved: the
    probe's own defaults, and the head given only for a probe that keeps every head.

    Example:
        >>> spec = ModelSpec("bert-base-uncased", impact=UNSET, head=3)
        >>> [probe_request(Request(spec), p).model.head for p in ("attention", "pair")]
        [3, None]
    """
    head = request.model.head
    done = resolve(replace(request, model=replace(request.model, impact=replace(request.impact, probe=probe),
                                                  head=None)), inputs)
    keeps = has_attention_heads(done.impact.probe, done.impact.metric)
    return replace(done, model=replace(done.model, head=head if keeps else None))


def prepare(request: Request, source: Any, *, decodes: bool = True) -> Request:
    """Resolve ``request`` for an opened ``pmask.perturb.source.ImpactSource`` (its sentences and store, see
    :meth:`Inputs.of_source`), check it (:func:`check_request`; with ``decodes`` False, as for a heatmap, only
    the impact settings) and let the source compute with the resolved model settings. Before any model work.

    Returns:
        The resolved request.
    """
    done = resolve(request, Inputs.of_source(source))
    if decodes:
        check_request(done, source.sentences)
    else:
        done.impact.check(done.model.head)
    if not decodes or get_decoder(str(done.decoding.decoder)).needs_model:
        source.model_spec = done.model   # the source's own settings: given, a store's, the pipeline's, defaults
    return done


# ---------------------------------------------------------------------------- the one check

def check_request(request: Request, sentences: Sequence[Sentence] = ()) -> None:
    """Refuse a resolved request that cannot work, in one line, before any model work (a baseline reads
    no impacts: its impact settings are not checked).

    Args:
        request: a request returned by :func:`resolve`.
        sentences: the corpus (gold roots for root gold; files for ``context``).

    Raises:
        SettingError: naming the settings involved as ``{name}`` (the CLI shows its flags).
        OptionError: an unknown value.
    """
    decoding, impact = request.decoding, request.impact
    dec = get_decoder(str(decoding.decoder))
    probe = str(impact.probe)
    if dec.needs_model:
        impact.check(request.model.head)
        layers = decoding.layers
        if isinstance(layers, int):
            refuse_layer_zero([layers], "layer", probe)
        else:
            refuse_layer_zero(layers, "layers", probe)
    check_settings(decoding.settings(1), sentences, probe)
    own = metric_recipe(impact.metric) if decoding.faithful and dec.needs_model else None
    if own and decoding.decoder not in own.decoders:
        raise SettingError(f"{{faithful}} with {{metric}} {impact.metric} is {own.authors}'s pipeline, which decodes "
                           f"with {either(own.decoders)}, not {decoding.decoder}")
    if dec.needs_model and request.origin("context") != "store":   # a store's impacts are read, not computed
        check_context(sentences, impact.context or 0, _context_reason(request))


def _context_reason(request: Request) -> str:
    """Where ``context`` came from, in the words of a message: "asked for", or the pipeline that sets it."""
    if request.origin("context") != "faithful":
        return ""
    impact = request.impact
    metric = impact.metric if metric_recipe(impact.metric) else None
    pipeline = authors_recipe(impact)
    who = f"{pipeline.authors}'s pipeline" if pipeline else "the authors' pipeline"
    via = f"{{faithful}} {{metric}} {metric}" if metric else f"{{faithful}} with {{probe}} {impact.probe}"
    return f"{via} gives each sentence {impact.context} words of context ({who})"


def check_context(sentences: Sequence[Sentence], words: int, reason: str = "") -> None:
    """Refuse ``context`` (``words`` > 0) for sentences not read from a file, or a file too short to give
    ``words`` words of context (``reason``: where the number came from when it was not given).

    Raises:
        SettingError: naming ``{context}``.

    Example:
        >>> check_context([Sentence(id="1", words=["a"], path="<input>")], 5)
        Traceback (most recent call last):
        ...
        pmask.common.errors.SettingError: context takes neighbouring sentences from the file the sentences were read \
from, and sentence 1 was not read from one: pass Sentences read with pmask.corpora.read_corpus, or leave context out
    """
    if not words:
        return
    per_file: dict[str, int] = {}
    for s in sentences:
        path = s.path or ""
        if path in ("", "-", "<input>") or s.line is None or not Path(path).is_file():
            raise SettingError(f"{{context}} takes neighbouring sentences from the file the sentences were read from, "
                               f"and sentence {s.id} was not read from one: pass Sentences read with "
                               f"pmask.corpora.read_corpus, or leave {{context}} out")
        per_file[path] = per_file.get(path, 0) + len(s.words)
    for path, held in per_file.items():
        total = held if held >= words else _words_in(path)
        if total < words:
            asked = reason or f"{{context}} {words} asks for {words} words of context"
            raise SettingError(f"{path}: {asked}, but the file holds {total} words; give {{context}} {total} or less")


def _words_in(path: str) -> int:
    """The words of every sentence of the corpus file ``path`` (read quietly: it was announced once)."""
    from pmask.corpora import read_corpus

    quiet = logging.getLogger("pmask.corpora")
    level = quiet.level
    quiet.setLevel(logging.WARNING)
    try:
        return sum(len(s.words) for s in read_corpus(path))
    finally:
        quiet.setLevel(level)

