"""Argument helpers shared by the ``pmask`` subcommands: the help formatter, argument types and
the option groups every command builds on. Each flag that more than one command takes is
spelled here once (name, type, default, help): corpus input (:func:`add_input`), model
(:func:`add_model`), decoder and root (:func:`add_decoder`, :func:`add_root`), a prediction and
its gold (:func:`add_prediction`), impacts cached in a store (:func:`add_store_cache`), scoring
(:func:`add_punct`, :func:`add_seed`), extra score files (:func:`add_tables`) and the output
(:func:`add_output`, whose help says what the command writes).

A command (one module of :mod:`pmask.cli.commands`) adds the groups it needs in its
``add_arguments``, e.g.::

    def add_arguments(p: argparse.ArgumentParser) -> None:
        add_input(p)
        add_model(p)
        add_output(p, "the file to write")

(:func:`command`, which :func:`pmask.cli.dispatch.build_parser` calls, makes its parser.)

A new shared flag is one function here; paths it names go into :data:`INPUT_ARGS` or
:data:`OUTPUT_ARGS` so that no output can replace an input.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pmask.common.errors import OptionError
from pmask.common.options import (
    ATTENTION_HEAD_MODES,
    DTYPES,
    METRICS,
    PROBE_METRICS,
    PROBES,
    PUNCT_MODES,
    ROOT_MODES,
    SUBWORD_POLICIES,
    SYMMETRIZE_MODES,
    TOKENIZE_MODES,
    parse_attention_head,
    split_metrics,
    split_probes,
)
from pmask.common.registry import EntryNames
from pmask.corpora.formats import CORPUS_FORMATS
from pmask.perturb.models.bundled import DEFAULT_MODEL
from pmask.trees.registry import decoder_names, decoder_needs_model

#: Argument names (``args.<name>``) holding input paths, and output paths (checked by ``pmask.cli.dispatch``).
INPUT_ARGS = ("input", "source", "pred", "gold", "corpus", "store", "bench", "inputs")
OUTPUT_ARGS = ("output", "json", "csv", "plot")


class HelpFormatter(argparse.HelpFormatter):
    """Wraps descriptions, keeps example epilogs as written, shows only informative defaults."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("example"):
            return "\n".join(indent + line for line in text.splitlines())
        return super()._fill_text(text, width, indent)

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if ("%(default)" not in text and action.option_strings and action.nargs != 0
                and action.default not in (None, argparse.SUPPRESS)):
            text += " (default: %(default)s)"
        return text


def layers_arg(text: str) -> list[int] | str:
    if text == "all":
        return "all"
    try:
        return [int(x) for x in text.replace(",", " ").split()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"layers must be integers like '-1' or '0,6,12' or 'all', not '{text}'") from None


def seconds_arg(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, not '{text}'") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds, not {text}")
    return value


