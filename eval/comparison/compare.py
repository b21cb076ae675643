"""Score predicted trees against gold, next to the uninformed baselines on the same sentences.

The library behind ``pmask eval``: predictions and gold are aligned by sentence id (or by order
when the prediction has no ids), their words must agree, and every baseline is decoded on the
very sentences that were predicted. Each row (the prediction, each baseline) holds every score of
the task that :data:`pmask.eval.scores.columns.SCORES` lists, optional ones when asked
(:class:`~pmask.eval.scores.score_set.ScoreSet`, filled by :func:`score_pairs`).
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence, cast

from pmask.common.display import RichDisplay
from pmask.common.errors import PmaskError, SettingError
from pmask.common.files import atomic_write, sha256_file
from pmask.common.labels import plural
from pmask.common.options import PUNCT_MODES
from pmask.common.units import unit_entry, unit_of
from pmask.corpora import STDIN, Sentence
from pmask.corpora.provenance import Provenance, read_provenance
from pmask.eval.comparison.prediction import STDIN_PREDICTION, check_scored, gold_filter, read_gold, read_prediction
from pmask.eval.comparison.tables import Comparison, ComparisonRow
from pmask.eval.scores.columns import check_asked
from pmask.eval.scores.dependency_score import check_same_words, relation_title
from pmask.eval.scores.punct import punct_mask
from pmask.eval.scores.score_set import ScoreSet
from pmask.pipeline.induce import parse_sentences
from pmask.trees.registry import DecodeInput, decode, decoder_names, decoder_task, discourse_decoders, get_decoder
from pmask.trees.tasks import TaskEntry, task_entry

logger = logging.getLogger(__name__)

__all__ = ["Evaluation", "align", "baseline_scores", "comparison", "evaluate_files", "read_prediction",
           "score_against_gold", "score_pairs"]


def align(pred: Sequence[Sentence], gold: Sequence[Sentence], pred_name: str, gold_name: str
          ) -> list[tuple[Sentence, Sentence]]:
    """Pair each predicted sentence with its gold sentence (by id when every id is found, else by order)."""
    by_id = {g.id: g for g in gold}
    if all(p.id in by_id for p in pred) and len(by_id) == len(gold):
        pairs = [(p, by_id[p.id]) for p in pred]
    else:
        if len(pred) > len(gold):
            raise PmaskError(f"{pred_name} has {len(pred)} sentences but {gold_name} only {len(gold)}")
        pairs = list(zip(pred, gold))
    for p, g in pairs:
        check_same_words(p.words, g, p.where())
    return pairs


def _mask(gold: Sentence, punct: str):
    if punct == "include":
        return None
    if punct != "exclude":
        raise SettingError(f"{{punct}} must be one of {', '.join(PUNCT_MODES)}, not '{punct}'")
    return punct_mask(gold)


def score_pairs(task: str, pairs: Sequence[tuple[Any, Sentence]], *, punct: str = "include",
                scores: Sequence[str] = ()) -> ScoreSet:
    """Every score of ``task`` (optional ones named in ``scores``) of the predictions of ``pairs``
    (predicted heads or tree, gold sentence); ``punct`` as in :func:`evaluate_files`.

    Example:
        >>> from pmask.corpora import Sentence
        >>> gold = Sentence(id="s1", words=["a", "b", "c"], heads=[2, 3, 0], path="g.conllu")
        >>> round(score_pairs("dependency", [([2, 0, 2], gold)]).uas, 2)
        33.33
    """
    row = ScoreSet.of(task, scores)
    for pred, gold in pairs:
        row.add_sentence(pred, gold, punct_mask=_mask(gold, punct))
    return row


def _baseline_input(task: str, gold: Sentence, root: str | None, seed: int, faithful: bool = False) -> DecodeInput:
    """What a baseline decodes for ``gold``: its words, the gold root (root="gold", dependency), a seed,
    its non-punctuation words (as ``parse`` gives them; connect-adjacent joins those), and whether its unit's
    faithful decoding is Wu et al.'s discourse pipeline (``faithful`` on documents: their chains, the last EDU
    left out)."""
    gold_root = root == "gold" and "root" in task_entry(task).settings
    return DecodeInput(words=list(gold.words), root=gold.root if gold_root else None,
                       seed=seed, keep=None if gold.upos is None else [u != "PUNCT" for u in gold.upos],
                       faithful=faithful, discourse=unit_entry(gold.unit).discourse)


def baseline_scores(task: str, golds: Sequence[Sentence], *, root: str | None, punct: str = "include",
                    seed: int = 0, names: Sequence[str] | None = None, scores: Sequence[str] = (),
                    faithful: bool = False) -> dict[str, ScoreSet]:
    """``{name: scores}`` of the ``task``'s baselines run on ``golds`` (default: every baseline of the
    task, as the registry lists them; the random ones seeded per sentence, ``seed`` + its index), each
    with every score of the task (optional ones named in ``scores``); ``punct`` and ``root`` (``"gold"``
    hands the gold root word; None for constituency baselines) apply to dependency baselines.

    Example:
        >>> from pmask.corpora import Sentence
        >>> gold = Sentence(id="s1", words=["a", "b", "c"], heads=[2, 3, 0], path="g.conllu")
        >>> scores = baseline_scores("dependency", [gold], root="gold", names=["right-chain", "left-chain"])
        >>> {name: round(score.uas, 1) for name, score in scores.items()}
        {'right-chain': 100.0, 'left-chain': 33.3}
    """
    names = decoder_names(task, baseline=True) if names is None else names
    out: dict[str, ScoreSet] = {}
    for name in names:
        out[name] = score_pairs(task, [(decode(name, _baseline_input(task, gold, root, seed + index, faithful)), gold)
                                       for index, gold in enumerate(golds)], punct=punct, scores=scores)
    return out


def faithful_baselines(task: str, faithful: bool, golds: Sequence[Sentence]) -> tuple[bool, tuple[str, ...] | None]:
    """Whether the baselines of a prediction decoded with ``faithful`` are Wu et al.'s discourse chains (the
    last EDU dropped), and their names (None: the task's every baseline); ``eval`` and ``sweep`` ask it.

    Example:
        >>> from pmask.corpora import Sentence
        >>> faithful_baselines("dependency", True, [Sentence(id="d", words=["a b", "c"], unit="edu")])
        (True, ('right-chain', 'left-chain'))
    """
    names = tuple(n for n in discourse_decoders() if get_decoder(n).baseline and decoder_task(n) == task)
    if not faithful or not names or not unit_of(golds).discourse:
        return False, None
    return True, names


def comparison(task: str, predicted: Any, baselines: dict[str, Any], *, pred_name: str,
               meta: dict[str, Any] | None = None, settings: dict[str, Any] | None = None,
               unit: str = "word") -> Comparison:
    """A :class:`Comparison` with the prediction first and the baselines after it (``unit``: what the scored
    records are made of, which its count headers say)."""
    rows = [ComparisonRow(name=pred_name, kind="model", metrics=predicted.to_dict(), settings=settings or {})]
    rows += [ComparisonRow(name=name, kind="baseline", metrics=s.to_dict(), settings={})
             for name, s in baselines.items()]
    return Comparison(rows=rows, task=task, meta=meta or {}, unit=unit)   # Comparison checks the task


#: What ``eval --details`` titles each breakdown (the dependency relation's: :func:`relation_title`).
_DETAIL_TITLES = {"arc_length": "by gold arc length", "sentence_length": "by sentence length (scored words)",
                  "span_length": "bracket F1 by span length (words; matched/gold spans, F1, precision, recall)",
                  "label": "recall of gold spans by gold label (found/gold spans, recall)"}


def _detail_line(key: str, cell: dict[str, Any], width: int) -> str:
    """One bucket of a breakdown: ``correct/total accuracy``, or for a cell of F1 ``matched/gold F1 P R``."""
    line = f"  {key:>{width}}  {cell['correct']:>6}/{cell['total']:<6} "
    if "f1" in cell:
        return line + (f"F1 {cell['f1']:6.2f}  P {cell['precision']:6.2f}  R {cell['recall']:6.2f}  "
                       f"({cell['pred']} predicted)")
    return line + f"{cell['accuracy']:6.2f}"


@dataclass(repr=False)   # a short summary (__repr__), not every sentence pair
class Evaluation(RichDisplay):
    """A scored prediction file: its scores, the baselines' and the comparison table (which a
    notebook shows). ``score`` and each baseline's are a :class:`ScoreSet`: every score of the task
    (optional ones when asked), read as the task's own score (``score.uas``, ``score.per_sentence``).
    ``subtypes``: whether its relation breakdown keeps subtypes (``nmod:poss``) or, by default,
    counts them under their universal relation (``nmod``)."""

    task: str                                   # the name of its task (pmask.trees.tasks.TASKS)
    name: str                                   # the prediction's row name
    score: Any                                  # ScoreSet: DependencyScore or BracketScore, and the others asked
    baselines: dict[str, Any] = field(default_factory=dict)
    table: Comparison | None = None
    pairs: list[tuple[Any, Sentence]] = field(default_factory=list)   # (prediction, gold) of each scored sentence
    subtypes: bool = False

    def breakdowns(self) -> dict[str, dict[str, dict[str, Any]]]:
        """The prediction's breakdowns: dependencies by gold relation, gold arc length and sentence
        length, each bucket → {"correct", "total", "accuracy" (%)}; brackets by span length (bucket →
        {"correct", "total", "pred", "precision", "recall", "f1"}) and by gold label (recall)."""
        return self.score.breakdowns(subtypes=self.subtypes)

    def to_dict(self) -> dict[str, Any]:
        """The prediction's scores under plain top-level keys (``uas``, ``uuas`` / ``f1_sentence``,
        ``f1_corpus``, ``precision``, ``recall``, any optional score asked, plus counts), then every row,
        the metadata, each baseline's scores, for dependencies ``relation_subtypes``, the ``breakdowns``
        that ``eval --details`` prints (:meth:`breakdowns`), and the per-sentence results."""
        assert self.table is not None   # evaluate_files always builds the table
        breakdowns = self.breakdowns()
        details: dict[str, Any] = {"relation_subtypes": self.subtypes} if "relation" in breakdowns else {}
        details["breakdowns"] = breakdowns
        return {**self.score.to_dict(), "name": self.name, **json.loads(self.table.to_json()),
                "baselines": {k: v.to_dict() for k, v in self.baselines.items()}, **details,
                "per_sentence": [p.to_dict() for p in self.score.per_sentence]}

    def write_json(self, path: str | Path) -> Path:
        """Write :meth:`to_dict` as indented JSON."""
        return atomic_write(path, json.dumps(self.to_dict(), indent=2, ensure_ascii=False, default=str) + "\n")

    def details_text(self) -> str:
        """The :meth:`breakdowns` as aligned text lines (``eval --details``): by gold relation, gold arc
        length, sentence length; for brackets by span length and by gold label."""
        unit = unit_of([gold for _, gold in self.pairs])
        titles = {"relation": f"by {relation_title(self.subtypes)}", **_DETAIL_TITLES,
                  "sentence_length": f"by {unit.record} length (scored {unit.noun}s)"}
        lines = []
        for name, rows in self.breakdowns().items():
            width = max([12, *map(len, rows)])   # subtypes such as nmod:unmarked are longer
            lines += ["", f"{titles.get(name, name)}:"]
            lines += [_detail_line(key, row, width) for key, row in rows.items()]
        return "\n".join(lines)

    def to_pandas(self, table: str = "comparison") -> Any:
        """``"comparison"`` (the prediction and the baselines), ``"sentences"``, a breakdown
        (dependencies: ``"relation"``, ``"arc_length"``, ``"sentence_length"``; brackets:
        ``"span_length"``, ``"label"``) or ``"breakdowns"`` (all of them in long form) as a pandas
        ``DataFrame``."""
        from pmask.eval.outputs.frames import evaluation_frame

        return evaluation_frame(self, table)

    def __repr__(self) -> str:
        """What was scored, on how much, and the comparison's scores (a few lines, whatever the corpus size)."""
        scored = getattr(self.score.main, "total", None)   # the words a score counts (punctuation aside), if it does
        words = (plural(scored, "scored word") if scored is not None
                 else plural(sum(len(g.words) for _, g in self.pairs), "word"))
        size = f"{plural(self.score.sentences, 'sentence')}, {words}"
        meta = self.table.meta if self.table is not None else {}
        if meta.get("unscored"):
            size += f" ({meta['unscored']} unscored)"
        head = f"Evaluation ({self.task}) of {self.name}: {size}; gold {meta.get('gold', '?')}"
        return "\n".join([head, *(self.table.row_lines() if self.table is not None else [])])


