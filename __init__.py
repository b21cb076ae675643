"""pmask: induce syntax from masked language models with Perturbed Masking (Wu et al., ACL 2020).

The package is six wings over shared basics, each importing only the ones before it:

- ``pmask.common``   errors, every named setting (``options``), outputs that behave like shell redirection
- ``pmask.corpora``  read and write treebanks and text; head maps, bracket strings, provenance records
- ``pmask.perturb``  models, the impact engine, its on-disk store, impact sources (store or model)
- ``pmask.trees``    decoders and baselines (independent of ``pmask.perturb``)
- ``pmask.pipeline`` the parse pipeline: impacts from an impact source decoded into trees
- ``pmask.eval``     scores, comparisons, sweeps, heatmaps, the HTML report and ``bench``
- ``pmask.cli``      the ``pmask`` command

``pmask.parse(sentences, model=..., decoder=...)`` induces trees in one call, ``pmask.impacts`` gives
the impact matrices, ``pmask.sweep`` scores every layer, ``pmask.evaluate`` scores a prediction file
and ``pmask.estimate`` says what a run would compute, before any weights load; they take the commands'
defaults (one request, resolved in :mod:`pmask.pipeline.request`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Sequence

from pmask.common import display as _display
from pmask.common.version import __version__
from pmask.perturb import alignment as _alignment  # noqa: F401  registers every tokenisation mode (torch-free)
from pmask.perturb import encoders as _encoders  # noqa: F401  registers every model family (torch-free)
from pmask.perturb import probes as _probes  # noqa: F401  registers every probe and metric (torch-free)
from pmask.perturb.engine import documents as _documents  # noqa: F401  registers the unit edu (torch-free)
from pmask.perturb.engine import impact_settings as _impact_settings


def _show(fmt: str) -> Any:
    """A notebook renderer that imports the drawing code (``pmask.eval.display``) on first use."""
    def show(obj: Any) -> Any:
        from pmask.eval.display import render

        return render(obj, fmt)
    return show


for _fmt in _display.FORMATS:   # Parsed, stored impacts, comparisons, sweeps ... draw themselves in notebooks
    _display.connect(_fmt, _show(_fmt))


def _impact_choice(model: str, unit: str, given: Any) -> Any:
    """What ``pmask impact`` chooses for the settings left out (``pmask.pipeline.request``, imported on first use)."""
    from pmask.pipeline.request import impact_choice

    return impact_choice(model, unit, given)


_impact_settings.connect_resolver(_impact_choice)   # an unfinished store's --resume command spells only the others

__all__ = ["__version__", "estimate", "evaluate", "impacts", "parse", "sweep"]

#: The package's wings (``pmask.eval`` …), public too.
_WINGS = ("cli", "common", "corpora", "eval", "perturb", "pipeline", "trees")


def __dir__() -> list[str]:
    """The public names only (not the typing helpers this module imports): the functions, the version, the wings."""
    return sorted({*__all__, *_WINGS})


def _as_sentences(sentences: Any, unit: str = "word") -> list[Any]:
    """Strings (whitespace-tokenised), word lists or ``Sentence`` objects as ``Sentence`` objects; with
    ``unit="edu"`` documents: EDU lists, or strings of one EDU per line (as a ``.edus`` file's blocks): the
    unit's entry (:class:`pmask.common.units.UnitEntry`) splits a string and says how many units a record needs.

    Example:
        >>> [d.words for d in _as_sentences(["We present a parser\\nthat reads discourse .", ["A", "B c"]], "edu")]
        [['We present a parser', 'that reads discourse .'], ['A', 'B c']]
    """
    from pmask.common.errors import PmaskError
    from pmask.common.labels import either
    from pmask.common.units import UNITS
    from pmask.corpora import Sentence

    if unit not in UNITS:
        raise PmaskError(f"unit must be {either(list(UNITS))}, not {unit!r}")
    entry = UNITS[unit]
    if isinstance(sentences, str):   # a bare string is one sentence, not a sequence of one-letter ones
        sentences = [sentences]
    out = []
    for k, s in enumerate(sentences, start=1):
        if isinstance(s, Sentence):
            out.append(s)
            continue
        units = entry.split(s) if isinstance(s, str) else [str(u).strip() if entry.long else str(u) for u in s]
        empty = next((j for j, u in enumerate(units, start=1) if not u), None)
        if empty is not None or len(units) < entry.least:   # as the readers of such records refuse them
            raise PmaskError(f"<input> ({entry.record} {k}): " + (f"{entry.noun} {empty} has no text" if empty else
                             f"{entry.units(len(units))}; {entry.why_least}"))
        out.append(Sentence(id=str(k), words=units, path="<input>", unit=unit))
    return out


def _request(sentences: Any, model: Any = None, unit: str = "word", **given: Any) -> tuple[Any, list[Any], Any]:
    """The request of an API call as given (the commands build theirs from their arguments with the same
    keywords, :meth:`pmask.pipeline.request.Request.build`), its sentences and the loaded model given, if any.

    Example:
        >>> request, sentences, loaded = _request(["the cat sat"], probe="distortion")
        >>> request.impact.probe, request.decoding.decoder, sentences[0].words, loaded
        ('distortion', None, ['the', 'cat', 'sat'], None)
    """
    from pmask.pipeline.request import Request

    loaded = None if model is None or isinstance(model, str) else model
    name = getattr(loaded, "name", None) if loaded is not None else model   # a loaded model's recorded defaults too
    return Request.build(model=name, **given), _as_sentences(sentences, unit), loaded


def _source(request: Any, sentences: list[Any], loaded: Any, progress: bool) -> Any:
    """The impact source of ``sentences`` (given in the call, not read from a file) with ``request``'s model."""
    from pmask.perturb.source import ImpactSource

    return ImpactSource(sentences, Path("<input>"), model=request.model, progress=progress, loaded_model=loaded)


def _check_fit(request: Any, sentences: list[Any]) -> None:
    """Refuse, before the model loads, records too long for it that are never left out (documents)."""
    from pmask.perturb.fill.estimate import check_fit, computation

    check_fit([computation(request.model, sentences, faithful=request.decoding.faithful)])


def parse(sentences: Iterable[Any], *, model: Any = None, decoder: str | None = None, layer: int = -1,
          root: str | None = None, faithful: bool = False, multiroot: bool = False, metric: str | None = None,
          subword: str | None = None, tokenize: str | None = None, seed: int = 0, device: str = "auto",
          dtype: str = "auto", batch_tokens: int | None = None, threads: int | None = None, progress: bool = False,
          probe: str | None = None, head: str | int | None = None, bias: float = 0.0, symmetrize: str | None = None,
          absolute: bool = False, context: int | None = None, unit: str = "word") -> list[Any]:
    """Induce a tree for each sentence in one call: ``pmask parse`` as a function, with the same defaults
    (both resolve them in :func:`pmask.pipeline.request.resolve`).

    Args:
        sentences: whitespace-tokenised strings, word lists, or :class:`~pmask.corpora.Sentence`s; with
            ``unit="edu"`` documents: lists of EDU texts, or strings of one EDU per line.
        model: a hub name, a local directory, ``random:NAME``, or a loaded ``LoadedModel``; not
            needed by the baselines (default: the bundled ``pmask-tiny-en``).
        decoder: a name from :data:`pmask.trees.registry.DECODERS` (default: the task's, as ``pmask parse``:
            eisner for dependency gold and raw text, mart for bracketed trees, cky for probe distortion;
            under ``faithful`` the authors' pipeline's, mst-projective with metric cpmi).
        layer: the layer whose impacts are decoded (-1 = last).
        root: "gold" (the gold root word is ROOT's only child) or "free"; default "gold" when every
            sentence carries gold heads, else "free".
        metric, subword, tokenize: the impact metric, subword policy and tokenisation (default: the authors'
            pipeline's with ``faithful``, else a bundled model's recorded metric, else the probe's own; the
            metric's subword policy; words).
        probe, head: how impacts are read out of the model (``pmask.common.options.PROBES``; default
            pair) and, for the attention-based probes, which head is decoded (default mean).
        bias: the right-branching bias of the ``distance-split`` decoder.
        symmetrize, absolute: F made symmetric (none, sum, triu, tril; default none, sum with ``faithful``
            and metric cpmi) after ``|F|`` with ``absolute``, before decoding (not for span charts).
        context: words of neighbouring sentences given to the model (sentences read from a file only;
            default 0, 30 with ``faithful`` and metric cpmi).
        seed, multiroot, device, dtype, batch_tokens, threads, progress: as the options of ``pmask parse``.
        unit: "word", or "edu": each item is a document whose units are its EDUs (as read from SciDTB or
            ``.edus``; ``Sentence`` objects keep their own unit).

    Returns:
        One :class:`Parsed` per sentence: ``heads`` (dependency decoders, int array of length n,
        0 = ROOT) or ``tree`` (an ``nltk.Tree``), with ``F`` [n, n], the impacts it was decoded from
        (None for baselines and for sentences too long for the model, whose ``skipped`` says why).

    Example:
        >>> import pmask
        >>> [p.heads.tolist() for p in pmask.parse(["the cat sat"], decoder="right-chain")]
        [[2, 3, 0]]
    """
    from pmask.pipeline.induce import parse_sentences
    from pmask.pipeline.prepare import prepare
    from pmask.trees.registry import get_decoder

    request, sents, loaded = _request(
        sentences, model, random_init=False, device=device, dtype=dtype, batch_tokens=batch_tokens, threads=threads,
        head=head, probe=probe, metric=metric, subword=subword, tokenize=tokenize, context=context, decoder=decoder,
        layers=layer, root=root, faithful=faithful, multiroot=multiroot, seed=seed, bias=bias, symmetrize=symmetrize,
        absolute=absolute, unit=unit)
    source = _source(request, sents, loaded, progress)
    done = prepare(request, source)   # every default chosen, checked before model work
    decoding, found = done.decoding, None
    if get_decoder(str(decoding.decoder)).needs_model:
        _check_fit(done, sents)
        found = source.impacts(decoding.layer, include_cls=decoding.faithful)
    return list(parse_sentences(sents, found, decoding))


def impacts(sentences: Iterable[Any], *, model: Any = None, layers: int | Sequence[int] | str = -1,
            probe: str | None = None, metric: str | None = None, subword: str | None = None,
            tokenize: str | None = None, context: int | None = None, head: str | int | None = None,
            faithful: bool = False, device: str = "auto", dtype: str = "auto", batch_tokens: int | None = None,
            threads: int | None = None, progress: bool = False, unit: str = "word") -> list[Any]:
    """The impacts of each sentence as arrays, with the defaults of ``pmask parse`` (one resolution,
    :func:`pmask.pipeline.request.resolve`).

    Args:
        sentences: whitespace-tokenised strings, word lists, or :class:`~pmask.corpora.Sentence`s.
        layers: one layer (-1 = last) or several (0 = embeddings, negative from the end), or ``"all"``
            (1..L, as ``pmask impact --layers all``).
        model, probe, metric, subword, tokenize, context, head, faithful, device, dtype, batch_tokens, threads,
            progress, unit: as for :func:`parse`.

    Returns:
        Per sentence a float array: ``F`` [n, n] for one layer, [len(layers), n, n] for several
        (``F[i, j]`` = impact of word j on word i; a span chart ``F[l, r - 1]`` for probe distortion), or
        None for a sentence too long for the model.

    Example:
        >>> import pmask
        >>> F, = pmask.impacts(["the cat sat"], model="random:bert-base-uncased")  # doctest: +SKIP
        >>> F.shape  # doctest: +SKIP
        (3, 3)
    """
    import numpy as np

    from pmask.pipeline.prepare import prepare

    one = isinstance(layers, int)
    chosen: list[int] | str = [layers] if isinstance(layers, int) else layers if isinstance(layers, str) \
        else list(layers)   # "all": every layer but 0, known once the model is
    if isinstance(chosen, str) and chosen != "all":   # refused before the model loads, as the commands refuse it
        from pmask.common.errors import LayerError

        raise LayerError(f"layers must be integers or 'all', not {chosen!r}")
    request, sents, loaded = _request(
        sentences, model, device=device, dtype=dtype, batch_tokens=batch_tokens, threads=threads, head=head,
        probe=probe, metric=metric, subword=subword, tokenize=tokenize, context=context, faithful=faithful,
        layers=chosen, unit=unit)
    source = _source(request, sents, loaded, progress)
    _check_fit(prepare(request, source, decodes=False), sents)
    per_layer = source.impacts_by_layers(chosen)
    out = []
    for k in range(len(sents)):
        found = [per_layer[layer][k] for layer in per_layer]
        out.append(None if any(f is None for f in found) else found[0].F if one else np.stack([f.F for f in found]))
    return out


def estimate(sentences: Iterable[Any], *, model: Any = None, probe: str | None = None, metric: str | None = None,
             subword: str | None = None, tokenize: str | None = None, context: int | None = None,
             head: str | int | None = None, faithful: bool = False, batch_tokens: int | None = None,
             unit: str = "word") -> Any:
    """What ``pmask.parse`` or ``pmask.impacts`` of ``sentences`` would compute, and roughly how long it takes,
    known before any weights load (the model's tokenizer and config are read): the cost line the commands say,
    with the same defaults (:func:`pmask.pipeline.request.resolve`) and the same refusals.

    Args:
        sentences, model, probe, metric, subword, tokenize, context, head, faithful, batch_tokens, unit: as for
            :func:`parse` (``faithful``: the authors' texts and [CLS] layout, as ``parse(faithful=True)`` computes).

    Returns:
        A :class:`pmask.perturb.probes.cost.Estimate`: ``sentences`` (the records computed), ``sequences`` and
        ``tokens`` (exact), ``seconds`` (rough, on this machine), ``record`` ("sentence" or "document") and
        ``too_long`` (the ids of the sentences longer than the model, which are left out); ``describe()`` is
        the line ``pmask parse`` says.

    Raises:
        PmaskError: settings that cannot work (as :func:`parse` refuses them), or documents longer than the
            model, which are never left out.

    Example:
        >>> import pmask
        >>> cost = pmask.estimate(["the cat sat"], model="random:bert-base-uncased")  # doctest: +SKIP
        >>> cost.sequences, cost.describe()[:22]  # doctest: +SKIP
        (7, '1 sentence to compute:')
    """
    from pmask.perturb.fill.estimate import computation, estimate_cost
    from pmask.pipeline.prepare import prepare

    request, sents, loaded = _request(sentences, model, batch_tokens=batch_tokens, head=head, probe=probe,
                                      metric=metric, subword=subword, tokenize=tokenize, context=context,
                                      faithful=faithful, unit=unit)
    done = prepare(request, _source(request, sents, loaded, False), decodes=False)
    return estimate_cost([computation(done.model, sents, faithful=faithful)])


def sweep(corpus: str | Path, *, model: str | None = None, probes: str | Sequence[str] | None = None,
          layers: Sequence[int] | str = "all", decoder: str | None = None, root: str | None = None,
          faithful: bool = False, metric: str | None = None, subword: str | None = None, tokenize: str | None = None,
          context: int | None = None, head: str | int | None = None, seed: int = 0, bias: float = 0.0,
          symmetrize: str | None = None, absolute: bool = False, punct: str = "include", baselines: bool = False,
          format: str = "auto", limit: int | None = None, max_words: int | None = None, device: str = "auto",
          dtype: str = "auto", batch_tokens: int | None = None, threads: int | None = None,
          progress: bool = False) -> Any:
    """Score every layer against the gold trees of ``corpus``: ``pmask sweep`` as a function, with its defaults.

    Args:
        corpus: a gold corpus (CoNLL-U, .dp or PTB) or a store made from one.
        probes: one probe, or several (comma-separated or a list; one column each); default pair, or a
            store's own.
        format, limit, max_words: how the corpus is read (as ``--format``, ``--limit``, ``--max-words``).
        punct, baselines: score punctuation ("include") or not; also score every baseline.
        model, layers, decoder, root, faithful, metric, subword, tokenize, context, head, seed, bias,
            symmetrize, absolute, device, dtype, batch_tokens, threads, progress: as for :func:`parse`.

    Returns:
        A :class:`pmask.eval.studies.sweep.SweepResult` (``.sweep.to_markdown()``, ``.to_pandas()``, ``.plot(path)``).

    Example:
        >>> import pmask
        >>> result = pmask.sweep("en_pud-ud-test.conllu", model="bert-base-uncased", limit=50)  # doctest: +SKIP
    """
    from pmask.common.options import split_probes
    from pmask.corpora.corpus_spec import CorpusSpec
    from pmask.eval.studies.sweep import sweep_probes
    from pmask.pipeline.request import Request

    several = split_probes(probes) if probes is not None else None
    spec = CorpusSpec(Path(corpus), format, limit=limit, max_words=max_words)
    request = Request.build(
        model=model, device=device, dtype=dtype, batch_tokens=batch_tokens, threads=threads, head=head,
        probe=several[0] if several and len(several) == 1 else None, metric=metric, subword=subword,
        tokenize=tokenize, context=context, decoder=decoder, layers=layers, root=root, faithful=faithful, seed=seed,
        bias=bias, symmetrize=symmetrize, absolute=absolute, corpus=spec)
    return sweep_probes(request, several, progress=progress, punct=punct, baselines=baselines)


def evaluate(pred: str | Path, gold: str | Path, *, punct: str = "include", baselines: bool = False,
             root: str | None = None, seed: int = 0, max_words: int | None = None, subtypes: bool = False,
             scores: Sequence[str] = ()) -> Any:
    """Score a prediction file against its gold trees: ``pmask eval`` as a function, with its defaults.

    Args:
        pred: the prediction (``pmask parse``'s output: CoNLL-U, SciDTB, or bracketed trees one per line); the
            ``.meta.json`` beside it names its row and gives the baselines' root and the corpus's ``max_words``.
        gold: the gold corpus (CoNLL-U, .dp, PTB .mrg file or folder, SciDTB).
        punct: "include" or "exclude" punctuation words (dependencies).
        baselines: also score every baseline of the task on the same sentences.
        root, max_words: the baselines' root mode and the gold filter (default: what the prediction recorded).
        seed: the random baselines' seed.
        subtypes: keep relation subtypes apart in the breakdown by relation (``nmod:poss``).
        scores: optional scores by name (``pmask eval --score NAME``), e.g. ``["hoover_uuas"]``: Hoover et al.'s
            UUAS (dependencies).

    Returns:
        A :class:`pmask.eval.comparison.compare.Evaluation`: ``score`` (``.uas``, ``.uuas`` / ``.f1_sentence``),
        ``baselines``, ``to_pandas()``, ``write_json(path)``; ``print()`` shows the comparison.

    Example:
        >>> import pmask
        >>> result = pmask.evaluate("pred.conllu", "en_pud-ud-test.conllu", baselines=True)  # doctest: +SKIP
        >>> round(result.score.uas, 2), sorted(result.baselines)  # doctest: +SKIP
    """
    from pmask.eval.comparison.compare import evaluate_files

    return evaluate_files(Path(pred), Path(gold), punct=punct, baselines=baselines, root=root, seed=seed,
                          max_words=max_words, subtypes=subtypes, scores=scores)
