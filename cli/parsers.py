"""The ``pmask`` argument parsers: :func:`build_parser` and one ``_add_<command>_parser`` per
command, built from the shared option groups of :mod:`pmask.cli.args`; each sets its
``cmd_<command>`` (:mod:`pmask.cli.commands`) as ``func``.

A new command is one ``_add_<command>_parser(sub)`` here (listed in :func:`build_parser`) and
one ``cmd_<command>`` in :mod:`pmask.cli.commands`.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from pmask.cli.args import (
    MAX_WORDS_HELP,
    HelpFormatter,
    add_allow_incomplete,
    add_bias,
    add_decoder,
    add_input,
    add_model,
    add_output,
    add_prediction,
    add_punct,
    add_root,
    add_seed,
    add_store_cache,
    add_symmetrize,
    add_tables,
    command,
    layers_arg,
    metrics_arg,
    positive_int,
    seconds_arg,
)
from pmask.cli.commands import (
    cmd_bench,
    cmd_eval,
    cmd_export,
    cmd_heatmap,
    cmd_impact,
    cmd_info,
    cmd_parse,
    cmd_report,
    cmd_sweep,
)
from pmask.common.options import ROOT_MODES
from pmask.common.version import __version__
from pmask.eval.heatmap import HEATMAP_FORMATS
from pmask.perturb.store import DEFAULT_SHARD_SECONDS, EXPORT_FORMATS
from pmask.trees.registry import decoder_names
from pmask.trees.tasks import task_info


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pmask", formatter_class=HelpFormatter,
        description="Induce syntax from masked language models with Perturbed Masking (Wu et al., ACL 2020).",
        epilog="example:\n  pmask parse en_pud-ud-test.conllu --model bert-base-uncased --root gold -o pud.conllu\n"
               "  pmask eval pud.conllu --gold en_pud-ud-test.conllu --baselines")
    parser.add_argument("--version", action="version", version=f"pmask {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in (_add_impact_parser, _add_parse_parser, _add_eval_parser, _add_heatmap_parser, _add_sweep_parser,
                _add_export_parser, _add_report_parser, _add_bench_parser, _add_info_parser):
        add(sub)
    return parser


def _add_impact_parser(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub, "impact",
        help="compute impact matrices into a store",
        description="Compute the perturbed-masking impact matrices of a corpus into a store directory "
                    "(safetensors shards + manifest.json). Interrupted runs continue with --resume.",
        epilog="example:\n  pmask impact en_pud-ud-test.conllu --model bert-base-uncased --layers all -o pud-store/")
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
    add_output(p, "store directory", metavar="STORE")
    p.set_defaults(func=cmd_impact)


def _add_parse_parser(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub, "parse",
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
               "  pmask parse PUD.conllu --decoder right-chain --root gold -o right-chain.conllu")
    p.add_argument("source", type=Path, help="corpus file/directory, or an impact store directory")
    add_input(p)
    add_model(p)
    add_decoder(p, None, "one of: {}; default: {} for CoNLL-U and text, {} for PTB".format(
        ", ".join(decoder_names()), *(task_info(t).default_decoder for t in ("dependency", "constituency"))))
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
    add_output(p, "output .conllu or bracket file")
    p.set_defaults(func=cmd_parse)


def _add_eval_parser(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub, "eval",
        help="score predicted trees against gold and the baselines",
        description="Score a predicted CoNLL-U file (UAS, UUAS) or bracket file (sentence-level and corpus-level "
                    "F1) against gold, optionally next to every baseline decoded on the same sentences.",
        epilog="examples:\n  pmask eval pud.conllu --gold en_pud-ud-test.conllu --baselines --json scores.json\n"
               "  pmask eval wsj10.txt --gold ptb/combined --max-words 10 --baselines")
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
                   help="print breakdowns by relation, arc length and sentence length (--json holds them always)")
    p.add_argument("--subtypes", action="store_true",
                   help="break relations down with their subtypes (nmod:poss apart from nmod); default: "
                        "subtypes count under their universal relation")
    p.add_argument("--hoover-uuas", action="store_true",
                   help="also print UUAS as Hoover et al. 2021 score CPMI trees: non-PUNCT words only, gold edges "
                        "their spanning tree, pooled and per-sentence mean (see the README's CPMI section)")
    p.set_defaults(func=cmd_eval)


def _add_heatmap_parser(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub, "heatmap",
        help="draw impact maps (PNG, SVG, PDF or self-contained HTML)",
        description="Draw the impact matrix of one or more sentences, word labels on both axes, optionally with the "
                    "gold arcs. SOURCE is a store or a corpus (then --model computes the matrices).",
        epilog="examples:\n  pmask heatmap pud-store/ --sentence n01001011 --gold en_pud-ud-test.conllu -o s1.png\n"
               "  pmask heatmap en_pud-ud-test.conllu --model bert-base-uncased --sentence 0-9 -o maps/ --as html")
    p.add_argument("source", type=Path, help="impact store directory, or corpus file")
    add_input(p)
    add_model(p)
    p.add_argument("--sentence", "-s", action="append", required=True, metavar="ID|INDEX",
                   help="sentence id, 0-based index or range A-B (repeatable; 'all' for every sentence)")
    p.add_argument("--layer", type=int, default=-1, help="layer to draw (-1 = last)")
    p.add_argument("--gold", type=Path, default=None, help="CoNLL-U whose gold arcs are drawn over the map")
    p.add_argument("--pred", type=Path, default=None, metavar="PRED", help="predicted CoNLL-U (pmask parse) whose "
                   "heads are drawn as dots; default gold arcs: the source's own heads")
    p.add_argument("--as", dest="fmt", default="png", choices=list(HEATMAP_FORMATS),
                   help="file type when OUTPUT is a folder")
    add_output(p, "FILE.{png,svg,pdf,html}, or a folder")
    p.set_defaults(func=cmd_heatmap)


def _add_sweep_parser(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub, "sweep",
        help="score every layer (one model pass) and plot score against layer",
        description="Decode the impacts of every requested layer and score each against the gold trees in the "
                    "input; prints one row per layer (and probe) and optionally plots UAS/F1 against layer, one "
                    "line per probe.",
        epilog="examples:\n"
               "  pmask sweep en_pud-ud-test.conllu --model bert-base-uncased --root gold --plot layers.png\n"
               "  pmask sweep en_pud-ud-test.conllu --model bert-base-uncased --probes pair,single,attention "
               "--plot probes.png")
    p.add_argument("source", type=Path, help="gold corpus (CoNLL-U or PTB), or a store made from one")
    add_input(p)
    add_model(p, several_probes=True)
    p.add_argument("--layers", type=layers_arg, default="all", help="layers to score, or 'all'")
    add_decoder(p, None, "default: {} for CoNLL-U, {} for PTB".format(*(
        task_info(t).default_decoder for t in ("dependency", "constituency"))))
    add_root(p)
    p.add_argument("--faithful", action="store_true", help="the authors' pipeline (see parse --help)")
    add_punct(p)
    p.add_argument("--baselines", action="store_true", help="draw the baselines as horizontal lines")
    add_store_cache(p)
    add_allow_incomplete(p)
    add_seed(p)
    p.add_argument("--plot", type=Path, default=None, metavar="PNG", help="line plot of score against layer")
    add_tables(p)
    p.set_defaults(func=cmd_sweep)


def _add_export_parser(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub, "export",
        help="write a store's matrices as .npy, CSV or JSON",
        description="Export the word-level impact matrices of a store (matrix[i, j] = impact of word j on word i) "
                    "so they can be used without Python: npy and csv write a folder with one file per sentence "
                    "and layer plus index.json, json writes one file.",
        epilog="example:\n  pmask export pud-store/ --format csv --layers -1 -o pud-csv/")
    p.add_argument("store", type=Path, help="impact store directory")
    p.add_argument("--format", default="npy", choices=list(EXPORT_FORMATS),
                   help="; ".join(f"{k}: {v}" for k, v in EXPORT_FORMATS.items()))
    p.add_argument("--layers", type=layers_arg, default=None, help="layers to export (default: every stored layer)")
    add_output(p, "folder (npy, csv) or file (json)")
    p.set_defaults(func=cmd_export)


def _add_report_parser(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub, "report",
        help="one self-contained HTML report: scores, failures, trees, impact maps",
        description="Write one HTML file (no external resources) with the prediction's scores next to every "
                    "baseline, where it fails, a browser of every sentence's predicted and gold trees, the "
                    "impact maps from a store, and the layer/language view of a bench directory.",
        epilog="example:\n  pmask report pud.conllu --gold en_pud-ud-test.conllu --store pud-store/ -o report.html")
    add_prediction(p)
    p.add_argument("--max-words", type=positive_int, default=None, metavar="N",
                   help=MAX_WORDS_HELP + "; default: the prediction's own, from its .meta.json (as eval)")
    p.add_argument("--store", type=Path, default=None, metavar="DIR", help="impact store: draw every stored layer")
    p.add_argument("--bench", type=Path, default=None, metavar="DIR", help="pmask bench output directory")
    add_punct(p)
    p.add_argument("--title", default=None, help="page title")
    add_output(p, "the .html file to write")
    p.set_defaults(func=cmd_report)


def _add_bench_parser(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub, "bench",
        help="a probing study: many treebanks x layers x decoders, with baselines",
        description="Score every treebank x probe x layer x decoder against gold, next to the baselines on the "
                    "same sentences. One model pass per treebank and probe into a resumable store under OUTDIR/stores; "
                    "rerunning reuses every finished store without loading the model (more treebanks, probes, "
                    "metrics, layers or decoders extend the study; other settings are refused, scoring ones unless "
                    "--rescore). Writes results.json, results.csv, results.md, layers.png and "
                    "heatmap-<decoder>.png into OUTDIR and prints the best setting per treebank.",
        epilog="example:\n  pmask bench ../shared/data/ud/UD_*-PUD/*.conllu --model bert-base-multilingual-cased "
               "--layers all --decoders eisner,cle --root gold --tokenize text -o mbert-pud/")
    p.add_argument("inputs", type=Path, nargs="+", metavar="TREEBANK",
                   help="CoNLL-U files/folders, PTB .mrg file/folder")
    add_model(p, several_probes=True)
    p.add_argument("--metrics", type=metrics_arg, default=None, metavar="LIST",
                   help="comma-separated impact metrics, each scored on its own store for every probe given (each "
                        "probe must take every one; instead of --metric, which is the one-metric case)")
    p.add_argument("--layers", type=layers_arg, default="all", help="layers to score, or 'all' (1..L)")
    p.add_argument("--decoders", default=None, metavar="LIST",
                   help="comma-separated decoders (default: {} for CoNLL-U, {} for PTB)".format(*(
                       ",".join(task_info(t).default_decoders) for t in ("dependency", "constituency"))))
    add_bias(p)
    add_symmetrize(p)
    add_root(p)
    p.add_argument("--limit", type=positive_int, default=None, metavar="N", help="first N sentences of each treebank")
    p.add_argument("--max-words", type=positive_int, default=None, metavar="N", help=MAX_WORDS_HELP)
    add_punct(p)
    add_seed(p)
    p.add_argument("--rescore", action="store_true",
                   help="OUTDIR holds a study with other scoring settings (--root, --punct, --seed, --bias, --head) "
                        "or more treebanks, probes, metrics, layers or decoders: replace its results, reusing its "
                        "stores (another model or sentence selection always needs another OUTDIR)")
    add_output(p, "output directory", metavar="OUTDIR")
    p.set_defaults(func=cmd_bench)


def _add_info_parser(sub: argparse._SubParsersAction) -> None:
    """The ``info`` subcommand."""
    p = command(
        sub, "info",
        help="what an impact store holds: corpus, selection, sentences, layers, model, settings",
        description="Describe an impact store from its manifest: the corpus it was made from and the selection "
                    "(format, --limit, --max-words) it was read with, how many sentences it holds, its layers, "
                    "the model and the impact settings. Loads no model and reads no shard.",
        epilog="examples:\n  pmask info pud-store/\n  pmask info pud-store/ --json")
    p.add_argument("store", type=Path, help="impact store directory")
    p.add_argument("--json", action="store_true", help="print the description as JSON")
    p.set_defaults(func=cmd_info)
