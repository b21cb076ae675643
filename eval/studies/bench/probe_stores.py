"""``pmask bench`` with several probes: one store per treebank and probe, and an honest "best head".

Stores: the pair probe keeps ``OUTDIR/stores/<treebank>`` (so older bench folders are reused as
they are); every other probe gets ``OUTDIR/stores/<treebank>.<probe>``. A bench of several metrics
(``--metrics``) adds ``.<metric>`` to each name (a store records one metric).

Best head (probes that keep every attention head: ``attention``, ``distance`` with ``jsd`` or
``hellinger``): choosing one head out of L × H on the sentences it is then scored on flatters
the probe, so the (layer, head) with the best score by the decoder's headline (UAS; UUAS for an
undirected decoder; sentence-level F1: :func:`pmask.eval.scores.columns.decoder_headline`) is
chosen on the sentences at EVEN positions of the treebank (0, 2, 4, … of the sentences read,
after ``--limit``) and reported on those at ODD positions (1, 3, 5, …), next to the reference
baseline (right-chain; connect-adjacent for an undirected decoder; right-branching) scored on the
same odd half. Ties go to the lower
layer, then the lower head.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from pmask.common.options import first_probe
from pmask.eval.scores.columns import decoder_headline
from pmask.trees.tasks import task_entry

#: How the best-head rows say where the head was chosen and where it was scored.
CHOSEN_ON = "even positions (0, 2, 4, ...)"
REPORTED_ON = "odd positions (1, 3, 5, ...)"


def split_halves(n: int) -> tuple[list[int], list[int]]:
    """The fixed split of ``n`` sentence positions: even positions (0, 2, 4, …) choose, odd ones
    (1, 3, 5, …) report. Deterministic, needs no seed, and interleaves long and short stretches
    of a treebank.

    Example:
        >>> split_halves(5)
        ([0, 2, 4], [1, 3])
    """
    return list(range(0, n, 2)), list(range(1, n, 2))


def pick(items: Sequence[Any], positions: Sequence[int]) -> list[Any]:
    """``items`` at ``positions``, in that order."""
    return [items[k] for k in positions]


def store_dir(out_dir: Path, treebank: str, probe: str, metric: str | None = None, faithful: bool = False) -> Path:
    """Where ``bench`` keeps the impacts of ``treebank`` under ``probe`` (and ``metric``, when a bench
    runs several metrics: ``<treebank>.<metric>`` for pair, ``<treebank>.<probe>.<metric>`` else); an authors'
    pipeline's (``bench --faithful``) with ``.faithful`` added, so that a clean store never serves a faithful
    row, nor the other way round.

    Example:
        >>> store_dir(Path("out"), "pud", "pair", "cpmi", faithful=True).as_posix()
        'out/stores/pud.cpmi.faithful'
    """
    name = treebank if probe == first_probe() else f"{treebank}.{probe}"
    name = name if metric is None else f"{name}.{metric}"
    return Path(out_dir) / "stores" / (f"{name}.faithful" if faithful else name)


def best_heads(tb: Any, store: Any, settings: Any, probe: str, layers: Sequence[int],
               decoders: Sequence[str]) -> list[dict[str, Any]]:
    """One row per decoder: the (layer, head) chosen on the even half, scored on the odd half.

    Args:
        tb: the treebank (``pmask.eval.studies.bench.treebanks.Treebank``).
        store: its opened store for ``probe`` (one that keeps every head).
        settings: the ``BenchSettings`` (root, punct, seed, bias).
        probe: the probe's name.
        layers: the layers scored.
        decoders: the decoders scored.

    Returns:
        Rows ``{treebank, language, probe, decoder, root, layer, head, choose_score, score, scored_by (the
        score: uas, uuas or f1_sentence), sentences,
        baseline, baseline_score, margin, chosen_on, reported_on}``.
    """
    from pmask.eval.studies.bench import scoring as sc
    from pmask.perturb.fill.model_spec import ModelSpec
    from pmask.perturb.source import ImpactSource
    from pmask.trees.registry import get_decoder

    if len(tb.sentences) < 2:   # no sentence to report on
        return []
    choose, report = split_halves(len(tb.sentences))
    chosen_sents, report_sents = pick(tb.sentences, choose), pick(tb.sentences, report)
    grid: dict[str, dict[tuple[int, int], float]] = {d: {} for d in decoders}   # decoder -> (layer, head) -> score
    for head in range(int(store.heads)):
        source = ImpactSource(list(tb.sentences), tb.path, store=store, model=ModelSpec(head=head))
        per_layer = source.impacts_by_layers(list(layers))
        for layer in layers:
            for decoder in decoders:
                score, golds = _score(sc, chosen_sents, pick(per_layer[layer], choose), decoder, layer, settings)
                grid[decoder][layer, head] = sc.summary(score, golds)[decoder_headline(decoder)]
    rows = []
    for decoder in decoders:
        scores = grid[decoder]
        layer, head = max(scores, key=lambda lh: (scores[lh], -lh[0], -lh[1]))   # ties: lower layer, then head
        value = scores[layer, head]
        source = ImpactSource(list(tb.sentences), tb.path, store=store, model=ModelSpec(head=head))
        impacts = source.impacts_by_layers([layer])[layer]
        score, golds = _score(sc, report_sents, pick(impacts, report), decoder, layer, settings)
        reported, key, undirected = sc.summary(score, golds), decoder_headline(decoder), get_decoder(decoder).undirected
        name = task_entry(tb.task).reference(undirected)
        baselines = sc.score_baselines(golds, tb.task, root=settings.root, punct=settings.punct, seed=settings.seed,
                                       undirected=undirected) if golds else {}
        base = sc.summary(baselines[name], golds)[key] if golds else None
        rows.append({"treebank": tb.name, "language": tb.language, "probe": probe, "decoder": decoder,
                     "root": settings.root if "root" in task_entry(tb.task).settings else None, "layer": layer,
                     "head": head,
                     "choose_score": value, "score": reported[key], "scored_by": key,
                     "sentences": reported["sentences"],
                     "baseline": name, "baseline_score": base, "margin": None if base is None else reported[key] - base,
                     "chosen_on": CHOSEN_ON, "reported_on": REPORTED_ON})
    return rows


def _score(sc: Any, sentences: Sequence[Any], impacts: Sequence[Any], decoder: str, layer: int,
           settings: Any) -> tuple[Any, list[Any]]:
    from pmask.pipeline.decoding import Decoding

    decoding = Decoding(decoder, layer, settings.root, False, False, settings.seed, settings.bias, settings.symmetrize,
                        settings.absolute)   # the bench's decoding, resolved with its treebanks (resolve_decoding)
    return sc.score_decoder(sentences, impacts, decoding, punct=settings.punct)
