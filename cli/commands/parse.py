"""``pmask parse``: induce a tree for every sentence (the main job)."""
from __future__ import annotations

import argparse
from pathlib import Path

from pmask.cli.args import (
    add_allow_incomplete,
    add_decoder,
    add_dry_run,
    add_input,
    add_model,
    add_output,
    add_root,
    add_seed,
    add_store_cache,
    reads_impacts,
)
from pmask.cli.commands.command import COMMANDS, NOTHING, Command
from pmask.cli.commands.shared import (
    STORE_HINT,
    announce,
    check_cache_store,
    command_line,
    computations_of,
    corpus_spec,
    decoding_interrupted,
    request_of,
)
from pmask.cli.outcome import Outcome
from pmask.common.files import is_stdout
from pmask.common.output_checks import Output
from pmask.trees.registry import decoder_names
from pmask.trees.tasks import TASKS


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", type=Path, help="corpus file/directory, or an impact store directory")
    add_input(p)
    add_model(p)
    add_decoder(p, None, "one of: {}; default: {} for CoNLL-U and text, {} for PTB".format(
        ", ".join(decoder_names()), *(t.default_decoder for t in TASKS.values())))
    p.add_argument("--layer", type=int, default=-1, help="layer whose impacts are decoded (-1 = last)")
    add_root(p)
    p.add_argument("--faithful", action="store_true",
                   help="the authors' pipeline: [CLS] layout, their softmax, multi-child-ROOT Eisner / product CLE; "
                        "metric dist unless --metric is given. With --metric cpmi, Hoover et al.'s: tokenize "
                        "words-ptb, --context 30, --symmetrize sum, decoder mst-projective (or mst), punctuation "
                        "left out of the tree")
    p.add_argument("--multiroot", action="store_true", help="allow several words under ROOT (free root only)")
    add_store_cache(p)
    add_allow_incomplete(p)
    p.add_argument("--deprel", default="_", choices=("_", "dep"), help="DEPREL written for every word")
    add_seed(p)
    add_dry_run(p)
    add_output(p, "output .conllu or bracket file")


def run(args: argparse.Namespace) -> Outcome:
    from pmask.perturb.source import ImpactSource
    from pmask.pipeline.induce import check_trees_file, parse_corpus
    from pmask.pipeline.request import prepare

    request = request_of(args)
    needs_model = reads_impacts(args)   # baselines read only the corpus (a store's own corpus)
    source = ImpactSource.open(corpus_spec(args, args.source), model=request.model if needs_model else None,
                               store=args.store if needs_model else None, corpus=args.corpus,
                               progress=not args.quiet, allow_incomplete=args.allow_incomplete)
    done = prepare(request, source)   # every default chosen and checked: one line if refused, before any cost
    check_trees_file(args.output, str(done.decoding.decoder), source.sentences)   # the output, for that decoder
    if (dry := announce(args, computations_of(args, source, done) if needs_model else [])) is not None:
        return dry
    result = parse_corpus(source, args.output, done.decoding, deprel=args.deprel, command=command_line())
    return Outcome(summary=result.describe())


def outputs(args: argparse.Namespace) -> list[Output]:
    from pmask.corpora.provenance import meta_path

    side = [] if is_stdout(args.output) else [Output(meta_path(args.output))]
    return [Output(args.output), *side]


def check(args: argparse.Namespace) -> None:
    from pmask.pipeline.trees_output import check_trees_file, documents_output

    check_cache_store(args)
    if args.decoder is not None and not documents_output(args.output):   # else after reading the input
        check_trees_file(args.output, args.decoder)


def interrupted(args: argparse.Namespace) -> str:
    return decoding_interrupted(args, STORE_HINT) if reads_impacts(args) else NOTHING


COMMAND = COMMANDS.register(Command(
    "parse", add_arguments=add_arguments, run=run, outputs=outputs, check=check, interrupted=interrupted,
    help="induce trees (the main job)",
    description="Induce a dependency or constituency tree for every sentence. SOURCE is a corpus (impacts are "
                "computed with --model, and cached when --store is given) or an impact store. Dependency "
                "trees are written as CoNLL-U (the input with HEAD replaced), constituency trees as one "
                "bracketed tree per line. A <OUTPUT>.meta.json beside the output records how it was made.",
    epilog="examples:\n"
           "  pmask parse en_pud-ud-test.conllu --model bert-base-uncased --decoder eisner --root gold "
           "-o pud.conllu\n"
           "  pmask parse PUD.conllu --model bert-base-uncased --root gold --faithful -o paper.conllu\n"
           "  pmask parse ptb/combined --max-words 10 --model bert-base-uncased --decoder mart -o wsj10.txt\n"
           "  pmask parse PUD.conllu --decoder right-chain --root gold -o right-chain.conllu"))
