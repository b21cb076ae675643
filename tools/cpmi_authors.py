"""Run Hoover et al.'s CPMI code (github.com/mcqll/cpmi-dependencies) on a CoNLL-U file, for comparison with pmask.

Not part of pmask and never run in CI: it runs under the authors' own environment (transformers
4.27.3, as they pin), e.g. a virtual environment made with

    python3 -m venv ANCHOR/venv
    ANCHOR/venv/bin/pip install torch transformers==4.27.3 "tokenizers<0.14" "huggingface-hub<0.20" "numpy<2" \
        pandas tqdm sentencepiece "protobuf==3.20.3" sacremoses     # the last three: XLNet's and XLM's tokenizers
    git --git-dir=<mirror of mcqll/cpmi-dependencies> archive HEAD | tar -x -C ANCHOR/src

(a CPU-only torch can be linked in from another environment instead of installed). A Llama (SmolLM2)
needs transformers 4.33 or later (4.28 brought Llama, 4.31 grouped-query attention, 4.33 ``rope_theta``):
a second environment, ``ANCHOR/venv-llama``, with ``transformers==4.33.0`` and the same packages.

(ANCHOR: ``../anchors/cpmi`` beside the checkout is where ``benchmarks/cpmi_equality.py`` looks by default)

and is called by ``benchmarks/cpmi_equality.py`` and ``benchmarks/cpmi_speed.py``. It imports their modules
unchanged (``pmi_accuracy/languagemodel.py``, ``main.py``, ``parser.py``), pads each sentence with their
``get_padding``, computes its matrix with their ``ptb_tokenlist_to_pmi_matrix`` of the family's class
(``--family``, by default from the model's ``config.json``: ``BERT``, ``XLNet``, ``Bart``, ``XLM``, and
``GPT2`` for GPT-2 and for any other causal LM such as a Llama, read their GPT-2 way) and decodes it with
their ``score_observation`` (every symmetrisation, projective and not), with and without
``absolute_value``. Two things their GPT-2 and BART classes need to run at all under transformers 4.27
are set at load, nothing else: ``GPT2`` loads its model with ``AutoModelForMaskedLM``, which has no GPT-2
(nor Llama) there, so it is given ``AutoModelForCausalLM``; ``GPT2`` and ``Bart`` call
``tokenize(word, add_prefix_space=...)``, which the fast tokenizer (``AutoTokenizer``'s default) refuses,
so they get the slow one (``use_fast=False``), whose ``tokenize`` honours it. ``--head-at-target`` (BERT
only) applies the MLM head only where their code reads it (their model call returns logits at every
position, of which one is used per sequence): a stand-in for the model's output whose log-softmax is
taken lazily at the indexed position. The encoder and everything else run as theirs. Writes one JSON
file: per sentence their matrix and (unless ``--skip-trees``) their trees, their input (``layout``: token
ids and each word's piece positions) and the number of sequences they run.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import time
import types
from pathlib import Path

import numpy as np
import torch


class _LazyLogProbs:
    """Log-softmax of the MLM head at one sequence's positions, computed only when indexed."""

    def __init__(self, hidden, head):
        self.hidden, self.head = hidden, head

    def size(self, dim):
        return self.hidden.shape[dim]

    def __getitem__(self, index):
        loc, token = index
        return torch.log_softmax(self.head(self.hidden[loc][None]), -1)[0, token]


class _LazyBatch:
    def __init__(self, hidden, head):
        self.hidden, self.head = hidden, head

    def __iter__(self):
        return (_LazyLogProbs(h, self.head) for h in self.hidden)


def _head_at_target(languagemodel, lm):
    """Patch ``lm`` (their BERT wrapper) so the MLM head runs only at the positions their code reads."""
    model = lm.model

    def call(input_ids):
        return (_LazyBatch(model.bert(input_ids=input_ids).last_hidden_state, model.cls),)

    lm.model = call
    languagemodel.F = types.SimpleNamespace(log_softmax=lambda x, dim: x)


CLASSES = {"bert": "BERT", "xlnet": "XLNet", "bart": "Bart", "xlm": "XLM", "gpt2": "GPT2"}
#: config model_type -> their class (any other model type with a causal LM head is read as GPT-2)
MODEL_TYPES = {"xlnet": "xlnet", "bart": "bart", "xlm": "xlm", "gpt2": "gpt2", "llama": "gpt2", "mistral": "gpt2",
               "qwen2": "gpt2", "gpt_neox": "gpt2", "phi3": "gpt2", "gemma": "gpt2"}


def family_of(model: str) -> str:
    """Their class for the model folder ``model``, from its ``config.json`` (``bert`` for the masked LMs)."""
    config = Path(model) / "config.json"
    model_type = json.loads(config.read_text())["model_type"] if config.is_file() else "bert"
    return MODEL_TYPES.get(model_type, "bert")


