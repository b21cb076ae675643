"""The data behind ``pmask report``: scores, breakdowns and sentences as plain JSON-able dicts.

Everything the page shows is computed here, in Python, with the library's scorers; the page's
script only draws it. :func:`load_inputs` is the one place that calls into ``pmask.eval.comparison.compare``
and the corpus readers, so a refactoring there needs a change in one function only.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from pmask.common.errors import CorpusError, PmaskError
from pmask.common.labels import absolute_layer, probe_label
from pmask.common.options import PUNCT_MODES, check_choice
from pmask.common.units import unit_entry, unit_of
from pmask.corpora.provenance import read_provenance, recorded_impact
from pmask.corpora.sentence import NO_HEAD
from pmask.eval.comparison.compare import evaluate_files
from pmask.eval.scores.dependency_score import (
    SENTENCE_LENGTH_BUCKETS,
    relation_key,
    relation_title,
    sentence_length_bucket,
)
from pmask.eval.scores.percent import percent
from pmask.trees.tasks import task_entry

logger = logging.getLogger(__name__)


@dataclass
class ReportInputs:
    """A scored prediction with its aligned sentences.

    ``pairs`` are (prediction, gold sentence): for dependencies the prediction is a Sentence with
    ``heads``, for constituency an ``nltk.Tree``. ``evaluation`` is the library's Evaluation (its
    ``table`` is the ``eval --baselines`` comparison), ``meta`` the prediction's ``.meta.json``;
    ``notes`` are lines the Summary shows under its table.
    """

    task: str
    pairs: list[tuple[Any, Any]]
    evaluation: Any
    meta: dict[str, Any] = field(default_factory=dict)
    punct: str = "include"
    notes: list[str] = field(default_factory=list)


def load_inputs(pred: Path, gold: Path, *, punct: str = "include", seed: int = 0,
                max_words: int | None = None) -> ReportInputs:
    """Score ``pred`` against ``gold`` with every baseline and pair up the sentences (the adapter).

    The trees of an undirected decoder are scored by Hoover et al.'s UUAS too (prediction and baselines),
    the figure their CPMI trees are published with; a gold without UPOS tags, which it needs, leaves it
    out with a note.

    Args:
        pred: a CoNLL-U prediction (``pmask parse``) or a bracket file, one tree per line.
        gold: the gold CoNLL-U file, or PTB file/directory for brackets.
        punct: "include" or "exclude" punctuation words from the scores.
        seed: seed of the random baselines.
        max_words: only sentences of at most this many words (``evaluate_files``; default: the
            prediction's own filter from its meta.json).
    Returns:
        A :class:`ReportInputs`.
    Example:
        >>> inputs = load_inputs(Path("pud.conllu"), Path("en_pud-ud-test.conllu"))
        >>> inputs.task, len(inputs.pairs), inputs.evaluation.table.rows[1].name
        ('dependency', 3, 'right-chain')
    """
    check_choice("punct", punct, PUNCT_MODES)
    pred, gold = Path(pred), Path(gold)
    provenance = read_provenance(pred)
    meta = provenance.to_dict() if provenance is not None else {}
    notes = []
    try:   # max_words=None: meta.json's
        evaluation = evaluate_files(pred, gold, punct=punct, baselines=True, seed=seed, max_words=max_words,
                                    scores=("hoover_uuas",) if undirected(meta) else ())
    except CorpusError as err:
        if not undirected(meta):
            raise
        # scored again without it: a gold fault that is not Hoover's (no UPOS tags) fails again, and is raised
        evaluation = evaluate_files(pred, gold, punct=punct, baselines=True, seed=seed, max_words=max_words)
        notes.append(f"Hoover UUAS not computed: {err}")
        logger.warning("%s", notes[-1])
    if not evaluation.pairs:
        raise PmaskError(f"{pred}: no predicted sentence to report on")
    return ReportInputs(task=evaluation.task, pairs=evaluation.pairs, evaluation=evaluation, meta=meta, punct=punct,
                        notes=notes)


def _cell(correct: float, total: float) -> dict[str, Any]:
    return {"correct": correct, "total": total, "accuracy": percent(correct, total)}


def _punct(gold: Any, mode: str) -> list[bool]:
    from pmask.eval.scores.punct import punct_mask

    return punct_mask(gold) if mode == "exclude" else [False] * len(gold.words)


def found_arcs(pred_heads: Sequence[int], gold_heads: Sequence[int], *, undirected: bool = False) -> list[bool]:
    """Whether the prediction has each gold arc (word k, its gold head): the same head, or, for undirected
    trees, the same edge in either direction (ROOT edges included, as UUAS counts them).

    Example:
        >>> found_arcs([0, 1], [2, 0]), found_arcs([0, 1], [2, 0], undirected=True)
        ([False, False], [True, False])
    """
    if not undirected:
        return [p == g != NO_HEAD for p, g in zip(pred_heads, gold_heads)]
    edges = {frozenset((d, h)) for d, h in enumerate(pred_heads, start=1) if h != NO_HEAD}
    return [g != NO_HEAD and frozenset((k, g)) in edges for k, g in enumerate(gold_heads, start=1)]


def length_direction(pairs: Sequence[tuple[Any, Any]], punct: str, *, undirected: bool = False
                     ) -> list[dict[str, Any]]:
    """Accuracy by gold arc length bucket and direction ("head left" = the head precedes the word): the
    scored words' gold arcs that the prediction has (:func:`found_arcs`, undirected edges for ``undirected``).

    Returns:
        Rows ``{"label", "direction", "correct", "total", "accuracy"}`` in bucket order.
    """
    from pmask.eval.scores.dependency_score import LENGTH_BUCKETS, length_bucket

    counts: dict[tuple[str, str], list[int]] = {}
    for pred, gold in pairs:
        skip = _punct(gold, punct)
        found = found_arcs(pred.heads, gold.heads, undirected=undirected)
        for k, g in enumerate(gold.heads, start=1):
            if skip[k - 1]:
                continue
            direction = "root" if g == 0 else ("head left" if g < k else "head right")
            cell = counts.setdefault((length_bucket(k, g), direction), [0, 0])
            cell[0] += found[k - 1]
            cell[1] += 1
    order = {b: i for i, b in enumerate(LENGTH_BUCKETS)}
    keys = sorted(counts, key=lambda kd: (order.get(kd[0], 99), kd[1]))
    return [{"label": b, "direction": d, **_cell(*counts[(b, d)])} for b, d in keys]


def undirected_relations(pairs: Sequence[tuple[Any, Any]], punct: str, *, subtypes: bool = False
                         ) -> list[dict[str, Any]]:
    """UUAS by gold relation: the scored words' gold arcs found as undirected edges (:func:`found_arcs`),
    most frequent relation first, as :meth:`~pmask.eval.scores.dependency_score.DependencyScore.by_relation`
    orders and keys them.

    Returns:
        Rows ``{"label", "correct", "total", "accuracy"}``.
    """
    counts: dict[str, list[int]] = {}
    for pred, gold in pairs:
        if gold.deprels is None:
            continue
        skip = _punct(gold, punct)
        found = found_arcs(pred.heads, gold.heads, undirected=True)
        for k, rel in enumerate(gold.deprels):
            if not skip[k]:
                cell = counts.setdefault(relation_key(rel, subtypes=subtypes), [0, 0])
                cell[0] += found[k]
                cell[1] += 1
    return [{"label": r, **_cell(*counts[r])} for r in sorted(counts, key=lambda r: (-counts[r][1], r))]


def by_sentence_length(lengths: Sequence[int], correct: Sequence[float], totals: Sequence[float]
                       ) -> list[dict[str, Any]]:
    """Micro-averaged score by sentence length bucket (words): rows ``{"label", "correct", "total", "accuracy"}``."""
    cells: dict[str, list[float]] = {}
    for n, c, t in zip(lengths, correct, totals):
        cell = cells.setdefault(sentence_length_bucket(n), [0, 0])
        cell[0] += c
        cell[1] += t
    labels = [sentence_length_bucket(hi or lo) for lo, hi in SENTENCE_LENGTH_BUCKETS]
    return [{"label": b, **_cell(*cells[b])} for b in labels if b in cells]


def headline(meta: dict[str, Any], task: str) -> str:
    """The score the report is built around: its decoder's (UUAS for undirected trees), else the task's."""
    from pmask.common.errors import PmaskError
    from pmask.eval.scores.columns import decoder_headline, headline_key

    decoder = (meta.get("settings") or {}).get("decoder")
    try:
        return decoder_headline(decoder) if decoder else headline_key(task)
    except PmaskError:   # a decoder this version does not know
        return headline_key(task)


def undirected(meta: dict[str, Any]) -> bool:
    """Whether the prediction's decoder (from its meta.json) makes undirected trees (judged by UUAS)."""
    from pmask.trees.registry import DECODERS

    entry = DECODERS.get((meta.get("settings") or {}).get("decoder") or "")
    return bool(entry is not None and entry.undirected)


def dependency_sentences(inputs: ReportInputs) -> list[dict[str, Any]]:
    """One dict per sentence: id, words, predicted and gold heads, gold relations and scores (``score`` is
    the report's headline: UUAS for an undirected decoder's trees)."""
    undirected_trees = undirected(inputs.meta)
    out = []
    for (pred, gold), s in zip(inputs.pairs, inputs.evaluation.score.per_sentence):
        out.append({"id": gold.id, "words": list(gold.words), "pred": [int(h) for h in pred.heads],
                    "gold": [int(h) for h in gold.heads], "rel": list(gold.deprels or []),
                    "score": round(s.uuas if undirected_trees else s.uas, 2), "uuas": round(s.uuas, 2),
                    "correct": s.correct_undirected if undirected_trees else s.correct, "scored": s.n,
                    **({"labels": unit_entry(gold.unit).labels(gold.words)} if unit_entry(gold.unit).long else {})})
    return out


def dependency_breakdowns(inputs: ReportInputs, sentences: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The "where it fails" tables: by universal relation, arc length and direction, sentence length; UUAS
    (a gold arc found as an edge in either direction) for an undirected decoder's trees, else UAS."""
    score = inputs.evaluation.score
    subtypes = inputs.evaluation.subtypes
    undirected_trees = undirected(inputs.meta)
    name = "UUAS" if undirected_trees else "UAS"
    relations = (undirected_relations(inputs.pairs, inputs.punct, subtypes=subtypes) if undirected_trees else
                 [{"label": r, **_cell(int(v["correct"]), int(v["total"]))}
                  for r, v in score.by_relation(subtypes=subtypes).items()])
    first = inputs.pairs[0][1] if inputs.pairs else None   # a corpus is sentences of words or documents of EDUs
    entry = unit_of([first] if first is not None else [])
    record, unit = entry.record, entry.noun
    lengths = by_sentence_length([len(s["words"]) for s in sentences], [s["correct"] for s in sentences],
                                 [s["scored"] for s in sentences])
    return [
        {"id": "by-relation", "title": f"{name} by {relation_title(subtypes)}", "key": "relation",
         "rows": relations},
        {"id": "by-arc-length", "title": f"{name} by gold arc length and direction", "key": "length",
         "rows": length_direction(inputs.pairs, inputs.punct, undirected=undirected_trees)},
        {"id": "by-sentence-length", "title": f"{name} by {record} length ({unit}s)", "key": "words", "rows": lengths},
    ]


def punct_note(task: str, punct: str) -> str:
    """How punctuation was treated, in words for the summary.

    Dependency scores follow ``punct`` (:func:`pmask.eval.scores.punct.punct_mask` says which words are
    punctuation). Constituency trees hold no punctuation whatever ``punct`` says: the PTB reader
    keeps only leaves with a word tag (:data:`pmask.corpora.ptb.WORD_TAGS`), in the gold trees and so
    in the predicted ones, which must have the same words.
    """
    entry = task_entry(task)
    if "punct" not in entry.scoring:
        return entry.punctuation
    if punct == "exclude":
        return "not scored (--punct exclude: words tagged PUNCT or SYM, or with a PTB punctuation tag)"
    return "scored (--punct include, the paper's setting)"


def summary(inputs: ReportInputs, *, gold: Path) -> dict[str, Any]:
    """The comparison table (prediction first, then every baseline), its columns (the headline first) and
    their labels, settings, checksums and notes."""
    from pmask.common.files import sha256_file
    from pmask.eval.scores.columns import label

    table = json.loads(inputs.evaluation.table.to_json())
    first = headline(inputs.meta, inputs.task)
    scores = [first, *(k for k in inputs.evaluation.table.score_keys() if k != first)]
    words = {"total": label("words")} if task_entry(inputs.task).per_word else {}   # a score of words counts them
    counts = {**words, "sentences": label("sentences")}
    meta = inputs.meta
    settings = dict(meta.get("settings") or {})
    model = meta.get("model") or {}
    impact = meta.get("impact") or {}
    corpus = meta.get("corpus") or {}
    gold = Path(gold)
    return {
        "table": table,
        "task": inputs.task,
        "settings": {"model": model.get("name"),
                     "layer": absolute_layer(settings.get("layer"), model.get("num_layers")),
                     "decoder": settings.get("decoder"),
                     "root": settings.get("root"),
                     "probe": probe_label({**impact, "probe": recorded_impact(impact)["probe"]}) if impact else None,
                     "metric": impact.get("metric"), "subword": impact.get("subword"),
                     "punct": punct_note(inputs.task, inputs.punct),
                     **{key: settings.get(key, impact.get(key)) for key in ("context", "tokenize", "symmetrize",
                                                                            "absolute")
                        if settings.get(key, impact.get(key)) is not None}},
        "headline": first,
        "columns": [*scores, *counts],
        "labels": {**{key: label(key) for key in scores}, **counts},
        "notes": list(inputs.notes),
        "corpus": {"path": corpus.get("path"), "sha256": corpus.get("sha256"), "limit": corpus.get("limit"),
                   "max_words": corpus.get("max_words"), "gold": str(gold),
                   "gold_sha256": sha256_file(gold) if gold.is_file() else None},
        "sentences": len(inputs.pairs),
    }
