"""A request made ready for the run it describes: resolved and checked for an opened source
(:func:`prepare`), then resolved again with the model's family (read from the model's config, no weights) and
checked for it (:func:`with_family`). :mod:`pmask.pipeline.request` chooses and checks without reading
anything; this module asks the source and the model's config.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Sequence

from pmask.corpora.sentence import Sentence
from pmask.pipeline.checks import authors_recipe, refuse_for_family, refuse_head_layers, refuse_one_sided_recipe
from pmask.pipeline.request import Inputs, Request, check_request, resolve
from pmask.trees.registry import get_decoder

__all__ = ["prepare", "with_family"]


def prepare(request: Request, source: Any, *, decodes: bool = True, check: Callable | None = None) -> Request:
    """Resolve ``request`` for an opened ``pmask.perturb.source.ImpactSource`` (its sentences and store, see
    :meth:`Inputs.of_source`), check it (:func:`check_request`; with ``decodes`` False, as for a heatmap, only
    the impact settings; then ``check``, the command's own, e.g. its output for the decoder, before the model's
    config is read) and let the source compute with the resolved model settings. Before any model work.

    Returns:
        The resolved request.
    """
    inputs = Inputs.of_source(source)
    done = resolve(request, inputs)
    check_request(done, source.sentences, decodes=decodes)
    if check is not None:   # the command's own, before the model's config is read (a missing model is the later error)
        check(done)
    if not decodes or get_decoder(str(done.decoding.decoder)).needs_model:
        if inputs.held is None:   # computed: the model's family, its defaults and refusals, before any weights load
            again = resolve(request, replace(inputs, family=source.family(done.model)))
            if check is not None and again.decoding != done.decoding:   # the family's defaults chose another
                check(again)
            done = with_family(done, again, source.sentences, decodes=decodes)
        source.use(done.model)   # the source's own settings: given, a store's, the pipeline's, defaults
    return done


def with_family(done: Request, again: Request, sentences: Sequence[Sentence], *, decodes: bool = True) -> Request:
    """``again``: a request resolved (``done``: without the model's family, checked) again with the model's family
    (``Inputs.family``), checked for it: in full when the family's "model" layer chose a default of its own, else
    what the family refuses (a probe, metric or unit it does not run; an authors' pipeline decoded by a directed
    decoder on a one-sided family; a head metric at a layer its family does not read it at), in one line before
    any weights load."""
    if again != done:
        check_request(again, sentences, decodes=decodes)
    elif again.family is not None:
        refuse_for_family(again.impact, again.model.name, again.family, sentences)
        if decodes and again.decoding.faithful:
            refuse_one_sided_recipe(again.family, again.model.name, str(again.decoding.decoder),
                                    authors_recipe(again.impact))
    reads = not decodes or get_decoder(str(again.decoding.decoder)).needs_model
    if reads:   # a head read at the last layer only (a causal LM's cpmi): the layers asked, from the config
        refuse_head_layers(again.impact.metric, again.decoding.layers, again.model.name, again.family)
    return again