def _tree(entry: TaskEntry, prediction: Any) -> Any:
    """The predicted tree of one item of a prediction file: a sentence's tree where the task's predictions are read
    through a corpus format (sentences), else the item itself (a tree of the task's own reader)."""
    return entry.tree_of(prediction) if entry.read is None else prediction


def _length(entry: TaskEntry, prediction: Any) -> int:
    """The words of one item of a prediction file (a sentence's, or a tree's leaves)."""
    return len(prediction.words) if entry.read is None else len(prediction.leaves())


def _pair_sentences(entry: TaskEntry, pred: list[Sentence], gold: list[Sentence], pred_name: str, gold_path: Path
                    ) -> list[tuple[Sentence | None, Sentence]]:
    """(prediction, gold) of every predicted sentence (by id, else by order); the prediction is None where it has
    no tree of the task (its heads)."""
    pairs = align(pred, gold, pred_name, str(gold_path))
    missing = [g for _, g in pairs if entry.tree_of(g) is None]
    if missing:
        raise PmaskError(f"{missing[0].where()}: the gold sentence has no {entry.field} to score against")
    return [(p if entry.tree_of(p) is not None else None, g) for p, g in pairs]


def _pair_trees(pred: list[Any], gold: list[Sentence], pred_name: str, gold_path: Path) -> list[tuple[Any, Sentence]]:
    """(tree, gold) of every line of the prediction, in order; the tree is None on an empty line."""
    if len(pred) > len(gold):
        raise PmaskError(f"{pred_name} has {len(pred)} trees but {gold_path} only {len(gold)} sentences")
    pairs = []
    for k, (tree, g) in enumerate(zip(pred, gold)):
        if tree is not None and list(tree.leaves()) != list(g.words):
            hint = (" (brackets pair with the gold by order, and standard input has no meta.json: give the "
                    "--max-words the prediction was parsed with)" if pred_name == STDIN_PREDICTION else "")
            raise PmaskError(f"{pred_name}:{k + 1}: tree words differ from gold {g.where()}{hint}")
        pairs.append((tree, g))
    return pairs


