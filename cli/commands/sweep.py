"""``pmask sweep``: score every layer (one model pass) and plot score against layer.

The command over :mod:`pmask.eval.studies.sweep` (the same concept, one layer up).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from pmask.cli.args import (
    add_allow_incomplete,
    add_decoder,
    add_dry_run,
    add_input,
    add_model,
    add_punct,
    add_root,
    add_score,
    add_seed,
    add_store_cache,
    add_tables,
    layers_arg,
)
from pmask.cli.commands.command import COMMANDS, Command
from pmask.cli.commands.shared import STORE_HINT, announce, check_cache_store, decoding_interrupted, request_of
from pmask.cli.outcome import Outcome
from pmask.trees.tasks import TASKS


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", type=Path, help="gold corpus (CoNLL-U or PTB), or a store made from one")
    add_input(p)
    add_model(p, several_probes=True)
    p.add_argument("--layers", type=layers_arg, default="all", help="layers to score, or 'all'")
    add_decoder(p, None, "default: {} for CoNLL-U, {} for PTB".format(*(t.default_decoder for t in TASKS.values())))
    add_root(p)
    p.add_argument("--faithful", action="store_true", help="the authors' pipeline (see parse --help)")
    add_punct(p)
    p.add_argument("--baselines", action="store_true", help="draw the baselines as horizontal lines")
    add_score(p, "every layer and baseline (--json, --csv)")
    add_store_cache(p)
    add_allow_incomplete(p)
    add_seed(p)
    p.add_argument("--plot", type=Path, default=None, metavar="PNG", help="line plot of score against layer")
    add_tables(p)
    add_dry_run(p)


def run(args: argparse.Namespace) -> Outcome:
    from pmask.eval.studies.sweep import plan_sweep

    # read, resolved, checked: one line if refused
    plan = plan_sweep(request_of(args), args.probe, store=args.store, corpus=args.corpus, progress=not args.quiet,
                      label=args.source, allow_incomplete=args.allow_incomplete, punct=args.punct,
                      baselines=args.baselines, scores=args.scores or ())
    if (dry := announce(args, plan.computations())) is not None:
        return dry
    result = plan.run()
    if args.plot:
        result.plot(args.plot)
    if args.json:
        result.sweep.write_json(args.json)
    if args.csv:
        result.sweep.write_csv(args.csv)
    return Outcome(table=result.sweep.to_markdown(), summary=f"wrote {args.plot}" if args.plot else None)


def check(args: argparse.Namespace) -> None:
    check_cache_store(args)


def interrupted(args: argparse.Namespace) -> str:
    return decoding_interrupted(args, STORE_HINT)


COMMAND = COMMANDS.register(Command(
    "sweep", add_arguments=add_arguments, run=run, check=check, interrupted=interrupted,
    help="score every layer (one model pass) and plot score against layer",
    description="Decode the impacts of every requested layer and score each against the gold trees in the "
                "input; prints one row per layer (and probe) and optionally plots UAS/F1 against layer, one "
                "line per probe.",
    epilog="examples:\n"
           "  pmask sweep en_pud-ud-test.conllu --model bert-base-uncased --root gold --plot layers.png\n"
           "  pmask sweep en_pud-ud-test.conllu --model bert-base-uncased --probes pair,single,attention "
           "--plot probes.png"))
