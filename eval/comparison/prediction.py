"""Read a prediction for scoring (a file, or standard input with no meta.json beside it), the gold
it pairs with, and refuse a score over nothing: the input side of :func:`pmask.eval.comparison.compare.evaluate_files`.
"""
from __future__ import annotations

from pathlib import Path

from pmask.common.errors import PmaskError
from pmask.common.labels import plural
from pmask.corpora import FORMATS, STDIN, Sentence, prediction_format, read_corpus, sniff_format
from pmask.corpora.corpus_spec import CorpusSpec
from pmask.corpora.provenance import Provenance
from pmask.corpora.read import detect_format
from pmask.eval.scores.bracket_score import BracketScore
from pmask.eval.scores.dependency_score import DependencyScore
from pmask.trees.tasks import TASKS, plain_task, task_entry

__all__ = ["STDIN_PREDICTION", "check_scored", "gold_filter", "read_gold", "read_prediction"]


#: How a prediction read from standard input is named in messages and tables.
STDIN_PREDICTION = "<stdin>"


def read_prediction(path: Path) -> tuple[str, list]:
    """(its task, its sentences) for a prediction in a format pmask writes predictions in (CoNLL-U, SciDTB: their
    task; :func:`pmask.corpora.prediction_format`), else (the task read in no format, its trees): bracketed trees
    (:func:`pmask.trees.tasks.plain_task`).

    ``-`` reads standard input, CoNLL-U or bracketed trees as its content looks
    (:func:`pmask.corpora.sniff_format`)."""
    plain = plain_task()
    assert plain.read is not None and plain.parse is not None   # plain_task's own readers
    if str(path) == STDIN:
        text = _read_stdin_text()
        looks = FORMATS[sniff_format(text)]
        if looks.predictions and looks.task:
            return looks.task, list(looks.parse(text, STDIN_PREDICTION, False))
        return plain.name, plain.parse(text, STDIN_PREDICTION)
    if not path.exists():
        raise PmaskError(f"{path}: no such file or directory")
    written = prediction_format(path)
    if written is not None and written.task:
        return written.task, read_corpus(path, written.name)
    return plain.name, plain.read(path)


def _read_stdin_text() -> str:
    """Standard input as text, decoded as every reader decodes (UTF-8, byte-order mark dropped)."""
    from pmask.corpora._util import read_utf8

    return read_utf8(Path(STDIN))


def read_gold(gold_path: Path, task: str, pred_path: Path, max_words: int | None) -> list[Sentence]:
    """Gold sentences for a ``task`` prediction; a one-line error when the gold holds the other kind of tree."""
    if not gold_path.exists():
        raise PmaskError(f"{gold_path}: no such file or directory")
    fmt = detect_format(gold_path)
    holds = FORMATS[fmt].task or next(iter(TASKS))   # text: words only, read as the first task's without trees
    if holds != task:
        raise PmaskError(f"{pred_path} holds {task_entry(task).trees} but the gold {gold_path} holds "
                         f"{task_entry(holds).trees} (format {fmt}); give a gold file of the same kind")
    return CorpusSpec(gold_path, fmt, max_words=max_words).read()


def gold_filter(max_words: int | None, provenance: Provenance | None, pred_name: str) -> int | None:
    """The ``max_words`` the gold is read with so that it pairs with the prediction: the filter the
    prediction was made with (from its meta.json; none recorded: the whole gold); a narrower
    ``max_words`` is then applied to the pairs. A wider one is refused: the prediction has no trees
    for the longer sentences. Without a meta.json, ``max_words`` itself."""
    if provenance is None:
        return max_words
    recorded = (provenance.corpus or {}).get("max_words")
    if max_words is not None and recorded is not None and max_words > recorded:
        raise PmaskError(f"--max-words {max_words} is wider than the filter {pred_name} was parsed with "
                         f"(max_words {recorded}, from its meta.json): it holds no trees for sentences of "
                         f"{recorded + 1} to {max_words} words; give --max-words {recorded} or less")
    return recorded


def check_scored(task: str, score: DependencyScore | BracketScore, pred_name: str, sentences: int,
                  unscored: int, punct: str) -> None:
    """A PmaskError saying why, when the prediction scores nothing (a score over no word means nothing)."""
    entry = task_entry(task)
    if (score.total if isinstance(score, DependencyScore) else score.sentences) > 0:
        return
    if sentences and unscored == sentences:
        why = f"none of its {plural(sentences, 'sentence')} has a predicted {entry.unpredicted}"
    elif "punct" in entry.scoring and score.sentences and punct == "exclude":
        why = "every word of its sentences is punctuation, left out by --punct exclude"
    else:
        why = "it pairs no sentence with the gold"
    raise PmaskError(f"{pred_name}: nothing to score: {why}; no {entry.counts} was scored")
