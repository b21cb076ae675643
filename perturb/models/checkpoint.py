"""What a checkpoint really provided when loaded into its ``*ForMaskedLM`` class.

transformers loads an encoder-only checkpoint (``BertModel``, a sentence-transformers model, a
fine-tuned classifier) into ``BertForMaskedLM`` by initialising the missing masked-LM head at
random, unseeded. :func:`inspect_loading` reads transformers' loading information and says which
parts came from the checkpoint: the encoder must come whole (a partly random encoder is refused),
the head may be absent, and then metric ``prob`` (which reads the head) is refused while ``dist``
and ``cos`` (which read only the encoder's hidden states) work.

Example:
    >>> parts = CheckpointParts(encoder=True, mlm_head=False, checkpoint_class="BertModel",
    ...                         missing_head=("cls.predictions.bias", "cls.predictions.decoder.bias"))
    >>> parts.loaded()
    {'encoder': True, 'mlm_head': False}
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from pmask.common.errors import ModelError
from pmask.common.options import METRICS, metric_entry

__all__ = ["CheckpointParts", "inspect_loading", "key_groups", "randomly_initialised"]


def key_groups(keys: Iterable[str], show: int = 3) -> str:
    """Weight names for a message: up to ``show`` names, else their groups (first two name parts).

    Example:
        >>> key_groups(["cls.predictions.bias", "cls.predictions.transform.dense.weight",
        ...             "cls.predictions.transform.dense.bias", "cls.predictions.decoder.bias"])
        'cls.predictions.*'
    """
    keys = sorted(keys)
    if len(keys) <= show:
        return ", ".join(keys)
    groups = sorted({".".join(k.split(".")[:2]) + ".*" for k in keys})
    return ", ".join(groups[:show]) + (f" and {len(groups) - show} more" if len(groups) > show else "")


@dataclass(frozen=True)
class CheckpointParts:
    """Which parts of the loaded masked LM hold the checkpoint's trained weights.

    Attributes:
        encoder: every weight of the encoder (embeddings and layers) came from the checkpoint.
        mlm_head: every weight of the masked-LM head came from it.
        checkpoint_class: the class the checkpoint was saved from (its config's ``architectures``).
        missing_head: head weights the checkpoint lacks (initialised at random by transformers).
        unused: checkpoint weights the masked LM has no place for (a pooler, a classifier).
        random_init: the weights were initialised at random on purpose (``random:NAME``, seeded).
    """

    encoder: bool
    mlm_head: bool
    checkpoint_class: str | None = None
    missing_head: tuple[str, ...] = ()
    unused: tuple[str, ...] = ()
    random_init: bool = False

    def loaded(self) -> dict[str, bool]:
        """``{"encoder", "mlm_head"}``: True for a part whose weights came from the checkpoint."""
        return {"encoder": self.encoder, "mlm_head": self.mlm_head}

    @property
    def encoder_only(self) -> bool:
        return self.encoder and not self.mlm_head

    def _what(self) -> str:
        saved = f", saved as {self.checkpoint_class}" if self.checkpoint_class else ""
        return f"an encoder-only checkpoint{saved}: it lacks the masked-LM head {key_groups(self.missing_head)}"

    def note(self, name: str) -> str | None:
        """The one line said at load for an encoder-only checkpoint (None otherwise)."""
        if not self.encoder_only:
            return None
        return (f"model {name!r} is {self._what()}; metrics dist and cos use only the encoder and work, "
                "metric prob is refused")

    def refusal(self, name: str, metric: str | None) -> str | None:
        """Why ``metric`` (a metric read from the MLM head; None: every such metric) cannot be computed with
        these weights, in one line (None when it can).

        Example:
            >>> CheckpointParts(encoder=True, mlm_head=False).refusal("m", "cpmi")[:50]
            "metric 'cpmi' needs a trained masked-LM head and m"
        """
        if not self.encoder_only:
            return None
        if metric is None:
            heads = [m for m in METRICS if metric_entry(m).mlm_head]
            what = f"metrics {' and '.join(repr(m) for m in heads)} need"
        else:
            what = f"metric {metric!r} needs"
        return (f"{what} a trained masked-LM head and model {name!r} is {self._what()}; use metric dist or cos, "
                "which use only the encoder")

    def explains(self, text: str) -> bool:
        """Whether a library message is about the weights these parts account for."""
        return any(key in text for key in (*self.missing_head, *self.unused))


def randomly_initialised(config: Any) -> CheckpointParts:
    """The parts of a model initialised at random on purpose (nothing loaded from a checkpoint)."""
    return CheckpointParts(encoder=False, mlm_head=False, checkpoint_class=_saved_as(config), random_init=True)


def _saved_as(config: Any) -> str | None:
    architectures = getattr(config, "architectures", None) or []
    return str(architectures[0]) if architectures else None


def inspect_loading(model: Any, info: dict[str, Any], name: str) -> CheckpointParts:
    """Which parts of ``model`` came from the checkpoint, from transformers' ``output_loading_info``.

    Args:
        model: the loaded ``*ForMaskedLM``; its ``base_model_prefix`` names the encoder's weights.
        info: ``{"missing_keys", "unexpected_keys", "mismatched_keys", ...}`` as transformers gives it.
        name: the model's name for messages.

    Returns:
        :class:`CheckpointParts`.

    Raises:
        ModelError: an encoder weight is missing from the checkpoint or has another shape there
            (it would be random).
    """
    prefix = str(getattr(model, "base_model_prefix", "") or "")
    # a weight of another shape than the model's is re-initialised too (when transformers lets it through)
    missing = sorted({str(k) for k in info.get("missing_keys") or ()}
                     | {str(entry[0]) for entry in info.get("mismatched_keys") or ()})
    in_encoder = [k for k in missing if not prefix or k.startswith(prefix + ".")]
    if in_encoder:
        raise ModelError(f"checkpoint of model {name!r} lacks {len(in_encoder)} encoder weight(s) "
                         f"({key_groups(in_encoder)}): they would be random; pmask refuses a partly initialised "
                         "encoder")
    return CheckpointParts(encoder=True, mlm_head=not missing, checkpoint_class=_saved_as(model.config),
                           missing_head=tuple(missing),
                           unused=tuple(sorted(str(k) for k in info.get("unexpected_keys") or ())))
