"""Run Hoover et al.'s CPMI code (github.com/mcqll/cpmi-dependencies) on a CoNLL-U file, for comparison with pmask.

Not part of pmask and never run in CI: it runs under the authors' own environment (transformers
4.27), e.g. a virtual environment made with

    python3 -m venv ANCHOR/venv
    ANCHOR/venv/bin/pip install torch==2.13.0 transformers==4.27.4 "numpy<2" pandas==2.2.3 tqdm
    git --git-dir=<mirror of mcqll/cpmi-dependencies> archive HEAD | tar -x -C ANCHOR/src

(ANCHOR: ``../anchors/cpmi`` beside the checkout is where ``benchmarks/cpmi_equality.py`` looks by default)

and is called by ``benchmarks/cpmi_equality.py``. It imports their modules unchanged
(``pmi_accuracy/languagemodel.py``, ``main.py``, ``parser.py``), pads each sentence with their
``get_padding``, computes its matrix with their ``BERT.ptb_tokenlist_to_pmi_matrix`` and decodes
it with their ``score_observation`` (every symmetrisation, projective and not), with and without
``absolute_value``. ``--head-at-target`` applies the MLM head only where their code reads it
(their model call returns logits at every position, of which one is used per sequence): a
stand-in for the model's output whose log-softmax is taken lazily at the indexed position. The
encoder and everything else run as theirs. Writes one JSON file.
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, required=True, help="their checkout (with pmi_accuracy/)")
    ap.add_argument("--model", required=True, help="a local BERT directory (BertForMaskedLM)")
    ap.add_argument("--conllu", required=True)
    ap.add_argument("--n", type=int, default=100, help="first N sentences")
    ap.add_argument("--pad", type=int, default=0, help="their --pad (context words)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--head-at-target", action="store_true")
    ap.add_argument("--skip-trees", action="store_true", help="matrices and timings only")
    ap.add_argument("-o", "--output", type=Path, required=True)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    sys.path.insert(0, str(args.repo / "pmi_accuracy"))
    import languagemodel  # noqa: E402 - theirs, from --repo
    import main as their_main  # noqa: E402
    from conll_data import CONLL_COLS, CONLLReader  # noqa: E402

    observations = CONLLReader(CONLL_COLS).load_conll_dataset(args.conllu)
    with contextlib.redirect_stdout(io.StringIO()):
        lm = languagemodel.BERT(torch.device("cpu"), args.model, args.batch_size)
    if args.head_at_target:
        _head_at_target(languagemodel, lm)
    out = {"model": args.model, "pad": args.pad, "head_at_target": args.head_at_target, "sentences": []}
    seconds = 0.0
    started = time.perf_counter()
    for i, obs in enumerate(observations[:args.n]):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            before, after = their_main.get_padding(i, observations, args.pad)
            t0 = time.perf_counter()
            with torch.no_grad():
                matrix, loglik = lm.ptb_tokenlist_to_pmi_matrix(obs.FORM, add_special_tokens=True, verbose=False,
                                                                pad_left=before, pad_right=after)
            seconds += time.perf_counter() - t0
            entry = {"id": i, "words": list(obs.FORM), "matrix": np.asarray(matrix).tolist()}
            if not args.skip_trees:
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