def load_theirs(languagemodel, family: str, model: str, batch_size: int):
    """Their class of ``family`` on ``model``, with the two settings it needs under transformers 4.27 (see above)."""
    cls = getattr(languagemodel, CLASSES[family])
    saved = languagemodel.AutoModelForMaskedLM, languagemodel.AutoTokenizer
    if family == "gpt2":
        languagemodel.AutoModelForMaskedLM = languagemodel.AutoModelForCausalLM
    if family in ("gpt2", "bart"):
        tokenizer_class = saved[1]
        languagemodel.AutoTokenizer = types.SimpleNamespace(
            from_pretrained=lambda spec, **kw: tokenizer_class.from_pretrained(spec, use_fast=False, **kw))
    try:
        return cls(torch.device("cpu"), model, batch_size)
    finally:
        languagemodel.AutoModelForMaskedLM, languagemodel.AutoTokenizer = saved


def their_input(lm, words, before, after) -> tuple[dict, int]:
    """Their input for one sentence (token ids, each word's piece positions) and their number of sequences."""
    dataset, _ = lm._create_pmi_dataset(words, pad_left=before, pad_right=after, add_special_tokens=True,
                                        verbose=False)
    spans = [[dataset.n_pad_left + p for p in span] for span in dataset.ptbtok_to_span]
    return {"input_ids": [int(t) for t in dataset.input_ids], "spans": spans}, len(dataset)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, required=True, help="their checkout (with pmi_accuracy/)")
    ap.add_argument("--model", required=True, help="a local model folder")
    ap.add_argument("--family", choices=sorted(CLASSES), default=None,
                    help="their class to run (default: from the model's config.json)")
    ap.add_argument("--conllu", required=True)
    ap.add_argument("--n", type=int, default=100, help="first N sentences")
    ap.add_argument("--max-words", type=int, default=0,
                    help="only sentences of at most this many words (the first N of them; 0: every sentence)")
    ap.add_argument("--index", default="", help="these sentences (0-based positions in the file, comma-separated) "
                                                 "instead of --n and --max-words")
    ap.add_argument("--pad", type=int, default=0, help="their --pad (context words)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--head-at-target", action="store_true", help="BERT only")
    ap.add_argument("--skip-trees", action="store_true", help="matrices and timings only")
    ap.add_argument("-o", "--output", type=Path, required=True)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    sys.path.insert(0, str(args.repo / "pmi_accuracy"))
    import languagemodel  # noqa: E402 - theirs, from --repo
    import main as their_main  # noqa: E402
    from conll_data import CONLL_COLS, CONLLReader  # noqa: E402

    observations = CONLLReader(CONLL_COLS).load_conll_dataset(args.conllu)
    family = args.family or family_of(args.model)
    if args.head_at_target and family != "bert":
        ap.error(f"--head-at-target patches their BERT class only, not {CLASSES[family]}")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        lm = load_theirs(languagemodel, family, args.model, args.batch_size)
    if args.head_at_target:
        _head_at_target(languagemodel, lm)
    out = {"model": args.model, "family": family, "class": CLASSES[family], "pad": args.pad,
           "head_at_target": args.head_at_target, "sentences": []}
    seconds = 0.0
    started = time.perf_counter()
    chosen = [i for i, obs in enumerate(observations) if not args.max_words or len(obs.FORM) <= args.max_words]
    chosen = [int(i) for i in args.index.split(",")] if args.index else chosen[:args.n]
    for i in chosen:
        obs = observations[i]
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            before, after = their_main.get_padding(i, observations, args.pad)
            t0 = time.perf_counter()
            with torch.no_grad():
                matrix, loglik = lm.ptb_tokenlist_to_pmi_matrix(obs.FORM, add_special_tokens=True, verbose=False,
                                                                pad_left=before, pad_right=after)
            seconds += time.perf_counter() - t0
            entry = {"id": i, "words": list(obs.FORM), "matrix": np.asarray(matrix).tolist()}
            if not args.skip_trees:
                entry["layout"], entry["sequences"] = their_input(lm, obs.FORM, before, after)
                entry["context"] = [list(before), list(after)]
                for absolute in (False, True):
                    scores = their_main.score_observation(obs, matrix, absolute_value=absolute)
                    entry["abs" if absolute else "plain"] = {
                        "number_edges": int(scores["number_edges"]),
                        "gold_edges": [list(map(int, e)) for e in scores["gold_edges"]],
                        **{kind: {"edges": {s: [list(map(int, e)) for e in edges]
                                            for s, edges in scores[kind]["edges"].items()},
                                  "n_common": {s: int(v) for s, v in scores[kind]["n_common"].items()},
                                  "uuas": {s: (None if v != v else float(v)) for s, v in scores[kind]["uuas"].items()}}
                           for kind in ("projective", "nonproj")},
                        "linear_n_common": int(scores["baseline_linear_n_common"])}
        out["sentences"].append(entry)
    out["matrix_seconds"] = seconds
    out["total_seconds"] = time.perf_counter() - started
    args.output.write_text(json.dumps(out))
    print(f"{args.output}: {len(out['sentences'])} sentences, matrices {seconds:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
