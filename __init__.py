"""pmask: induce syntax from masked language models with Perturbed Masking (Wu et al., ACL 2020).

The package is six wings over shared basics, each importing only the ones before it:

- ``pmask.common``   errors, every named setting (``options``), outputs that behave like shell redirection
- ``pmask.corpora``  read and write treebanks and text; head maps, bracket strings, provenance records
- ``pmask.perturb``  models, the impact engine, its on-disk store, impact sources (store or model)
- ``pmask.trees``    decoders and baselines (independent of ``pmask.perturb``)
- ``pmask.pipeline`` the parse pipeline: impacts from an impact source decoded into trees
- ``pmask.eval``     scores, comparisons, sweeps, heatmaps, the HTML report and ``bench``
- ``pmask.cli``      the ``pmask`` command

``pmask.parse(sentences, model=..., decoder=...)`` induces trees in one call.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from pmask.common import display as _display
from pmask.common.version import __version__
from pmask.perturb import probes as _probes  # noqa: F401  registers every probe and metric (torch-free)


def _show(fmt: str) -> Any:
    """A notebook renderer that imports the drawing code (``pmask.eval.display``) on first use."""
    def show(obj: Any) -> Any:
        from pmask.eval.display import render

        return render(obj, fmt)
    return show


for _fmt in _display.FORMATS:   # Parsed, stored impacts, comparisons, sweeps ... draw themselves in notebooks
    _display.connect(_fmt, _show(_fmt))

__all__ = ["__version__", "parse"]


def _as_sentences(sentences: Any, sentence_type: Any) -> list[Any]:
    out = []
    for k, s in enumerate(sentences, start=1):
        if isinstance(s, sentence_type):
            out.append(s)
        else:
            words = s.split() if isinstance(s, str) else [str(w) for w in s]
            out.append(sentence_type(id=str(k), words=words, path="<input>"))
    return out


def parse(sentences: Iterable[Any], *, model: Any = None, decoder: str | None = None,
          layer: int = -1, root: str | None = None, faithful: bool = False, multiroot: bool = False,
          metric: str | None = None, subword: str | None = None, seed: int = 0, device: str = "auto",
          dtype: str = "auto", batch_tokens: int | None = None, progress: bool = False, probe: str = "pair",
          head: str | int | None = None, bias: float = 0.0, symmetrize: str | None = None, absolute: bool = False,
          context: int | None = None) -> list[Any]:
    """Induce a tree for each sentence in one call (also available as ``pmask.parse``).

    Args:
        sentences: whitespace-tokenised strings, word lists, or :class:`~pmask.corpora.Sentence`s.
        model: a hub name, a local directory, ``random:NAME``, or a loaded ``LoadedModel``; not
            needed by the baselines.
        decoder: a name from :data:`pmask.trees.registry.DECODERS` (default eisner; mst-projective with
            ``faithful`` and metric cpmi, Hoover et al.'s pipeline).
        layer: the layer whose impacts are decoded (-1 = last).
        root: "gold" (the gold root word is ROOT's only child) or "free"; default "gold" when every
            sentence carries gold heads, else "free".
        metric, subword: the impact metric and subword policy (default: a bundled model's recorded
            metric, else the probe's own; dist with ``faithful``, as the authors' pipeline; avg).
        probe, head: how impacts are read out of the model (``pmask.common.options.PROBES``; default
            pair) and, for the attention-based probes, which head is decoded (default mean).
        bias: the right-branching bias of the ``distance-split`` decoder.
        symmetrize, absolute: F made symmetric (none, sum, triu, tril; default none, sum with ``faithful``
            and metric cpmi) after ``|F|`` with ``absolute``, before decoding.
        context: words of neighbouring sentences given to the model (sentences read from a file only;
            default 0, 30 with ``faithful`` and metric cpmi).

    Returns:
        One :class:`Parsed` per sentence: ``heads`` (dependency decoders, int array of length n,
        0 = ROOT) or ``tree`` (an ``nltk.Tree``), with ``F`` [n, n], the impacts it was decoded from
        (None for baselines and for sentences too long for the model, whose ``skipped`` says why).

    Example:
        >>> import pmask
        >>> [p.heads.tolist() for p in pmask.parse(["the cat sat"], decoder="right-chain")]
        [[2, 3, 0]]
    """
    from pmask.corpora import Sentence
    from pmask.perturb.engine.impact_settings import ImpactSettings
    from pmask.perturb.fill.model_spec import ModelSpec
    from pmask.perturb.source import ImpactSource
    from pmask.pipeline.induce import ParseSettings, check_settings, parse_sentences
    from pmask.trees.registry import decoding_defaults, get_decoder

    if isinstance(sentences, str):   # a bare string is one sentence, not a sequence of one-letter ones
        sentences = [sentences]
    sents = _as_sentences(sentences, Sentence)
    if root is None:
        root = "gold" if sents and all(s.heads for s in sents) else "free"
    decoder, symmetrize = decoding_defaults(metric if faithful else None, decoder, symmetrize, "eisner")
    settings = ParseSettings(decoder=str(decoder), layer=layer, root=root, faithful=faithful, multiroot=multiroot,
                             seed=seed, bias=bias, symmetrize=symmetrize, absolute=absolute)
    check_settings(settings, sents, probe)
    impacts = None
    if get_decoder(settings.decoder).needs_model:
        loaded = None if model is None or isinstance(model, str) else model
        spec = ModelSpec(model if isinstance(model, str) or model is None else None,
                         impact=ImpactSettings(metric, subword, None, probe, context), device=device, dtype=dtype,
                         batch_tokens=batch_tokens, head=head)
        spec = spec.resolve(faithful=faithful, name=loaded is None)   # no model given: the bundled model
        source = ImpactSource(sents, Path("<input>"), model=spec, progress=progress, loaded_model=loaded)
        impacts = source.impacts(layer, include_cls=faithful)
    return list(parse_sentences(sents, impacts, settings))


