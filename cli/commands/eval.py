"""``pmask eval``: score predicted trees against gold, and the baselines on the same sentences."""
from __future__ import annotations

import argparse

from pmask.cli.args import (
    MAX_WORDS_HELP,
    add_prediction,
    add_punct,
    add_score,
    add_seed,
    add_tables,
    positive_int,
)
from pmask.cli.commands.command import COMMANDS, Command
from pmask.cli.outcome import Outcome
from pmask.common.options import ROOT_MODES


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_prediction(p)
    p.add_argument("--max-words", type=positive_int, default=None, metavar="N",
                   help=MAX_WORDS_HELP + "; default: the prediction's own, from its .meta.json")
    add_punct(p)
    p.add_argument("--baselines", action="store_true", help="add every baseline's scores on the same sentences")
    p.add_argument("--root", default=None, choices=sorted(ROOT_MODES),
                   help="root setting of the dependency baselines (default: the prediction's, else gold)")
    add_seed(p)
    add_tables(p)
    p.add_argument("--details", action="store_true",
                   help="print breakdowns: by relation, arc length and sentence length (brackets: by span length "
                        "and gold label); --json holds them always")
    p.add_argument("--subtypes", action="store_true",
                   help="break relations down with their subtypes (nmod:poss apart from nmod); default: "
                        "subtypes count under their universal relation")
    add_score(p, "every row, --json and --csv")
    p.add_argument("--hoover-uuas", action="append_const", dest="scores", const="hoover_uuas",
                   help="add UUAS as Hoover et al. 2021 score CPMI trees to every row, --json and --csv: non-PUNCT "
                        "words only, gold edges their spanning tree, pooled and per-sentence mean (dependency "
                        "predictions; see the README's CPMI section)")


def run(args: argparse.Namespace) -> Outcome:
    from pmask.eval.comparison.compare import evaluate_files

    result = evaluate_files(args.pred, args.gold, punct=args.punct, baselines=args.baselines, root=args.root,
                            seed=args.seed, max_words=args.max_words, subtypes=args.subtypes,
                            scores=args.scores or ())
    assert result.table is not None   # evaluate_files always builds the table
    table = result.table.to_markdown()
    if args.details:
        table += "\n" + result.details_text()
    if args.json:
        result.write_json(args.json)
    if args.csv:
        result.table.write_csv(args.csv)
    return Outcome(table=table)


COMMAND = COMMANDS.register(Command(
    "eval", add_arguments=add_arguments, run=run,
    help="score predicted trees against gold and the baselines",
    description="Score a predicted CoNLL-U file (UAS, UUAS) or bracket file (sentence-level and corpus-level "
                "F1) against gold, optionally next to every baseline decoded on the same sentences.",
    epilog="examples:\n  pmask eval pud.conllu --gold en_pud-ud-test.conllu --baselines --json scores.json\n"
           "  pmask eval wsj10.txt --gold ptb/combined --max-words 10 --baselines"))