def _whole_number(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not '{text}'") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"must be {least} or more, not {value}")
    return value


def count_arg(text: str) -> int:
    return _whole_number(text, 0)


def positive_int(text: str) -> int:
    return _whole_number(text, 1)


def probes_arg(text: str) -> list[str]:
    try:
        return split_probes(text)
    except OptionError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def metrics_arg(text: str) -> list[str]:
    try:
        return split_metrics(text)
    except OptionError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def head_arg(text: str) -> str | int | None:
    try:
        return parse_attention_head(text)
    except OptionError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


MAX_WORDS_HELP = ("keep sentences of at most N words (PTB: counted after removing punctuation, traces and $/#, "
                  "the WSJ10 filter; other formats: every word counts)")


def add_input(p: argparse.ArgumentParser, what: str = "corpus") -> None:
    p.add_argument("--format", default="auto", choices=list(CORPUS_FORMATS),
                   help=f"{what} format (auto: from the file suffix; text = one whitespace-tokenised sentence "
                        "per line)")
    p.add_argument("--limit", type=positive_int, default=None, metavar="N", help="use only the first N sentences")
    p.add_argument("--max-words", type=positive_int, default=None, metavar="N", help=MAX_WORDS_HELP)


def add_probe(g: argparse._ArgumentGroup, several: bool) -> None:
    """``--probe`` (one name; with ``several`` a comma-separated list, also spelled ``--probes``) and ``--head``."""
    text = "; ".join(f"{k} = {v.split(':', 1)[0]}" for k, v in PROBES.items())
    if several:
        g.add_argument("--probes", "--probe", dest="probe", type=probes_arg, default=None, metavar="LIST",
                       help=f"comma-separated probes, each scored on its own ({text}; see the README's Probes section)")
    else:
        g.add_argument("--probe", default=None, choices=list(PROBES),
                       help=f"how impacts are read out of the model ({text}; a store's own when reading a store; "
                            "see the README's Probes section)")
    g.add_argument("--head", type=head_arg, default=None, metavar="N|mean|max",
                   help="attention head decoded by probe attention and distance with jsd/hellinger: a head number "
                        f"from 0, or {' / '.join(f'{k} ({v})' for k, v in ATTENTION_HEAD_MODES.items())}")


def add_model(p: argparse.ArgumentParser, several_probes: bool = False) -> None:
    g = p.add_argument_group("model")
    g.add_argument("--model", "-m", metavar="M",
                   help="Hugging Face language model (masked LM, decoder-only LLM, BART, XLNet): hub name, local "
                        "directory, a .gguf file or a bundled model's name; 'random:NAME' = "
                        f"NAME's architecture with random weights (the random-BERT baseline); default: the bundled "
                        f"{DEFAULT_MODEL} (a small English model for demos and offline trials)")
    g.add_argument("--random-init", action="store_true", help="use --model's architecture with random weights")
    g.add_argument("--metric", default=None, choices=list(METRICS),
                   help="impact metric; per probe: "
                        + "; ".join(f"{k}: {', '.join(v)}" for k, v in PROBE_METRICS.items())
                        + " (default: the probe's first; a store's own when reading a store)")
    g.add_argument("--subword", default=None, choices=list(SUBWORD_POLICIES),
                   help="merge policy over the measured word's pieces (default: avg; a store's own)")
    g.add_argument("--tokenize", default=None, choices=list(TOKENIZE_MODES),
                   help="; ".join(f"{k}: {v}" for k, v in TOKENIZE_MODES.items()) + " (default: words; a store's own)")
    g.add_argument("--context", type=count_arg, default=None, metavar="N",
                   help="give the model neighbouring sentences of the same file around each sentence until it has "
                        "at least N words (Hoover et al.'s --pad; never masked or scored; default 0, 30 with "
                        "--faithful --metric cpmi; a store's own)")
    g.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:K")
    g.add_argument("--dtype", default="auto", choices=list(DTYPES), help="auto = the engine's default for the device")
    g.add_argument("--batch-tokens", type=positive_int, default=None, metavar="N",
                   help="token budget per forward batch")
    g.add_argument("--threads", type=positive_int, default=None, metavar="N",
                   help="CPU threads for the model (default: torch's, one per core); on a machine busy with other "
                        "jobs fewer threads are often faster: try 1 or 2")
    add_probe(g, several_probes)


def add_bias(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bias", type=float, default=0.0, metavar="LAMBDA",
                   help="right-branching bias of the distance-split decoder (Kim et al. 2020; 0 = none)")


def add_symmetrize(p: argparse.ArgumentParser) -> None:
    """``--symmetrize`` and ``--absolute``: how F is made symmetric before any decoder reads it."""
    p.add_argument("--symmetrize", default=None, choices=list(SYMMETRIZE_MODES),
                   help="make F symmetric before decoding: "
                        + "; ".join(f"{k}: {v}" for k, v in SYMMETRIZE_MODES.items())
                        + " (default none; sum with --faithful --metric cpmi)")
    p.add_argument("--absolute", action="store_true", help="decode |F| (Hoover et al.'s --absolute_value), before "
                                                          "--symmetrize")


def add_decoder(p: argparse.ArgumentParser, default: str | None, text: str) -> None:
    p.add_argument("--decoder", "-d", default=default, choices=decoder_names(), metavar="NAME", help=text)
    add_bias(p)
    add_symmetrize(p)


def reads_impacts(args: argparse.Namespace) -> bool:
    """Whether the ``--decoder`` of ``args`` reads impacts: a model decoder, or none named (the
    default, picked from the input once it is read, is a model decoder for every task)."""
    return args.decoder is None or decoder_needs_model(args.decoder)


def add_root(p: argparse.ArgumentParser) -> None:
    p.add_argument("--root", default=None, choices=sorted(ROOT_MODES),
                   help="; ".join(f"{k}: {v}" for k, v in ROOT_MODES.items()) + " (default: gold when every sentence "
                        "has gold heads, else free)")


def add_prediction(p: argparse.ArgumentParser) -> None:
    """The predicted trees (positional ``pred``) and ``--gold`` to score them against."""
    p.add_argument("pred", type=Path, help="predicted .conllu, or bracketed trees one per line (- reads standard "
                   "input: no .meta.json then, so name any --max-words yourself)")
    p.add_argument("--gold", type=Path, required=True, help="gold CoNLL-U, or PTB .mrg file/directory")


def add_store_cache(p: argparse.ArgumentParser) -> None:
    """``--store`` (impacts computed from a corpus SOURCE are cached there) and ``--corpus`` (the
    corpus of a store SOURCE)."""
    p.add_argument("--store", type=Path, default=None, metavar="DIR", help="cache impacts in this store (resumable)")
    p.add_argument("--corpus", type=Path, default=None,
                   help="with a store SOURCE: the corpus it was made from (default: the path in its manifest)")


def add_allow_incomplete(p: argparse.ArgumentParser) -> None:
    """``--allow-incomplete``: read an unfinished store (refused by default)."""
    p.add_argument("--allow-incomplete", action="store_true",
                   help="read an unfinished store (interrupted, or still being written) anyway: the results cover "
                        "only the sentences it holds, and a warning and the output's records say so")


def add_punct(p: argparse.ArgumentParser) -> None:
    p.add_argument("--punct", default="include", choices=list(PUNCT_MODES),
                   help="score punctuation words (the paper includes them)")


def add_seed(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=int, default=0, help="seed of the random baselines")


def add_tables(p: argparse.ArgumentParser) -> None:
    """``--json`` and ``--csv``: the scores written to files beside the table printed."""
    p.add_argument("--json", type=Path, default=None, metavar="F", help="also write the scores as JSON")
    p.add_argument("--csv", type=Path, default=None, metavar="F", help="also write the table as CSV")


def _optional_scores() -> tuple[str, ...]:
    """The optional scores' names (:func:`pmask.eval.scores.columns.optional_scores`), imported when first asked:
    building the parser of a command that scores nothing loads no ``pmask.eval``."""
    from pmask.eval.scores.columns import optional_scores

    return tuple(optional_scores())


#: ``--score`` choices: a live view, read when ``--score`` is given or its help shown.
OPTIONAL_SCORES = EntryNames(_optional_scores)


def add_score(p: argparse.ArgumentParser, where: str) -> None:
    """``--score NAME`` (repeatable): an optional score by name, added to ``where``; its choices are the
    registered optional scores (``hoover_uuas``)."""
    p.add_argument("--score", action="append", dest="scores", default=None, choices=OPTIONAL_SCORES, metavar="NAME",
                   help=f"add an optional score to {where} (repeatable): %(choices)s")


def add_dry_run(p: argparse.ArgumentParser) -> None:
    """``--dry-run``: the checks and the cost line (sentences, sequences, tokens, time), then stop."""
    p.add_argument("--dry-run", action="store_true",
                   help="check the settings and print what the run would compute (sentences, forward sequences, "
                        "tokens, rough time on this machine), then stop: no weights loaded, nothing written")


def add_output(p: argparse.ArgumentParser, text: str, metavar: str | None = None) -> None:
    """The required ``-o/--output``; ``text`` says what is written there (a file or a folder)."""
    p.add_argument("-o", "--output", type=Path, required=True, metavar=metavar, help=text)


def option_names(parser: argparse.ArgumentParser) -> dict[str, str]:
    """``{argument name: its long flag}`` over every subcommand (e.g. ``max_words`` -> ``--max-words``),
    for naming settings in error messages."""
    names: dict[str, str] = {}
    parsers = [parser]
    while parsers:
        current = parsers.pop(0)
        for action in current._actions:
            if isinstance(action, argparse._SubParsersAction):
                parsers.extend(action.choices.values())
            longs = [o for o in action.option_strings if o.startswith("--")]
            if longs:
                names.setdefault(action.dest, longs[0])
    return names


def verbosity() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_mutually_exclusive_group()
    group.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv: debug, tracebacks)")
    group.add_argument("-q", "--quiet", action="store_true", help="only errors; no progress bars")
    return parent


def command(sub: argparse._SubParsersAction, name: str, **text: Any) -> argparse.ArgumentParser:
    """A subcommand with -v/-q and the shared help formatter; ``text``: help, description, epilog."""
    return sub.add_parser(name, parents=[verbosity()], formatter_class=HelpFormatter, **text)
