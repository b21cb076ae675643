"""The ``causal`` model family: decoder-only LLMs (GPT-2, Llama, Qwen2, Mistral, Phi-3, GPT-NeoX, Gemma, SmolLM2).

A causal LM's token sees only the tokens before it, so word j can move only the states of the words after
it; a word is hidden from the model by the attention mask (its pieces' keys masked in every layer, as
Hoover et al.'s GPT-2 code does) or by replacing its pieces with another token. The model predicts each
token from the state just before it: the log-probability of piece p is read at position p − 1, which is
why every input starts with a start token (:func:`prepare_tokenizer`: the tokenizer's BOS, else its EOS,
put in front when the tokenizer adds none itself).

:class:`~pmask.perturb.encoders.causal_encoder.CausalEncoder` runs the model's own forward
(``output_hidden_states``) one segment of equal-length rows at a time, never padded, with the batch's hidden
tokens as a 2-D attention mask (combined with the causal mask by the model) and explicit position ids; the
log-probability of a token is the model's output head (final norm, then ``lm_head``) applied at the reads,
checked at load against the model's own logits (:func:`inspect`; a model whose logits the head does not
reproduce, e.g. with logit soft-capping, is read from its own logits instead). Log-probabilities are read at
the last layer only.
"""
from __future__ import annotations

from typing import Any, Callable

from pmask.common.errors import ModelError
from pmask.common.model_families import MODEL_FAMILIES, ModelFamily


def recognises(config: Any) -> bool:
    """A config transformers loads into a causal-LM class, not an encoder-decoder (tried after the masked,
    permutation and seq2seq families, which BERT, XLNet and BART belong to although transformers offers
    causal-LM classes for them too)."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    return (getattr(config, "model_type", None) in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
            and not getattr(config, "is_encoder_decoder", False))


def start_token(tokenizer: Any) -> int | None:
    """The token a causal input starts with when the tokenizer adds none: its BOS, else its EOS (GPT-2's
    ``<|endoftext|>`` is both); None when it has neither."""
    for token_id in (tokenizer.bos_token_id, tokenizer.eos_token_id):
        if token_id is not None:
            return int(token_id)
    return None


def adds_start(tokenizer: Any) -> bool:
    """Whether the tokenizer puts a special token in front of a text itself (Llama-2's ``<s>``)."""
    enc = tokenizer(["a"], is_split_into_words=True, add_special_tokens=True)
    return enc.word_ids()[0] is None


def prepare_tokenizer(tokenizer: Any, name: str) -> None:
    """Make the tokenizer put a start token in front of every input (for the reads at position p − 1 of the
    first piece), when it adds none itself: its BOS, else its EOS; a one-line refusal when it has neither.
    Done on the tokenizer's backend, so that every aligner lays a causal input out as ``[start] pieces``."""
    from tokenizers import processors

    if adds_start(tokenizer):
        return
    start = start_token(tokenizer)
    if start is None:
        raise ModelError(f"tokenizer of model {name!r} adds no token in front of a text and has neither a "
                         "beginning- nor an end-of-text token to start a causal model's input with")
    token = tokenizer.convert_ids_to_tokens(start)
    template = processors.TemplateProcessing(single=f"{token} $A", pair=f"{token} $A $B:1",
                                             special_tokens=[(token, start)])
    backend = tokenizer.backend_tokenizer
    backend.post_processor = (processors.Sequence([backend.post_processor, template])
                              if backend.post_processor is not None else template)


def inspect(lm: Any) -> Any:
    """Check on a probe sentence that the output head gives the model's own logits
    (:func:`pmask.perturb.encoders.causal_encoder.inspect_head`)."""
    from pmask.perturb.encoders.causal_encoder import inspect_head

    return inspect_head(lm)


def encoder(lm: Any, fast: bool | None) -> Any:
    """The encoder of one run (:class:`pmask.perturb.encoders.causal_encoder.CausalEncoder`): its fast path (the
    inputs of one sentence share the keys and values before their first hidden word) unless ``fast`` is False
    (the model's own forward on every input, whole)."""
    from pmask.perturb.encoders.causal_encoder import CausalEncoder

    return CausalEncoder(lm.model, lm.num_layers, lm.name, lm.paths(), reuse_prefix=fast is not False)


#: The causal family's readings of metrics and probes, filled in by the modules of :mod:`pmask.perturb.probes`
#: that hold them (beside their code: ``cpmi_causal.py``, ``causal_readings.py``).
METRIC_JOBS: dict[str, type] = {}
READINGS: dict[type, type] = {}
COSTS: dict[str, Callable[[list[int]], int]] = {}

FAMILY = MODEL_FAMILIES.register(ModelFamily(
    "causal", "decoder-only LLMs (GPT-2, Llama, Qwen2, Mistral, Phi-3, GPT-NeoX, Gemma, SmolLM2): a word hidden from "
              "the attention of the words after it, read on its left side only",
    recognises=recognises, precedence=40, loader="AutoModelForCausalLM", noun="causal language model",
    accepts="a decoder-only language model (a *ForCausalLM class)",
    hides="its pieces' keys masked from attention in every layer (their tokens replaced by the start token where "
          "a probe reads the hidden word itself)",
    inspect=inspect, encoder=encoder, sees_right=False, needs_mask_token=False,
    probes=("pair", "single", "distance", "attention"),
    metrics=("cpmi", "dist", "cos", "l2", "l1", "cossim", "weight"), units=("word",),
    decoders={"dependency": "mst"}, symmetrize="sum", metric_jobs=METRIC_JOBS, readings=READINGS, costs=COSTS,
    prepare_tokenizer=prepare_tokenizer, subword_lists="GPT2",
    head_layer="a causal model's log-probabilities are read at its last layer ({last}) only, its own next-token "
               "prediction"))
