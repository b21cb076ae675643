"""What a model family is, and its registry (torch-free): the seam every kind of language model plugs into.

A :class:`ModelFamily` says what a kind of model provides to pmask: how it is recognised from a
transformers config before any weights load, the transformers class that loads it, how it hides a word,
which side of a word its state sees, whether it needs a mask token, which probes, metrics and units it
supports, its defaults for the resolver's "model" layer (a decoder per task, a symmetrisation), and its
code: the check of a loaded model's encoder paths (``inspect``) and the encoder a run uses (``encoder``).
Library code asks the entry (``family.needs_mask_token``, ``family.refusal(probe, metric, unit)``,
``family.encoder(lm, fast)``), never the family's name.

An entry is created and registered beside its code, in the module of :mod:`pmask.perturb.encoders` that
runs it (:mod:`pmask.perturb.encoders.masked`: ``masked``, BERT and its kin), when ``pmask`` is imported
(``pmask/__init__.py`` imports :mod:`pmask.perturb.encoders`, whose ``__init__`` imports each family module,
torch-free at import). This module imports nothing of ``pmask.perturb``.

Recognition: :func:`detect_family` tries the families from the lowest :attr:`ModelFamily.precedence` up and
takes the first whose ``recognises(config)`` is true, so a more specific family (XLNet's permutation masks;
an encoder-decoder) goes before a broader one (a masked-LM class; a causal-LM class, which transformers also
offers for BERT).

Example:
    >>> import pmask   # registers every family
    >>> family = MODEL_FAMILIES["masked"]
    >>> family.sees_right, family.needs_mask_token, family.loader
    (True, True, 'AutoModelForMaskedLM')
    >>> family.refusal("pair", "dist", "word") is None
    True
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pmask.common.registry import Registry


@dataclass(frozen=True)
class ModelFamily:
    """A kind of language model: how pmask recognises, loads and runs it, and what it can be asked.

    Attributes:
        name, description: the family's name (recorded where a model's family is) and one line for help and
            docs.
        recognises: ``config -> bool`` on a transformers ``PretrainedConfig`` (or any object with its
            attributes), before any weights load; import transformers inside it, if at all.
        precedence: recognisers run from the lowest up; the first that recognises a config wins.
        loader: the name of the transformers class (``transformers.<loader>``) whose ``from_pretrained`` and
            ``from_config`` load the family's models (``AutoModelForMaskedLM``).
        noun: what one of its models is called in messages ("masked language model").
        accepts: what a model of the family is, for the refusal of a model no family recognises
            ("a masked language model encoder (a *ForMaskedLM class)").
        hides: how a word is hidden from the model, for docs and messages ("the mask token in place of each of
            its pieces").
        sees_right: a word's state sees the words after it (a masked LM); False for a causal LM, whose word-pair
            impacts are one-sided (word j can move only the states of the words after it).
        needs_mask_token: its tokenizer must have a mask token (refused at load otherwise).
        probes, metrics, units: what it supports (None: every registered one); anything else is refused by
            :meth:`refusal` in one line before any model work.
        decoders: the resolver's "model" layer: task -> the decoder used when none is given (empty: the
            task's own default, :class:`pmask.trees.tasks.TaskEntry`).
        symmetrize: the resolver's "model" layer: how an undirected decoder makes F symmetric when not told
            (None: the default, none).
        inspect: ``LoadedModel -> paths``, run once per loaded model (at load, or first use): which encoder
            paths it verified (the masked family's fast path and MLM head,
            :class:`pmask.perturb.encoders.masked.ModelPaths`); the value is kept on the model as its
            ``encoder_paths``.
        encoder: ``(LoadedModel, fast: bool | None) -> Encoder`` (:class:`pmask.perturb.encoders.encoder.Encoder`:
            hidden states at reads, the log-probability of a token at a read); ``fast`` None = the verified fast
            path when there is one, False = the generic path, True = the fast path or a one-line refusal.
        metric_jobs: metric name -> the sentence job that computes it for this family in place of the metric
            entry's own ``job`` (a family's CPMI reading); empty: the metric entry's job.
        readings: a probe's sentence job -> this family's job in its place (a causal model hides a word by the
            attention mask, not by a mask token: ``SingleMaskJob`` -> its causal reading); empty: the probe's.
        prepare_tokenizer: ``(tokenizer, name) -> None``, run on the model's tokenizer at load, after pmask's
            word alignment set-up (a causal LM's inputs start with a start token); None: nothing to do.
        subword_lists: which of Hoover et al.'s classes' tokenisation ``words-ptb`` reproduces for its models
            (a key of :data:`pmask.perturb.alignment.subword_lists.SUBWORD_LISTS`: BERT, GPT2, Bart, XLNet).
        recorded: its name is written into ``describe()`` (``meta.json``, store manifests) as ``"family"``
            (False for the masked family, whose records predate families and stay byte-identical).
        costs: metric or probe name -> the forward sequences its reading runs for a sentence, from the number of
            pieces of each word (a metric's wins over its probe's; empty: the metric's or probe's own formula,
            :mod:`pmask.perturb.probes.cost`), so that ``--dry-run`` counts exactly what the family runs.
        head_layer: why a metric read from the model's head (``MetricEntry.mlm_head``: cpmi, prob) is read at its
            last layer only, ``{last}`` standing for that layer's number (a causal model's own next-token
            prediction); empty: at any layer (a masked LM's head). :meth:`layer_refusal` words the refusal.
    """

    name: str
    description: str
    recognises: Callable[[Any], bool]
    loader: str
    noun: str
    accepts: str
    hides: str
    inspect: Callable[[Any], Any]
    encoder: Callable[[Any, bool | None], Any]
    precedence: int = 50
    sees_right: bool = True
    needs_mask_token: bool = True
    probes: tuple[str, ...] | None = None
    metrics: tuple[str, ...] | None = None
    units: tuple[str, ...] | None = None
    decoders: Mapping[str, str] = field(default_factory=dict)
    symmetrize: str | None = None
    metric_jobs: Mapping[str, type[Any]] = field(default_factory=dict)
    readings: Mapping[type[Any], type[Any]] = field(default_factory=dict)
    prepare_tokenizer: Callable[[Any, str], None] | None = None
    subword_lists: str = "BERT"
    recorded: bool = True
    costs: Mapping[str, Callable[[list[int]], int]] = field(default_factory=dict)
    head_layer: str = ""

    def supports(self, probe: str | None, metric: str | None, unit: str | None) -> bool:
        """Whether it takes ``probe``, ``metric`` and ``unit`` (None: not asked)."""
        return self.refusal(probe, metric, unit) is None

    def refusal(self, probe: str | None, metric: str | None, unit: str | None) -> str | None:
        """Why a model of this family cannot run ``probe`` with ``metric`` on ``unit`` (one line, without the
        model's name: the caller says which model), or None when it can. A value of None is not asked.

        Example:
            >>> import pmask
            >>> MODEL_FAMILIES["masked"].refusal("pair", "prob", None) is None
            True
        """
        for what, value, allowed in (("probe", probe, self.probes), ("metric", metric, self.metrics),
                                     ("unit", unit, self.units)):
            if value is not None and allowed is not None and value not in allowed:
                return (f"{self.name} models take {what} {' or '.join(allowed)}, not {value} "
                        f"({self.description})")
        return None

    def layer_refusal(self, head: bool, layers: Sequence[int], num_layers: int) -> str | None:
        """Why a metric read from the model's head (``head``) cannot be read at ``layers`` (absolute, 0 = the
        embeddings … ``num_layers`` = the last), in one line without the model's name, or None when it can.

        Example:
            >>> import pmask
            >>> MODEL_FAMILIES["causal"].layer_refusal(True, (1, 2), 2)[-15:]
            'use --layers -1'
        """
        if not head or not self.head_layer or all(k == num_layers for k in layers):
            return None
        return f"{self.head_layer.format(last=num_layers)}; use --layers -1"

    def default_decoder(self, task: str) -> str | None:
        """The decoder this family decodes ``task`` with when none is given (None: the task's default)."""
        return self.decoders.get(task)

    def job(self, metric: str, default: type[Any] | None) -> type[Any] | None:
        """The sentence job that computes ``metric`` for this family: its own (:attr:`metric_jobs`), else
        ``default`` (the metric entry's)."""
        return self.metric_jobs.get(metric, default)

    def sequences(self, probe: str, metric: str | None) -> Callable[[list[int]], int] | None:
        """This family's count of forward sequences per sentence for ``probe`` with ``metric`` (:attr:`costs`),
        None when it runs the probe's or metric's own."""
        return self.costs.get(metric or "") or self.costs.get(probe)

    def reading(self, job: type[Any]) -> type[Any]:
        """This family's sentence job in place of a probe's ``job`` (:attr:`readings`; else ``job`` itself)."""
        return self.readings.get(job, job)


#: The model families, in documentation order (the order their modules register them in:
#: :mod:`pmask.perturb.encoders`).
MODEL_FAMILIES: Registry[ModelFamily] = Registry("model family")


def detect_family(config: Any) -> ModelFamily | None:
    """The family of the model whose transformers config is ``config`` (read before any weights load), or None
    when no registered family recognises it: the families are tried by :attr:`ModelFamily.precedence`, the
    lowest first (registration order among equals).

    Example:
        >>> import pmask
        >>> from transformers import BertConfig
        >>> detect_family(BertConfig()).name
        'masked'
    """
    for family in sorted(MODEL_FAMILIES.values(), key=lambda f: f.precedence):
        if family.recognises(config):
            return family
    return None


def unrecognised(name: str, config: Any) -> str:
    """The one-line refusal of a model no family recognises: what each family accepts."""
    kind = getattr(config, "model_type", "?")
    wanted = " or ".join(f.accepts for f in MODEL_FAMILIES.values())
    return f"model {name!r} (type {kind!r}) is of no model family pmask runs; pmask needs {wanted}"
