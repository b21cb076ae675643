"""One typed request for a run, the one function that chooses every default (:func:`resolve`) and the one
gate that refuses what cannot work (:func:`check_request`).

A run is made of a corpus selection (:class:`~pmask.corpora.corpus_spec.CorpusSpec`: path, format,
limit, max_words), a model and how impacts are computed with it
(:class:`~pmask.perturb.fill.model_spec.ModelSpec`: name, random init, device, dtype, batch tokens,
threads, head, and its :class:`~pmask.perturb.engine.impact_settings.ImpactSettings`: probe, metric,
subword, tokenize, context) and how impacts become trees (:class:`~pmask.pipeline.decoding.Decoding`). A
:class:`Request` holds the three as given, None meaning "not given". Every front end builds one from what it
was given (each command from its arguments, ``pmask.parse``/``pmask.impacts``/``pmask.sweep``/``pmask.estimate``
from their keywords, ``sweep`` and ``bench`` once per probe) and hands it to :func:`resolve` with what the run
reads (:class:`Inputs`: the corpus's task and unit, whether every record has gold heads, a store's own
settings, the model's family). Each unset value takes the first value of these layers, always in this order:

1. ``store``: a store's own settings, when impacts are read from a store (given values that differ
   from them are refused when the store is opened);
2. ``faithful``: under ``--faithful`` the authors' pipeline, the metric's own (cpmi: Hoover et
   al.'s) else the probe's (:class:`pmask.common.probe_entries.AuthorsRecipe`): its metric (a given one may be
   renamed to the authors' variant), tokenisation, context, decoder (the pipeline's first for the
   corpus's task) and symmetrisation (for an undirected decoder);
3. ``model``: the model's recorded defaults (a bundled model's metric for the pair probe, when the unit
   takes it: documents of EDUs pool their pieces, which ``prob`` cannot) and its family's (a decoder per
   task, a symmetrisation: ``Inputs.family``);
4. ``default``: the entries': the first probe (pair), the probe's first metric the unit takes, the
   metric's subword policy (else the first, avg), the first tokenisation (words), context 0; the task's
   default decoder (a span probe's span decoder: cky); root gold when every record carries gold heads,
   else free; symmetrize none.

This is the only code of the library that chooses a default (``tests/pipeline/test_request.py`` reads the
code to see it); everything below the pipeline wing takes resolved settings. The resolved request records
where each value came from (:attr:`Request.origins`: given, store, faithful, model or default), so that a
refusal can say why a value is what it is; it is checked once (:func:`check_request`), in one line, before
any model work.

Example:
    >>> from pmask.corpora import Sentence
    >>> inputs = Inputs.of([Sentence(id="1", words=["a", "b"], heads=[2, 0])])
    >>> done = resolve(Request.build(model="bert-base-uncased", probe="distortion"), inputs)
    >>> done.decoding.decoder, done.decoding.root, done.model.impact.metric, done.origins["decoder"]
    ('cky', 'gold', 'all', 'default')
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any, Mapping, Sequence

from pmask.common.errors import SettingError
from pmask.common.labels import either
from pmask.common.options import SPAN_PROBES, SUBWORD_POLICIES, first_probe, has_attention_heads, metric_recipe
from pmask.common.probe_entries import METRIC_ENTRIES, PROBE_ENTRIES
from pmask.common.tokenization import TOKENIZE_ENTRIES
from pmask.common.units import UnitEntry, unit_of
from pmask.corpora.corpus_spec import CorpusSpec
from pmask.corpora.sentence import Sentence
from pmask.perturb.engine.impact_settings import UNSET, ImpactSettings
from pmask.perturb.fill.model_spec import ModelSpec
from pmask.perturb.models.bundled import DEFAULT_MODEL, bundled_model
from pmask.pipeline.checks import (
    authors_recipe,
    check_context,
    check_decoding,
    refuse_for_family,
    refuse_layer_zero,
    refuse_one_sided_recipe,
    refuse_unit,
)
from pmask.pipeline.decoding import Decoding
from pmask.trees.registry import DECODERS, get_decoder
from pmask.trees.tasks import corpus_task, task_entry

__all__ = ["ORIGINS", "Decoding", "Inputs", "Request", "authors_recipe", "check_request", "default_decoders",
           "impact_choice", "model_family_of", "probe_request", "resolve"]

#: Where a resolved value came from, in the order :func:`resolve` tries them.
ORIGINS = ("given", "store", "faithful", "model", "default")

#: The settings whose origin :attr:`Request.origins` records (those that have a default to resolve).
RESOLVED = ("probe", "metric", "subword", "tokenize", "context", "decoder", "root", "symmetrize")


@dataclass(frozen=True)
class Inputs:
    """What the run reads that decides a default: the corpus's task ("dependency" for CoNLL-U, .dp and
    text, "constituency" for bracketed trees), whether every record carries gold heads, the settings of the
    store impacts are read from (None: they are computed), the model's family when it is known before the
    model loads (``pmask.common.model_families``: its ``default_decoder(task)`` and ``symmetrize`` are the
    "model" layer; None: none), and the records themselves (their unit, for the checks)."""

    task: str = "dependency"
    gold_heads: bool = False
    held: ImpactSettings | None = None
    family: Any = None
    sentences: Sequence[Sentence] = field(default=(), compare=False, repr=False)

    @property
    def unit(self) -> UnitEntry:
        """The unit of the records (:func:`pmask.common.units.unit_of`: words for none)."""
        return unit_of(self.sentences)

    @classmethod
    def of(cls, sentences: Sequence[Sentence], held: ImpactSettings | None = None, family: Any = None) -> Inputs:
        """The inputs of a run over ``sentences`` (impacts read from a store holding ``held``, if given).

        Example:
            >>> from pmask.corpora import Sentence
            >>> Inputs.of([Sentence(id="1", words=["a"])]).gold_heads
            False
        """
        sentences = list(sentences)
        return cls(corpus_task(sentences), bool(sentences) and all(s.root is not None for s in sentences), held,
                   family, sentences)

    @classmethod
    def of_source(cls, source: Any) -> Inputs:
        """The inputs of an opened ``pmask.perturb.source.ImpactSource`` (its sentences, and the settings and
        model family of the store it reads impacts from; a computing source's family is read by :func:`prepare`
        once the settings are checked)."""
        held = source.held_settings()
        return cls.of(source.sentences, held, source.family(source.model_spec) if held is not None else None)


@dataclass(frozen=True)
class Request:
    """What a run is made of (see the module's docstring): the model and impact settings, the
    decoding and the corpus; after :func:`resolve`, every setting chosen and :attr:`origins` saying
    where each came from."""

    model: ModelSpec = field(default_factory=lambda: ModelSpec(impact=UNSET))
    decoding: Decoding = Decoding()
    corpus: CorpusSpec | None = None
    origins: Mapping[str, str] = field(default_factory=dict)
    family: Any = field(default=None, compare=False, repr=False)   # resolved: the family it was resolved for

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
        >>> resolve(Request.build(metric="cpmi", faithful=True)).decoding.decoder
        'mst-projective'
    """
    origins: dict[str, str] = {}
    impact = _layer(UNSET, request.impact, "given", origins)
    if inputs.held is not None:
        impact = _layer(impact, inputs.held, "store", origins)
    if request.decoding.faithful:
        impact = _layer(impact, _faithful(impact), "faithful", origins)
    spec = request.model if inputs.held is not None else _named(request.model)   # a store is read without one
    impact = _layer(impact, _recorded(impact, spec.name, inputs.unit), "model", origins)
    impact = _layer(impact, _entries(impact, inputs.unit, inputs.family), "default", origins)
    decoding = _decoding(request.decoding, impact, inputs, origins)
    return replace(request, model=replace(spec, impact=impact), decoding=decoding, family=inputs.family,
                   origins=MappingProxyType({k: origins[k] for k in RESOLVED if k in origins}))


def impact_choice(model: str, unit: str, given: ImpactSettings) -> ImpactSettings:
    """The impact settings ``pmask impact`` resolves from ``given`` (None: left out) for model ``model``
    (``random:NAME`` too) over a corpus of ``unit`` records, before the model's config is read: what a command
    that leaves a setting out gets (:func:`pmask.perturb.engine.impact_settings.connect_resolver` lets an unfinished
    store's ``--resume`` command ask it).

    Example:
        >>> [impact_choice(m, "word", UNSET).metric for m in ("pmask-tiny-en", "bert-base-uncased")]
        ['prob', 'dist']
    """
    records = (Sentence(id="", words=[], unit=unit),)   # all the resolver reads of the corpus here is its unit
    return resolve(Request(ModelSpec(model, impact=given)), Inputs(sentences=records)).impact


def _layer(impact: ImpactSettings, layer: ImpactSettings, origin: str, origins: dict[str, str]) -> ImpactSettings:
    """``impact`` with ``layer``'s values where they are new (unset before, or renamed by a pipeline)."""
    out = {}
    for f in fields(ImpactSettings):
        mine, theirs = getattr(impact, f.name), getattr(layer, f.name)
        if theirs is not None and theirs != mine:
            origins[f.name] = origin
            out[f.name] = theirs
    return replace(impact, **out) if out else impact


def _named(spec: ModelSpec) -> ModelSpec:
    """``spec``, naming the default model (:data:`pmask.perturb.models.bundled.DEFAULT_MODEL`) when it names none;
    ``ModelSpec.load`` says so in one line, once, when it loads it."""
    return spec if spec.name else replace(spec, name=DEFAULT_MODEL, defaulted=True)


def _faithful(impact: ImpactSettings) -> ImpactSettings:
    """``impact`` with what its authors' pipeline fixes (the metric's own, else the probe's) where it is unset: its
    metric, its variant of the metric given (a rename: Kim et al.'s ``cos`` is ``cossim``), tokenisation, context."""
    probe = PROBE_ENTRIES.get(impact.probe if impact.probe is not None else first_probe())
    pipeline = metric_recipe(impact.metric) or (probe.faithful if probe else None)
    if pipeline is None:
        return impact
    metric = impact.metric if impact.metric is not None else pipeline.metric
    return replace(impact, metric=pipeline.renames.get(metric, metric) if metric else None,
                   tokenize=impact.tokenize if impact.tokenize is not None else pipeline.tokenize,
                   context=impact.context if impact.context is not None else pipeline.context)


def _recorded(impact: ImpactSettings, model: str | None, unit: UnitEntry) -> ImpactSettings:
    """``impact`` with the named model's recorded defaults where it is unset (a bundled model's metric, recorded
    for the first probe, pair), where the unit takes them."""
    found = bundled_model(model)
    metric = found.defaults.get("metric") if found else None
    if metric and impact.metric is None and impact.probe in (None, first_probe()) and unit.takes_metric(metric):
        return replace(impact, metric=metric)
    return impact


def _entries(impact: ImpactSettings, unit: UnitEntry, family: Any) -> ImpactSettings:
    """``impact`` with the entries' defaults where it is unset: the first probe, the probe's first metric the unit
    and the model's family take (else its first), the metric's subword policy (else the first, avg), the first
    tokenisation mode (words), no context."""
    probe = impact.probe if impact.probe is not None else first_probe()
    metric = impact.metric
    if metric is None and probe in PROBE_ENTRIES:   # an unknown probe is refused by the check, in one line
        taken = [m for m in unit.metrics(probe) if family is None or family.supports(probe, m, None)]
        metric = (taken or PROBE_ENTRIES[probe].metrics)[0]
    entry = METRIC_ENTRIES.get(metric or "")
    fixed = entry.subword if entry is not None else None
    subword = fixed if fixed is not None else next(iter(SUBWORD_POLICIES))
    tokenize = next(iter(TOKENIZE_ENTRIES))
    return ImpactSettings(metric, impact.subword if impact.subword is not None else subword,
                          impact.tokenize if impact.tokenize is not None else tokenize, probe,
                          impact.context if impact.context is not None else 0)


def _decoding(given: Decoding, impact: ImpactSettings, inputs: Inputs, origins: dict[str, str]) -> Decoding:
    """The decoder, root and symmetrisation of a run with the resolved ``impact`` (layers 2 to 4)."""
    pipeline = authors_recipe(impact) if given.faithful else None
    family = inputs.family
    decoder, origins["decoder"] = given.decoder, "given"
    if decoder is None and pipeline is not None:   # the pipeline's first decoder of the corpus's task
        decoder = next((d for d in pipeline.decoders if get_decoder(d).task == inputs.task), None)
        origins["decoder"] = "faithful"
    own = family is not None and family.default_decoder(inputs.task) is not None
    if decoder is None and own and impact.probe not in SPAN_PROBES:   # a span chart keeps its span decoder
        decoder, origins["decoder"] = family.default_decoder(inputs.task), "model"
    if decoder is None:
        decoder, origins["decoder"] = default_decoders(inputs.task, impact.probe)[0], "default"
    root, origins["root"] = given.root, "given"
    if root is None:
        root, origins["root"] = ("gold" if inputs.gold_heads else "free"), "default"
    symmetrize, origins["symmetrize"] = given.symmetrize, "given"
    undirected = decoder in DECODERS and DECODERS[decoder].undirected
    if symmetrize is None and pipeline is not None and pipeline.symmetrize and undirected:
        symmetrize, origins["symmetrize"] = pipeline.symmetrize, "faithful"
    if symmetrize is None and family is not None and family.symmetrize is not None and undirected:
        symmetrize, origins["symmetrize"] = family.symmetrize, "model"
    if symmetrize is None:
        symmetrize, origins["symmetrize"] = "none", "default"
    return replace(given, decoder=decoder, root=root, symmetrize=symmetrize)


def default_decoders(task: str, probe: str | None) -> tuple[str, ...]:
    """The decoders run when none is named: a span probe's span decoders (``cky``), else the task's
    (:class:`pmask.trees.tasks.TaskEntry`; ``parse`` and ``sweep`` run the first, ``bench`` every one).

    Example:
        >>> default_decoders("dependency", "pair"), default_decoders("constituency", "distortion")
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


def model_family_of(spec: ModelSpec) -> Any:
    """The family (``pmask.common.model_families.ModelFamily``) of the model ``spec`` names (the default model when
    it names none), read from its config: no weights load (transformers' import, 1-3 s cold)."""
    from pmask.perturb.models.config import model_family

    return model_family(str(_named(spec).name))


# ---------------------------------------------------------------------------- the one check

def check_request(request: Request, sentences: Sequence[Sentence] = (), *, decodes: bool = True) -> None:
    """Refuse a resolved request that cannot work, in one line, before any model work: the settings that do
    not apply to the corpus's unit first (:func:`pmask.pipeline.checks.refuse_unit`), then the impact settings
    and layer 0 (not for a baseline, which reads no impacts), then the decoding
    (:func:`pmask.pipeline.checks.check_decoding`), a metric's own pipeline, and ``context`` against the file.

    Args:
        request: a request returned by :func:`resolve`.
        sentences: the corpus (gold roots for root gold; files for ``context``).
        decodes: False for a run that computes impacts and decodes nothing (``impact``, ``heatmap``,
            ``pmask.impacts``): only the impact settings are checked.

    Raises:
        SettingError: naming the settings involved as ``{name}`` (the CLI shows its flags).
        OptionError: an unknown value.
    """
    decoding, impact = request.decoding, request.impact
    reads = not decodes or get_decoder(str(decoding.decoder)).needs_model
    probe = str(impact.probe)
    if reads:
        refuse_unit(impact, sentences)
        impact.check(request.model.head)
        if request.family is not None:
            refuse_for_family(impact, request.model.name, request.family, sentences)
    if not decodes:
        return
    if reads:
        layers = decoding.layers
        refuse_layer_zero([layers] if isinstance(layers, int) else layers,
                          "layer" if isinstance(layers, int) else "layers", probe)
    check_decoding(decoding, sentences, probe)   # a baseline's pairing is not checked: it reads no impacts
    if decoding.faithful and reads:
        refuse_one_sided_recipe(request.family, request.model.name, str(decoding.decoder), authors_recipe(impact))
    own = metric_recipe(impact.metric) if decoding.faithful and reads else None
    if own and decoding.decoder not in own.decoders:
        raise SettingError(f"{{faithful}} with {{metric}} {impact.metric} is {own.authors}'s pipeline, which decodes "
                           f"with {either(own.decoders)}, not {decoding.decoder}")
    if reads and request.origin("context") != "store":   # a store's impacts are read, not computed
        check_context(sentences, impact.context_words, _context_reason(request))


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
