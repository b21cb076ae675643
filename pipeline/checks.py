"""The refusals of a resolved run, each one line naming the settings involved (as ``{probe}``, ``{root}``...,
which the CLI shows as its flags), before any model work: what
:func:`pmask.pipeline.request.check_request`, the one gate, runs in its order.

- :func:`refuse_unit`: settings that do not apply to the corpus's unit (documents of EDUs take the pair
  probe over pooled EDU states: :meth:`pmask.common.units.UnitEntry.refusal`), first, so that a value chosen
  for a refused one is never blamed;
- :func:`refuse_for_family`: a probe, metric or unit the model's family does not run (when the family is known
  before the model loads: ``Request.family``);
- :func:`refuse_layer_zero`: decoding layer 0, whose impacts are all zeros;
- :func:`check_decoding`: the decoder against the probe (:func:`check_pairing`), the authors' pipelines,
  Wu et al.'s discourse pipeline (:func:`check_discourse`), settings a decoder ignores, the gold root;
- :func:`check_context`: ``--context`` against the file the sentences were read from.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Iterable, Sequence

from pmask.common.errors import ModelError, SettingError
from pmask.common.labels import either
from pmask.common.options import (
    ROOT_MODES,
    SPAN_PROBES,
    SYMMETRIZE_MODES,
    check_choice,
    metric_entry,
    metric_recipe,
    resolve_layers,
)
from pmask.common.probe_entries import PROBE_ENTRIES, AuthorsRecipe
from pmask.common.units import unit_of
from pmask.corpora import Sentence
from pmask.perturb.engine.impact_settings import ImpactSettings
from pmask.pipeline.decoding import Decoding
from pmask.trees.registry import DECODERS, discourse_decoders, get_decoder
from pmask.trees.tasks import corpus_task, task_entry

__all__ = ["authors_recipe", "check_context", "check_decoding", "check_discourse", "check_pairing", "refuse_for_family",
           "refuse_layer_zero", "refuse_one_sided_recipe", "refuse_unit"]


def refuse_unit(impact: ImpactSettings, sentences: Sequence[Sentence]) -> None:
    """Refuse impact settings that do not apply to the unit of ``sentences`` (their entry's
    :meth:`~pmask.common.units.UnitEntry.refusal`: the probe first, then the metric, subword policy,
    tokenisation and context).

    Raises:
        SettingError: naming the setting.
    """
    why = unit_of(sentences).refusal(str(impact.probe), str(impact.metric), str(impact.subword),
                                     str(impact.tokenize), impact.context_words)
    if why is not None:
        raise SettingError(why)


def authors_recipe(impact: ImpactSettings) -> AuthorsRecipe | None:
    """The authors' pipeline ``--faithful`` runs with ``impact``: the metric's own, else the probe's (None: none).

    Example:
        >>> authors_recipe(ImpactSettings("cpmi", None, None, "pair", None)).authors
        'Hoover et al.'
    """
    entry = PROBE_ENTRIES.get(str(impact.probe))
    return metric_recipe(impact.metric) or (entry.faithful if entry else None)


def refuse_for_family(impact: ImpactSettings, model: str | None, family: Any, sentences: Sequence[Sentence]) -> None:
    """Refuse, in one line naming ``model``, a probe, metric or unit its ``family``
    (``pmask.common.model_families.ModelFamily``) does not run.

    Example:
        >>> from pmask.common.model_families import MODEL_FAMILIES
        >>> refuse_for_family(ImpactSettings("dist", "avg", "words", "pair", 0), "m", MODEL_FAMILIES["masked"], [])
    """
    refusal = family.refusal(impact.probe, impact.metric, unit_of(sentences).name)
    if refusal:
        raise ModelError(f"model {model!r}: {refusal}")


def refuse_head_layers(metric: str | None, layers: int | Sequence[int] | str, model: str | None, family: Any) -> None:
    """Refuse, in one line naming ``model``, a metric read from the model's head (cpmi, prob) at ``layers``
    (0 = embeddings, negative from the end, or "all") other than the last where its ``family`` reads the head at
    the last layer only (``ModelFamily.head_layer``: a causal LM's next-token prediction); the model's number of
    layers is read from its config, no weights load, and only where the family has such a rule.

    Raises:
        ModelError: the encoders' own wording (they keep their check for a model loaded here).
    """
    if family is None or not family.head_layer or metric is None or not metric_entry(metric).mlm_head:
        return
    if layers in (-1, [-1], (-1,)):   # the last layer: nothing to read
        return
    from pmask.perturb.models.config import model_layers

    num_layers = model_layers(str(model))
    refusal = family.layer_refusal(True, resolve_layers(layers, num_layers), num_layers)
    if refusal:
        raise ModelError(f"model {model!r}: {refusal}")


def refuse_one_sided_recipe(family: Any, model: str | None, decoder: str, recipe: Any) -> None:
    """Refuse an authors' pipeline (``--faithful``) decoded by a directed decoder, which reads both sides of the
    matrix, on a model whose family fills one side (``sees_right`` False: word j moves only the words after it);
    the pipeline's undirected decoders run (Hoover et al.'s CPMI on GPT-2: their own reading).

    Raises:
        SettingError: naming the decoder, the model and the pipeline's undirected decoders.
    """
    if family is None or family.sees_right or recipe is None or DECODERS[decoder].undirected:
        return
    undirected = [d for d in recipe.decoders if DECODERS[d].undirected]
    instead = f"give {{decoder}} {either(undirected)}" if undirected else "leave {faithful} out"
    raise SettingError(f"{{faithful}} decodes with {decoder} ({recipe.authors}'s pipeline), a directed decoder that "
                       f"reads both sides of the matrix; model {model!r} is a {family.name} model (word j moves only "
                       f"the words after it): {instead}")


def refuse_layer_zero(layers: Iterable[int] | str, flag: str, probe: str) -> None:
    """A :class:`SettingError` when ``layers`` (ints, or "all", which starts at 1) asks to decode layer 0.

    Layer 0 is the embeddings: masking word j cannot change word i's embedding, so its impacts are all zeros
    by construction and every tree would tie. Checked before any model work; storing, exporting and drawing
    layer 0 stay allowed (there it shows what it is). Probe ``attention`` has no weights there. Probe
    ``distance`` is exempt: the distances between the words' embeddings are a tree like any other layer's
    (with ``jsd``/``hellinger`` the store refuses layer 0).
    """
    entry = PROBE_ENTRIES.get(probe)
    if entry and entry.decodes_layer_zero or isinstance(layers, str) or 0 not in list(layers):
        return
    if entry and entry.attention_only:
        raise SettingError(f"{{{flag}}} 0: layer 0 (the embeddings) has no attention weights, which probe {probe} "
                           f"reads; choose layers from 1 up")
    raise SettingError(f"{{{flag}}} 0: layer 0 (the embeddings) has impacts that are all zeros by construction "
                       f"(masking word j cannot change word i's embedding), so every tree would tie; choose "
                       f"layers from 1 up")


def check_decoding(decoding: Decoding, sentences: Sequence[Sentence], probe: str | None) -> None:
    """Refuse a resolved decoding that cannot work on ``sentences``.

    Args:
        decoding: the decoding (its decoder, root and symmetrisation chosen).
        sentences: the corpus (gold roots are needed with ``root="gold"``).
        probe: how the impacts are read out of the model (a baseline reads none: its pairing is not checked);
            None: what depends on it is not checked.

    Raises:
        SettingError: naming the settings involved (``{root}``, ``{faithful}``, ``{probe}``...).
    """
    decoder = str(decoding.decoder)
    dec = get_decoder(decoder)
    if probe is not None:
        check_pairing(probe, decoder)
    discourse = decoding.faithful and check_discourse(decoding, sentences)   # Wu et al.'s: their checks, not these
    faithful = decoding.faithful and not discourse
    if faithful and probe is not None:
        own = PROBE_ENTRIES[probe].faithful if probe in PROBE_ENTRIES else None
        if own is None:
            pipelines = [n for n, e in PROBE_ENTRIES.items() if e.faithful]
            raise SettingError(f"{{faithful}} is the authors' pipeline of probes {', '.join(pipelines)}; "
                               f"probe {probe} has no faithful mode")
        if decoder not in own.decoders:
            raise SettingError(f"{{faithful}} with probe {probe} is the authors' pipeline, whose decoder is "
                               f"{either(own.decoders)}, not {decoder}")
    if decoding.bias and "bias" not in dec.settings:
        biased = either([n for n, d in DECODERS.items() if "bias" in d.settings])
        raise SettingError(f"{{bias}} is the right-branching bias of the {biased} decoder, not of {decoder}")
    if decoding.root not in ROOT_MODES:
        raise SettingError(f"{{root}} must be one of {', '.join(sorted(ROOT_MODES))}, not '{decoding.root}'")
    if faithful and not dec.supports_faithful:
        names = [n for n, d in DECODERS.items() if d.supports_faithful]
        raise SettingError(f"{{faithful}} applies to the {', '.join(names[:-1])} and {names[-1]} decoders only")
    if faithful and decoding.root != "gold" and "root" in dec.settings and not dec.undirected:
        raise SettingError("{faithful} reproduces the paper's setup, which needs {root} gold")
    check_choice("symmetrization", decoding.symmetrize, SYMMETRIZE_MODES)
    if ignored := [name for name in dec.ignores if getattr(decoding, name, None) not in (None, False, "none")]:
        why, them = " (it reads span charts, not word-pair matrices)" if dec.spans else "", len(ignored) > 1
        raise SettingError(f"{{decoder}} {decoder} takes no {' or '.join(f'{{{n}}}' for n in ignored)}"
                           f"{why}; leave {'them' if them else 'it'} out")
    if faithful and not dec.undirected and (decoding.symmetrize != "none" or decoding.absolute):
        raise SettingError(f"{{faithful}} {decoder} is the paper's pipeline on the [CLS] layout, which "
                           "takes no {symmetrize} or {absolute}")
    if decoding.root == "gold" and "root" in dec.settings:
        lacking = next((s for s in sentences if s.root is None), None)
        if lacking is not None:
            raise SettingError(_no_gold_heads(lacking, decoder))


def check_discourse(decoding: Decoding, sentences: Sequence[Sentence]) -> bool:
    """Whether a ``--faithful`` decoding of ``sentences`` is Wu et al.'s discourse pipeline (their unit's
    ``discourse``: documents of EDUs), refusing in one line what it cannot run: a decoder without a discourse
    mode, a free root, a document whose gold root is its last EDU.

    Raises:
        SettingError: naming ``{faithful}``, ``{decoder}``, ``{root}`` or the document.
    """
    if not decoding.faithful or not unit_of(sentences).discourse:
        return False
    if get_decoder(str(decoding.decoder)).discourse is None:
        raise SettingError(f"{{faithful}} on documents is Wu et al.'s discourse pipeline: {{decoder}} "
                           f"{', '.join(discourse_decoders())}, not {decoding.decoder}")
    if decoding.root != "gold":
        raise SettingError("{faithful} on documents is Wu et al.'s discourse pipeline, which needs {root} gold")
    last = next((s for s in sentences if s.root is not None and s.root == len(s)), None)
    if last is not None:
        raise SettingError(f"{last.where()}: {{faithful}} drops the last EDU (the authors' \"cut SEP\"), which is "
                           f"this document's gold root")
    return True


def check_pairing(probe: str, decoder: str) -> None:
    """Refuse, in one line, a model decoder that cannot read the probe's matrices: a span decoder (``cky``)
    reads only span charts (probe distortion), every other model decoder only word-pair matrices.

    Raises:
        SettingError: naming ``{probe}`` and ``{decoder}``.

    Example:
        >>> check_pairing("distortion", "cky")
    """
    dec = get_decoder(decoder)
    if not dec.needs_model:
        return
    span_decoders = [n for n, d in DECODERS.items() if d.spans]
    if dec.spans and probe not in SPAN_PROBES:
        raise SettingError(f"{{decoder}} {decoder} reads span charts (probe {' or '.join(SPAN_PROBES)}), not the "
                           f"word-pair matrices of {{probe}} {probe}")
    if probe in SPAN_PROBES and not dec.spans:
        raise SettingError(f"{{probe}} {probe} gives span charts, which {{decoder}} {decoder} cannot read: use "
                           f"{{decoder}} {' or '.join(span_decoders)} (or a baseline)")


def _no_gold_heads(s: Sentence, decoder: str) -> str:
    """Why ``root="gold"`` cannot work on ``s``, and what to choose instead."""
    if s.tree is None:
        return f"{{root}} gold needs gold heads, but {s.where()} has none; use {{root}} free"
    own = task_entry(corpus_task([s]))   # the task of the tree it has
    return (f"{{root}} gold needs gold heads, but {s.where()} has a bracketed tree and no heads: choose a "
            f"{own.name} decoder such as {{decoder}} {own.default_decoder} (the default for bracketed "
            f"input) or {own.primary_baseline}, or {{root}} free for {decoder}'s dependency trees (written "
            f"as CoNLL-U, to a .conllu file)")


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