def _warn_other_corpus(pred_path: Path, gold_path: Path, corpus: dict[str, Any]) -> None:
    """One warning when the prediction was parsed from a file with other contents than the gold file
    (legitimate, e.g. the plain text of a treebank, but worth knowing: sentences are paired by their words)."""
    recorded = corpus.get("sha256")
    if recorded and gold_path.is_file() and sha256_file(gold_path) != recorded:
        logger.warning("%s was parsed from %s, which differs from the gold file %s: sentences are paired and "
                       "their words checked", pred_path, corpus.get("path"), gold_path)


def evaluate_files(pred_path: Path, gold_path: Path, *, punct: str = "include", baselines: bool = False,
                   root: str | None = None, seed: int = 0, max_words: int | None = None,
                   subtypes: bool = False, scores: Sequence[str] = ()) -> Evaluation:
    """Score ``pred_path`` against ``gold_path``, with every baseline on the same sentences.

    The prediction's ``.meta.json`` (written by ``pmask parse``) names its row and gives the
    baselines' root setting and the corpus's ``max_words`` filter unless ``root`` / ``max_words``
    are given.

    Args:
        pred_path: predicted CoNLL-U, or bracketed trees one per line.
        gold_path: gold CoNLL-U (or .dp), or PTB .mrg file/folder.
        punct: "include" or "exclude" punctuation words (dependency only).
        baselines: also score every baseline of the task.
        subtypes: keep relation subtypes apart in the breakdown by relation (``nmod:poss``); by
            default they count under their universal relation (``nmod``).
        scores: optional scores to add to the prediction and every baseline, by name
            (:func:`pmask.eval.scores.columns.optional_scores`: ``hoover_uuas``, Hoover et al.'s UUAS,
            :class:`pmask.eval.scores.hoover_uuas.HooverUuasScore`); one that scores another task's trees is a
            SettingError, before the gold is read.

    Returns:
        An :class:`Evaluation` (score, baselines, comparison table).
    """
    pred_path, gold_path = Path(pred_path), Path(gold_path)
    from_stdin = str(pred_path) == STDIN
    pred_name = STDIN_PREDICTION if from_stdin else str(pred_path)
    task, pred = read_prediction(pred_path)
    scores = check_asked(scores, task, pred_name)
    provenance: Provenance | None = None
    if not from_stdin:
        provenance = read_provenance(pred_path)
    settings = provenance.row_settings() if provenance is not None else {}
    root = _baseline_root(root, settings)
    if from_stdin:   # no meta.json beside standard input: the row, root and filter come from the flags
        logger.info("%s: no meta.json for a prediction on standard input: row 'prediction', baselines with "
                    "--root %s, gold read with --max-words %s", pred_name, root, max_words or "(none)")
    name = provenance.row_name() if provenance is not None else "prediction"
    recorded = (provenance.corpus or {}).get("max_words") if provenance is not None else None
    _warn_other_corpus(pred_path, gold_path, (provenance.corpus or {}) if provenance is not None else {})
    read_with = gold_filter(max_words, provenance, pred_name)
    gold = read_gold(gold_path, task, pred_path, read_with)
    if max_words is None:
        max_words = recorded
    entry = task_entry(task)
    if provenance is None and max_words is not None:   # the prediction's own filter is unknown: apply it to both
        pred = [p for p in pred if p is None or _length(entry, p) <= max_words]
    paired: list[tuple[Any, Sentence]] = (_pair_sentences(entry, pred, gold, pred_name, gold_path)
                                          if entry.read is None else _pair_trees(pred, gold, pred_name, gold_path))
    if max_words is not None and max_words != read_with:   # narrower than the prediction's own filter
        kept = [(p, g) for p, g in paired if len(g) <= max_words]
        made = f"parsed with --max-words {read_with}" if read_with else "parsed without --max-words"
        logger.info("%s: scoring %d of its %s of at most %d words (it was %s)", pred_name, len(kept),
                    unit_of(gold).records(len(paired)), max_words, made)
        paired = kept
    unscored = [g.id for p, g in paired if p is None]
    pairs = [(p, g) for p, g in paired if p is not None]
    score = score_pairs(task, [(_tree(entry, p), g) for p, g in pairs], punct=punct, scores=scores)
    if "root" in entry.settings:   # trees with a root: punctuation and the baselines' root are settings of the score
        meta = {"gold": str(gold_path), "pred": pred_name, "punct": punct, "baseline_root": root,
                **({"max_words": max_words} if max_words is not None else {})}
    else:
        meta = {"gold": str(gold_path), "pred": pred_name, "max_words": max_words}
    check_scored(task, cast(Any, score.main), pred_name, len(paired), len(unscored), punct)
    golds = [g for _, g in pairs]
    # under Wu et al.'s discourse pipeline, their two chains (the last EDU dropped) are the baselines
    faithful, names = faithful_baselines(task, bool(settings.get("faithful")), golds)
    base = baseline_scores(task, golds, punct=punct, root=root, seed=seed, scores=scores, faithful=faithful,
                           names=names) if baselines else {}
    if unscored:  # e.g. sentences too long for the model: left out of the prediction and the baselines alike
        meta["unscored"] = len(unscored)
        logger.warning("%s: %s without a predicted tree, not scored: %s", pred_name,
                       unit_of(gold).records(len(unscored)), ", ".join(unscored[:5]) + (" …" if len(unscored) > 5
                                                                                          else ""))
    table = comparison(task, score, base, pred_name=name, meta=meta, settings=settings, unit=unit_of(golds).name)
    return Evaluation(task=task, name=name, score=score, baselines=base, table=table, pairs=pairs, subtypes=subtypes)


