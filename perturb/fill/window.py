"""Whether the inputs fit the model's window (the most tokens it takes), asked before any model work.

A sentence whose input is longer than the window is skipped with a warning, one sentence at a
time, as the engine meets it. A run in which *no* sentence can fit is refused instead, in one line
naming the window, before any model work: a run never ends with an empty output and exit 0.

* :func:`check_context_fits`, before the model is loaded: ``--context N`` gives each sentence its
  neighbours' words until the sentence and its neighbours hold at least N words, so every input
  has at least N words plus the special tokens. When that exceeds the window, read from the model
  folder's ``config.json`` (``max_position_embeddings``) and ``tokenizer_config.json``
  (``model_max_length``) without loading it, nothing can fit. Both numbers bound the window from
  above (RoBERTa-style models take two positions fewer), so this check never refuses a run that
  could work; a model named by its hub id is checked by the next one.
* :func:`check_some_fit`, once the tokenizer is loaded and before the first forward pass: the
  sentences are tokenised until one fits (usually the first); when none does, the run is refused
  naming the window and the inputs' lengths.

Example:
    >>> check_context_fits("pmask-tiny-en", 600, "words")
    Traceback (most recent call last):
    ...
    pmask.common.errors.SettingError: context 600 needs inputs of at least 602 tokens ...
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from pmask.common.errors import SettingError
from pmask.common.files import read_json
from pmask.common.options import split_random
from pmask.perturb.alignment import align_sentence
from pmask.perturb.alignment.neighbours import add_context
from pmask.perturb.models.bundled import bundled_path

#: Tokenisation modes that add no special token around the words.
BARE = ("bare",)


def special_tokens(tokenize: str | None) -> int:
    """The special tokens (``[CLS]``, ``[SEP]``) an input holds beyond its words, at least."""
    return 0 if tokenize in BARE else 2


def window_bound(name: str) -> tuple[int, str] | None:
    """At most how many tokens model ``name`` takes, read from its folder without loading it: the least of
    ``max_position_embeddings`` (``config.json``) and ``model_max_length`` (``tokenizer_config.json``), with
    where it was read; None when ``name`` is not a local or bundled folder, or neither file says.

    Example:
        >>> window_bound("pmask-tiny-en")
        (512, 'max_position_embeddings in its config.json')
    """
    bare = split_random(name)[0]
    folder = bundled_path(bare) or Path(bare).expanduser()
    if not folder.is_dir():
        return None
    found = []
    config = read_json(folder / "config.json", unreadable="none") or {}
    positions = config.get("max_position_embeddings") if isinstance(config, dict) else None
    if isinstance(positions, int) and positions > 0:
        found.append((positions, "max_position_embeddings in its config.json"))
    tokenizer = read_json(folder / "tokenizer_config.json", unreadable="none") or {}
    most = tokenizer.get("model_max_length") if isinstance(tokenizer, dict) else None
    if isinstance(most, int) and 0 < most < 10**7:
        found.append((most, "model_max_length in its tokenizer_config.json"))
    return min(found) if found else None


def check_context_fits(name: str, context: int, tokenize: str | None) -> None:
    """Refuse ``context`` words of context that no input of model ``name`` can hold (see the module docstring).

    Raises:
        SettingError: naming ``{context}``, the tokens it needs and the window.
    """
    bound = window_bound(name) if context else None
    if bound is None:
        return
    window, where = bound
    special = special_tokens(tokenize)
    need = context + special
    if need > window:
        plus = f", plus {special} special tokens" if special else ""
        raise SettingError(f"{{context}} {context} needs inputs of at least {need} tokens (each sentence with its "
                           f"neighbours holds at least {context} words{plus}), but model {name} takes at most "
                           f"{window} ({where}): give {{context}} {max(window - special, 0)} or less")


def _tokens(tokenizer: Any, sentence: Any, tokenize: str) -> int | None:
    try:
        return len(align_sentence(tokenizer, sentence, tokenize, warn=False))
    except Exception:  # noqa: BLE001 - a sentence that cannot be aligned is the engine's to report
        return None


def check_some_fit(model: Any, sentences: Sequence[Any], tokenize: str, context: int) -> None:
    """Refuse, before any forward pass, a run in which no sentence's input fits ``model``'s window.

    ``sentences`` are those the engine will run, given ``context`` words of their neighbours
    (:func:`pmask.perturb.alignment.neighbours.add_context`); they are tokenised until one fits, so a
    run that can work costs one sentence's tokenisation.

    Raises:
        SettingError: naming the window, ``{context}`` when given, and the inputs' lengths.
    """
    tokenizer, window = getattr(model, "tokenizer", None), getattr(model, "max_length", None)
    if tokenizer is None or not isinstance(window, int) or not sentences:
        return
    first = _tokens(tokenizer, add_context(list(sentences[:1]), context)[0], tokenize)
    if first is None or first <= window:
        return
    inputs = add_context(list(sentences), context)
    lengths = []
    for sentence in inputs:
        n = _tokens(tokenizer, sentence, tokenize)
        if n is None or n <= window:
            return
        lengths.append(n)
    shortest = min(range(len(lengths)), key=lengths.__getitem__)
    where = getattr(inputs[shortest], "where", None)
    place = where() if callable(where) else f"sentence {shortest}"
    with_context = f" with {{context}} {context}" if context else ""
    fix = "; give a smaller {context}" if context else ""
    raise SettingError(f"no sentence fits model {getattr(model, 'name', '?')}'s window of {window} tokens (its "
                       f"maximum positions){with_context}: all {len(lengths)} inputs hold {lengths[shortest]} to "
                       f"{max(lengths)} tokens (the shortest: {place}){fix}")
