"""``pmask impact``: compute the impact matrices of a corpus into a store."""
from __future__ import annotations

import argparse
from pathlib import Path

from pmask.cli.args import add_dry_run, add_input, add_model, add_output, layers_arg, seconds_arg
from pmask.cli.commands.command import COMMANDS, Command
from pmask.cli.commands.shared import announce, corpus_spec, kept, request_of, stored_sentences
from pmask.cli.outcome import Outcome
from pmask.common.output_checks import Output
from pmask.perturb.store import DEFAULT_SHARD_SECONDS


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", type=Path, help="corpus: CoNLL-U, PTB .mrg file or directory, .dp, or text")
    add_input(p)
    add_model(p)
    p.add_argument("--layers", type=layers_arg, default=[-1],
                   help="layers to keep: 0 = embeddings … L = last, negative from the end, or 'all'")
    again = p.add_mutually_exclusive_group()
    again.add_argument("--resume", action="store_true", help="continue an interrupted store (no work if complete)")
    again.add_argument("--overwrite", action="store_true", help="replace an existing store")
    p.add_argument("--shard-seconds", type=seconds_arg, default=DEFAULT_SHARD_SECONDS, metavar="S",
                   help="save a shard after at most S seconds of work (or 64 sentences), so that a hard kill "
                        "loses at most that much")
    add_dry_run(p)
    add_output(p, "store directory", metavar="STORE")


def run(args: argparse.Namespace) -> Outcome:
    from dataclasses import replace

    from pmask.perturb.fill.estimate import computation
    from pmask.perturb.source import build_store
    from pmask.pipeline.request import Inputs, check_request, model_family_of, resolve, with_family

    corpus = corpus_spec(args, args.input)
    sentences = corpus.read()   # once: the checks, the cost line and the store read these
    # impacts computed: no store's settings, no --faithful; the corpus decides (documents: their metric)
    given, inputs = request_of(args), Inputs.of(sentences)
    request = resolve(given, inputs)
    check_request(request, sentences, decodes=False)
    family = model_family_of(request.model)   # its defaults and refusals, before any weights load
    request = with_family(request, resolve(given, replace(inputs, family=family)), sentences, decodes=False)
    work = computation(request.model, sentences, store=args.output, resume=args.resume)
    if (dry := announce(args, [work])) is not None:
        return dry
    result = build_store(corpus, request.model, args.output, layers=args.layers, resume=args.resume,
                         overwrite=args.overwrite, progress=not args.quiet, shard_seconds=args.shard_seconds,
                         sentences=sentences)
    return Outcome(summary=result.describe() if result.is_main else None)   # under torchrun, rank 0 alone reports


def outputs(args: argparse.Namespace) -> list[Output]:
    return [Output(args.output, folder=True)]


def interrupted(args: argparse.Namespace) -> str:
    return kept(args.output, stored_sentences(Path(args.output)), "rerun the same command with --resume to continue")


COMMAND = COMMANDS.register(Command(
    "impact", add_arguments=add_arguments, run=run, outputs=outputs, interrupted=interrupted,
    help="compute impact matrices into a store",
    description="Compute the perturbed-masking impact matrices of a corpus into a store directory "
                "(safetensors shards + manifest.json). Interrupted runs continue with --resume.",
    epilog="example:\n  pmask impact en_pud-ud-test.conllu --model bert-base-uncased --layers all -o pud-store/"))
