"""What the bert-base-sized benchmarks share: the PUD path, the ``--threads``/``--model-dir`` flags,
and the random bert-base model they run (made once, kept in ``--model-dir``)."""
from __future__ import annotations

import argparse
import os
from pathlib import Path

PUD = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "ud" / "UD_English-PUD" / "en_pud-ud-test.conllu"


def add_model_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--model-dir", type=Path, default=Path("/tmp/pmask-bert-base-random"))


def bert_base(args: argparse.Namespace) -> Path:
    """Set torch's threads and offline mode; the random bert-base model's directory (made if absent)."""
    import torch

    from pmask.perturb.testing import make_random_bert_base

    torch.set_num_threads(args.threads)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if not (args.model_dir / "config.json").is_file():
        make_random_bert_base(args.model_dir)
    return args.model_dir
