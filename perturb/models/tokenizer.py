"""Loading and checking a masked LM's fast tokenizer for pre-split words.

pmask tokenises pre-split words (``is_split_into_words``). That must give the pieces the model
would see in running text, so at load time the tokenizer is configured (a ByteLevel
pre-tokenizer adds the leading-space marker to every word, a Metaspace one its ``▁``) and
checked on a probe sentence; a tokenizer that cannot be made to match is refused.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pmask.common.errors import ModelError

PROBE_TEXT = ["The", "committee", "unexpectedly", "approved", "Clinton", "'s", "budget", "(", "again", ")", "."]


def one_line(err: BaseException) -> str:
    """An exception's message on one line, at most 300 characters."""
    text = " ".join(str(err).split())
    return (text[:300] + "…") if len(text) > 300 else (text or type(err).__name__)


def _fix_pre_tokenizer(spec: Any) -> bool:
    """Make every word get its word-start marker when words are tokenised one by one; True if changed."""
    changed = False
    if isinstance(spec, dict):
        if spec.get("type") == "ByteLevel" and not spec.get("add_prefix_space", False):
            spec["add_prefix_space"] = True
            changed = True
        if spec.get("type") == "Metaspace" and spec.get("prepend_scheme") == "first":
            spec["prepend_scheme"] = "always"
            changed = True
        for value in spec.values():
            changed |= _fix_pre_tokenizer(value)
    elif isinstance(spec, list):
        for value in spec:
            changed |= _fix_pre_tokenizer(value)
    return changed


def _splits_before_bytes(spec: Any) -> bool:
    """A pre-tokenizer that splits the text by a pattern, then maps bytes without splitting again (Llama-3's,
    Qwen2's): a word-start space must be in the text before the split, not added to the first piece after it."""
    steps = spec.get("pretokenizers", []) if isinstance(spec, dict) and spec.get("type") == "Sequence" else []
    kinds = [step.get("type") for step in steps]
    return ("Split" in kinds and "ByteLevel" in kinds and kinds.index("Split") < kinds.index("ByteLevel")
            and not steps[kinds.index("ByteLevel")].get("use_regex", True)
            and not steps[kinds.index("ByteLevel")].get("add_prefix_space", False))


def configure_for_words(tokenizer: Any) -> None:
    """Set the word-start marker options on the tokenizer's backend itself (where the fast
    tokenizer records ``add_prefix_space`` but its backend ignores it)."""
    from tokenizers import Tokenizer

    backend = tokenizer.backend_tokenizer
    if backend.pre_tokenizer is None:
        return
    # only the pre-tokenizer's own state: serialising the whole tokenizer would copy the vocabulary
    pre = json.loads(backend.pre_tokenizer.__getstate__())
    if _splits_before_bytes(pre):   # Llama-3, Qwen2: the space must come before the split (contractions)
        spec = json.loads(backend.to_str())
        prepend = {"type": "Prepend", "prepend": " "}
        old = spec.get("normalizer")
        spec["normalizer"] = prepend if old is None else {"type": "Sequence", "normalizers": [old, prepend]}
        tokenizer._tokenizer = Tokenizer.from_str(json.dumps(spec))
    elif _fix_pre_tokenizer(pre):
        spec = json.loads(backend.to_str())
        spec["pre_tokenizer"] = pre
        tokenizer._tokenizer = Tokenizer.from_str(json.dumps(spec))
    if hasattr(tokenizer, "add_prefix_space") and "ByteLevel" in json.dumps(pre):
        tokenizer.add_prefix_space = True


def check_words_match_text(tokenizer: Any, name: str, words: list[str] = PROBE_TEXT) -> None:
    """Raise ``ModelError`` unless tokenising ``words`` one by one gives the pieces of the running text.

    Args:
        tokenizer: a fast tokenizer.
        name: the model's name for the message.
        words: the probe sentence.
    """
    split = tokenizer(words, is_split_into_words=True, add_special_tokens=False)["input_ids"]
    text = tokenizer(" ".join(words), add_special_tokens=False)["input_ids"]
    if split != text:
        a, b = tokenizer.convert_ids_to_tokens(split), tokenizer.convert_ids_to_tokens(text)
        k = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        raise ModelError(f"tokenizer of model {name!r} splits pre-split words differently from running text "
                         f"({'|'.join(a[k:k + 3])} vs {'|'.join(b[k:k + 3])}); pmask cannot align its words")


def load_tokenizer(name_or_dir: str, revision: str | None = None, local_files_only: bool = False,
                   needs_mask_token: bool = True) -> Any:
    """The fast tokenizer of ``name_or_dir``, configured and checked for pre-split words.

    Args:
        name_or_dir: a hub name or local directory.
        revision: a hub revision.
        local_files_only: never contact the hub.
        needs_mask_token: refuse a tokenizer without a mask token (the model family hides words with it,
            :attr:`pmask.common.model_families.ModelFamily.needs_mask_token`).

    Returns:
        A fast tokenizer (with a mask token, if needed) whose pre-split words tokenise as running text does.

    Raises:
        ModelError: missing directory, no fast tokenizer, no mask token, or an unfixable mismatch.
    """
    from transformers import AutoTokenizer

    looks_local = str(name_or_dir).startswith(("/", "./", "../", "~", "\\")) or Path(name_or_dir).exists()
    if looks_local and not Path(name_or_dir).expanduser().is_dir():
        raise ModelError(f"model directory {str(name_or_dir)!r} does not exist")
    try:
        tok = AutoTokenizer.from_pretrained(name_or_dir, revision=revision, local_files_only=local_files_only)
    except Exception as err:  # noqa: BLE001 - any loading failure becomes a one-line ModelError
        raise ModelError(f"cannot load tokenizer of model {name_or_dir!r}: {one_line(err)}") from err
    if not getattr(tok, "is_fast", False):
        raise ModelError(f"model {name_or_dir!r} has no fast tokenizer ({type(tok).__name__}); "
                         "pmask needs word_ids() from a fast tokenizer")
    if needs_mask_token and tok.mask_token_id is None:
        raise ModelError(f"tokenizer of model {name_or_dir!r} has no mask token; pmask needs a masked LM")
    configure_for_words(tok)
    check_words_match_text(tok, str(name_or_dir))
    return tok


def prepare_tokenizer(tokenizer: Any, family: Any, name: str) -> None:
    """Set a loaded tokenizer up for its model family: the family's own preparation (a causal LM's inputs start
    with a start token, :attr:`~pmask.common.model_families.ModelFamily.prepare_tokenizer`) and which of Hoover et
    al.'s classes ``words-ptb`` tokenises as (:func:`pmask.perturb.alignment.subword_lists.use_subword_lists`)."""
    from pmask.perturb.alignment.subword_lists import use_subword_lists

    if family.prepare_tokenizer is not None:
        family.prepare_tokenizer(tokenizer, name)
    use_subword_lists(tokenizer, family.subword_lists)