def _baseline_root(root: str | None, recorded: dict[str, Any]) -> str:
    """The root mode of the baselines: given, else the prediction's own (its ``.meta.json``), else the resolver's
    for a gold corpus (:func:`pmask.pipeline.request.resolve`: gold, every gold sentence having its heads)."""
    from pmask.pipeline.request import Inputs, Request, resolve

    given = root if root is not None else recorded.get("root")
    return str(resolve(Request.build(root=given), Inputs(gold_heads=True)).decoding.root)


def score_against_gold(sentences: Sequence[Sentence], impacts: Any, settings: Any, *,
                       punct: str = "include", scores: Sequence[str] = ()) -> tuple[ScoreSet, list[Sentence]]:
    """Induce trees for ``sentences`` (:func:`pmask.pipeline.induce.parse_sentences`) and score them
    against the sentences' own gold trees.

    Returns every score of the task (optional ones named in ``scores``; a :class:`ScoreSet`, read as the
    ``DependencyScore`` or ``BracketScore``) and the gold sentences that were scored (sentences skipped
    as too long for the model are left out of both).
    """
    parsed = [p for p in parse_sentences(sentences, impacts, settings) if p.skipped is None]
    task = decoder_task(settings.decoder)
    trees = [task_entry(task).tree_of(p) for p in parsed]
    return score_pairs(task, list(zip(trees, [p.sentence for p in parsed])), punct=punct, scores=scores), \
        [p.sentence for p in parsed]
