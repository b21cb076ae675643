"""The ``pmask`` command: thin wrappers over library functions that return data.

Exit codes: 0 ok, 1 failure (a one-line ``pmask: error: …`` on stderr), 2 usage error.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from pmask import __version__
from pmask.errors import PmaskError
from pmask.files import atomic_write, sha256_file

logger = logging.getLogger("pmask")

METRICS = ("dist", "prob", "cos")
SUBWORDS = ("avg", "first", "sum", "max")
DTYPES = ("auto", "float32", "bfloat16", "float16")
FORMATS = ("auto", "conllu", "ptb", "dep3", "text")


# ---------------------------------------------------------------------------- argument parsing

class _Formatter(argparse.HelpFormatter):
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


def _decoder_names() -> list[str]:
    from pmask.trees.registry import CONSTITUENCY_DECODERS, DEPENDENCY_DECODERS

    return [*DEPENDENCY_DECODERS, *CONSTITUENCY_DECODERS]


def _layers_arg(text: str) -> list[int] | str:
    if text == "all":
        return "all"
    try:
        return [int(x) for x in text.replace(",", " ").split()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"layers must be integers like '-1' or '0,6,12' or 'all', not '{text}'")


def _add_input(p: argparse.ArgumentParser, what: str = "corpus") -> None:
    p.add_argument("--format", default="auto", choices=FORMATS, help=f"{what} format (auto: from the file suffix)")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="use only the first N sentences")
    p.add_argument("--max-words", type=int, default=None, metavar="N",
                   help="PTB: WSJ10-style filter, keep sentences of at most N words (no punctuation or traces)")


def _add_model(p: argparse.ArgumentParser, required: bool = False) -> None:
    g = p.add_argument_group("model")
    g.add_argument("--model", "-m", required=required, metavar="M",
                   help="Hugging Face masked LM: hub name or local directory; 'random:NAME' = NAME's architecture "
                        "with random weights (the random-BERT baseline)")
    g.add_argument("--random-init", action="store_true", help="use --model's architecture with random weights")
    g.add_argument("--metric", default="dist", choices=METRICS, help="impact metric")
    g.add_argument("--subword", default="avg", choices=SUBWORDS, help="merge policy over the measured word's pieces")
    g.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:K")
    g.add_argument("--dtype", default="auto", choices=DTYPES, help="auto = the engine's default for the device")
    g.add_argument("--batch-tokens", type=int, default=None, metavar="N", help="token budget per forward batch")


def _add_tokenize(p: argparse.ArgumentParser) -> None:
    from pmask.perturb.surface import TOKENIZE_MODES

    p.add_argument("--tokenize", default="words", choices=tuple(TOKENIZE_MODES),
                   help="; ".join(f"{k}: {v}" for k, v in TOKENIZE_MODES.items()))


def build_parser() -> argparse.ArgumentParser:
    decoders = _decoder_names()
    parser = argparse.ArgumentParser(
        prog="pmask", formatter_class=_Formatter,
        description="Induce syntax from masked language models with Perturbed Masking (Wu et al., ACL 2020).",
        epilog="example:\n  pmask parse en_pud-ud-test.conllu --model bert-base-uncased --root gold -o pud.conllu\n"
               "  pmask eval pud.conllu --gold en_pud-ud-test.conllu --baselines")
    parser.add_argument("--version", action="version", version=f"pmask {__version__}")
    verbosity = argparse.ArgumentParser(add_help=False)
    vg = verbosity.add_mutually_exclusive_group()
    vg.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv: debug, tracebacks)")
    vg.add_argument("-q", "--quiet", action="store_true", help="only errors; no progress bars")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "impact", parents=[verbosity], formatter_class=_Formatter,
        help="compute impact matrices into a store",
        description="Compute the perturbed-masking impact matrices of a corpus into a store directory "
                    "(safetensors shards + manifest.json). Interrupted runs continue with --resume.",
        epilog="example:\n  pmask impact en_pud-ud-test.conllu --model bert-base-uncased --layers all -o pud-store/")
    p.add_argument("input", type=Path, help="corpus: CoNLL-U, PTB .mrg file or directory, .dp, or text")
    _add_input(p)
    _add_model(p, required=True)
    p.add_argument("--layers", type=_layers_arg, default=[-1],
                   help="layers to keep: 0 = embeddings … L = last, negative from the end, or 'all'")
    p.add_argument("--resume", action="store_true", help="continue an interrupted store (no work if complete)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing store")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="STORE", help="store directory")
    p.set_defaults(func=cmd_impact)

    p = sub.add_parser(
        "parse", parents=[verbosity], formatter_class=_Formatter,
        help="induce trees (the main job)",
        description="Induce a dependency or constituency tree for every sentence. SOURCE is a corpus (impacts are "
                    "computed with --model, and cached when --store is given) or an impact store. Dependency "
                    "trees are written as CoNLL-U (the input with HEAD replaced), constituency trees as one "
                    "bracketed tree per line. A <OUTPUT>.meta.json beside the output records how it was made.",
        epilog="examples:\n"
               "  pmask parse en_pud-ud-test.conllu --model bert-base-uncased --decoder eisner --root gold -o pud.conllu\n"
               "  pmask parse PUD.conllu --model bert-base-uncased --root gold --faithful -o paper.conllu\n"
               "  pmask parse ptb/combined --max-words 10 --model bert-base-uncased --decoder mart -o wsj10.txt\n"
               "  pmask parse PUD.conllu --decoder right-chain --root gold -o right-chain.conllu")
    p.add_argument("source", type=Path, help="corpus file/directory, or an impact store directory")
    _add_input(p)
    _add_model(p)
    p.add_argument("--decoder", "-d", default="eisner", choices=decoders, metavar="NAME",
                   help="one of: " + ", ".join(decoders))
    p.add_argument("--layer", type=int, default=-1, help="layer whose impacts are decoded (-1 = last)")
    p.add_argument("--root", default="free", choices=("free", "gold"),
                   help="gold: the gold root word is ROOT's only child (the paper's setting)")
    p.add_argument("--faithful", action="store_true",
                   help="the authors' pipeline: [CLS] layout, their softmax, multi-child-ROOT Eisner / product CLE")
    p.add_argument("--multiroot", action="store_true", help="allow several words under ROOT (free root only)")
    p.add_argument("--store", type=Path, default=None, metavar="DIR", help="cache impacts in this store (resumable)")
    p.add_argument("--corpus", type=Path, default=None,
                   help="with a store SOURCE: the corpus it was made from (default: the path in its manifest)")
    p.add_argument("--deprel", default="_", choices=("_", "dep"), help="DEPREL written for every word")
    _add_tokenize(p)
    p.add_argument("--seed", type=int, default=0, help="seed of the random baselines")
    p.add_argument("-o", "--output", type=Path, required=True, help="output .conllu or bracket file")
    p.set_defaults(func=cmd_parse)

    p = sub.add_parser(
        "eval", parents=[verbosity], formatter_class=_Formatter,
        help="score predicted trees against gold and the baselines",
        description="Score a predicted CoNLL-U file (UAS, UUAS) or bracket file (sentence-level and corpus-level "
                    "F1) against gold, optionally next to every baseline decoded on the same sentences.",
        epilog="examples:\n  pmask eval pud.conllu --gold en_pud-ud-test.conllu --baselines --json scores.json\n"
               "  pmask eval wsj10.txt --gold ptb/combined --max-words 10 --baselines")
    p.add_argument("pred", type=Path, help="predicted .conllu, or bracketed trees one per line")
    p.add_argument("--gold", type=Path, required=True, help="gold CoNLL-U, or PTB .mrg file/directory")
    p.add_argument("--max-words", type=int, default=None, metavar="N", help="PTB gold: WSJ10-style filter")
    p.add_argument("--punct", default="include", choices=("include", "exclude"),
                   help="score punctuation words (the paper includes them)")
    p.add_argument("--baselines", action="store_true", help="add every baseline's scores on the same sentences")
    p.add_argument("--root", default=None, choices=("free", "gold"),
                   help="root setting of the dependency baselines (default: the prediction's, else gold)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random baselines")
    p.add_argument("--json", type=Path, default=None, metavar="F", help="also write the scores as JSON")
    p.add_argument("--csv", type=Path, default=None, metavar="F", help="also write the table as CSV")
    p.add_argument("--details", action="store_true", help="print breakdowns by relation, arc length and sentence length")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser(
        "heatmap", parents=[verbosity], formatter_class=_Formatter,
        help="draw impact maps (PNG, SVG, PDF or self-contained HTML)",
        description="Draw the impact matrix of one or more sentences, word labels on both axes, optionally with the "
                    "gold arcs. SOURCE is a store or a corpus (then --model computes the matrices).",
        epilog="examples:\n  pmask heatmap pud-store/ --sentence n01001011 --gold en_pud-ud-test.conllu -o s1.png\n"
               "  pmask heatmap en_pud-ud-test.conllu --model bert-base-uncased --sentence 0-9 -o maps/ --as html")
    p.add_argument("source", type=Path, help="impact store directory, or corpus file")
    _add_input(p)
    _add_model(p)
    p.add_argument("--sentence", "-s", action="append", required=True, metavar="ID|INDEX",
                   help="sentence id, 0-based index or range A-B (repeatable; 'all' for every sentence)")
    p.add_argument("--layer", type=int, default=-1, help="layer to draw (-1 = last)")
    p.add_argument("--gold", type=Path, default=None, help="CoNLL-U whose gold arcs are drawn over the map")
    p.add_argument("--as", dest="fmt", default="png", choices=("png", "svg", "pdf", "html"),
                   help="file type when OUTPUT is a folder")
    p.add_argument("-o", "--output", type=Path, required=True, help="FILE.{png,svg,pdf,html}, or a folder")
    p.set_defaults(func=cmd_heatmap)

    p = sub.add_parser(
        "sweep", parents=[verbosity], formatter_class=_Formatter,
        help="score every layer (one model pass) and plot score against layer",
        description="Decode the impacts of every requested layer and score each against the gold trees in the "
                    "input; prints one row per layer and optionally plots UAS/F1 against layer.",
        epilog="example:\n  pmask sweep en_pud-ud-test.conllu --model bert-base-uncased --root gold --plot layers.png")
    p.add_argument("source", type=Path, help="gold corpus (CoNLL-U or PTB), or a store made from one")
    _add_input(p)
    _add_model(p)
    p.add_argument("--layers", type=_layers_arg, default="all", help="layers to score, or 'all'")
    p.add_argument("--decoder", "-d", default=None, choices=decoders, metavar="NAME",
                   help="default: eisner for CoNLL-U, mart for PTB")
    p.add_argument("--root", default="gold", choices=("free", "gold"))
    p.add_argument("--faithful", action="store_true")
    p.add_argument("--punct", default="include", choices=("include", "exclude"))
    p.add_argument("--baselines", action="store_true", help="draw the baselines as horizontal lines")
    p.add_argument("--store", type=Path, default=None, metavar="DIR", help="cache impacts in this store")
    p.add_argument("--corpus", type=Path, default=None, help="with a store SOURCE: its corpus")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--plot", type=Path, default=None, metavar="PNG", help="line plot of score against layer")
    p.add_argument("--json", type=Path, default=None, metavar="F")
    p.add_argument("--csv", type=Path, default=None, metavar="F")
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser(
        "bench", parents=[verbosity], formatter_class=_Formatter,
        help="a probing study: many treebanks x layers x decoders, with baselines",
        description="Score every treebank x layer x decoder against gold, next to the baselines on the same "
                    "sentences. One model pass per treebank into a resumable store under OUTDIR/stores; rerunning "
                    "reuses every finished store without loading the model. Writes results.json, results.csv, "
                    "results.md, layers.png and heatmap-<decoder>.png into OUTDIR.",
        epilog="example:\n  pmask bench ../shared/data/ud/UD_*-PUD/*.conllu --model bert-base-multilingual-cased "
               "--layers all --decoders eisner,cle --root gold --tokenize text -o mbert-pud/")
    p.add_argument("inputs", type=Path, nargs="+", metavar="TREEBANK", help="CoNLL-U files/folders, PTB .mrg file/folder")
    _add_model(p, required=True)
    p.add_argument("--layers", type=_layers_arg, default="all", help="layers to score, or 'all' (1..L)")
    p.add_argument("--decoders", default=None, metavar="LIST",
                   help="comma-separated decoders (default: eisner,cle for CoNLL-U, mart for PTB)")
    p.add_argument("--root", default="gold", choices=("free", "gold"))
    p.add_argument("--limit", type=int, default=None, metavar="N", help="first N sentences of each treebank")
    _add_tokenize(p)
    p.add_argument("--punct", default="include", choices=("include", "exclude"))
    p.add_argument("--seed", type=int, default=0, help="seed of the random baselines")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="OUTDIR", help="output directory")
    p.set_defaults(func=cmd_bench)
    return parser


# ---------------------------------------------------------------------------- shared helpers

def _setup_logging(args: argparse.Namespace) -> None:
    level = logging.WARNING if args.quiet else (logging.DEBUG if args.verbose >= 2 else logging.INFO)
    logging.basicConfig(level=level, format="pmask: %(message)s", stream=sys.stderr, force=True)
    for noisy in ("transformers", "huggingface_hub", "urllib3", "matplotlib", "filelock"):
        logging.getLogger(noisy).setLevel(max(level, logging.WARNING))


def _progress(args: argparse.Namespace) -> bool:
    return not args.quiet


def _is_store(path: Path) -> bool:
    return path.is_dir() and (path / "manifest.json").is_file()


def _read(path: Path, fmt: str = "auto", *, limit: int | None = None, max_words: int | None = None) -> list:
    from pmask.corpora import read_corpus

    if not path.exists():
        raise PmaskError(f"{path}: no such file or directory")
    return read_corpus(path, fmt, max_words=max_words, limit=limit)


def _load_model(args: argparse.Namespace):
    from transformers.utils import logging as hf_logging

    from pmask.perturb import load_model

    hf_logging.disable_progress_bar()
    if not args.model:
        raise PmaskError("this needs --model (a hub name, a local directory, or random:NAME)")
    dtype = None if args.dtype == "auto" else args.dtype
    return load_model(args.model, device=args.device, dtype=dtype, random_init=args.random_init)


def _write_json(path: Path, data: Any) -> None:
    atomic_write(path, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def _source(args: argparse.Namespace, *, layers: Sequence[int] | str, include_cls: bool):
    """(sentences, store or None, corpus path) for a parse/heatmap/sweep SOURCE argument."""
    from pmask.perturb.store import ImpactStore

    if _is_store(args.source):
        store = ImpactStore.open(args.source)
        corpus = getattr(args, "corpus", None) or store.manifest.get("corpus", {}).get("path")
        if not corpus:
            raise PmaskError(f"{args.source}: the store does not record its corpus; name it with --corpus")
        corpus = Path(corpus)
        held = [*store.indices, *(e["index"] for e in store.skipped)]
        limit = min(args.limit or len(held), len(held)) if held else 0
        sentences = _read(corpus, args.format, limit=limit, max_words=args.max_words)
        return sentences, store, corpus
    sentences = _read(args.source, args.format, limit=args.limit, max_words=args.max_words)
    store_dir = getattr(args, "store", None)
    if store_dir is not None:
        from pmask.perturb.pipeline import compute_store

        model = _load_model(args)
        compute_store(model, sentences, store_dir, layers=layers, metric=args.metric, subword=args.subword,
                      batch_tokens=args.batch_tokens, corpus_path=args.source, resume=True,
                      progress=_progress(args), tokenize=getattr(args, "tokenize", "words"))
        return sentences, ImpactStore.open(store_dir), args.source
    return sentences, None, args.source


# ---------------------------------------------------------------------------- commands

def cmd_impact(args: argparse.Namespace) -> int:
    from pmask.perturb.pipeline import compute_store
    from pmask.perturb.store import StoreSettings, plan_store

    sentences = _read(args.input, args.format, limit=args.limit, max_words=args.max_words)
    wanted = StoreSettings(model=args.model, metric=args.metric, subword=args.subword,
                           layers=args.layers if args.layers == "all" else tuple(args.layers),
                           random_init=True if args.random_init else None)
    remaining = plan_store(args.output, sentences, wanted, corpus_path=args.input, resume=args.resume,
                           overwrite=args.overwrite)
    if not remaining and args.resume:  # a finished store: not even the model is loaded
        print(f"{args.output}: 0 computed, {len(sentences)} reused (store complete)")
        return 0
    model = _load_model(args)
    summary = compute_store(model, sentences, args.output, layers=args.layers, metric=args.metric,
                            subword=args.subword, batch_tokens=args.batch_tokens, corpus_path=args.input,
                            resume=args.resume, overwrite=args.overwrite, progress=_progress(args))
    print(f"{args.output}: {summary.computed} computed, {summary.reused} reused, "
          f"{summary.skipped_too_long} skipped as too long, {summary.seconds:.1f} s")
    return 0


def cmd_parse(args: argparse.Namespace) -> int:
    from pmask import induce
    from pmask.corpora import write_brackets, write_conllu

    settings = induce.ParseSettings(decoder=args.decoder, layer=args.layer, root=args.root,
                                    faithful=args.faithful, multiroot=args.multiroot, seed=args.seed)
    task = induce.decoder_task(args.decoder)
    needs_model = induce.decoder_needs_model(args.decoder)
    model_desc: dict[str, Any] | None = None
    t0 = time.perf_counter()
    if not needs_model:
        if _is_store(args.source):
            raise PmaskError(f"decoder '{args.decoder}' needs no impacts; give it the corpus, not a store")
        sentences = _read(args.source, args.format, limit=args.limit, max_words=args.max_words)
        induce.check_settings(settings, sentences)
        impacts = None
        corpus = args.source
    else:
        if not _is_store(args.source) and args.store is None:
            sentences = _read(args.source, args.format, limit=args.limit, max_words=args.max_words)
            induce.check_settings(settings, sentences)
            model = _load_model(args)
            model_desc = model.describe()
            impacts = induce.impacts_from_model(model, sentences, layer=args.layer, metric=args.metric,
                                                subword=args.subword, include_cls=args.faithful,
                                                batch_tokens=args.batch_tokens, progress=_progress(args),
                                                tokenize=args.tokenize)
            corpus = args.source
        else:
            sentences, store, corpus = _source(args, layers=[args.layer], include_cls=args.faithful)
            induce.check_settings(settings, sentences)
            model_desc = store.manifest.get("model")
            impacts = induce.impacts_from_store(store, sentences, layer=args.layer, include_cls=args.faithful)
    summary = induce.ParseSummary()
    parsed = list(induce.parse_sentences(sentences, impacts, settings, summary))
    if task == "dependency":
        write_conllu([p.sentence for p in parsed], [p.heads for p in parsed], args.output, deprel=args.deprel)
    else:
        write_brackets([p.tree for p in parsed], args.output)
    meta = {
        "pmask": __version__, "command": ["pmask", *sys.argv[1:]] if sys.argv else None, "task": task,
        "settings": settings.to_dict(), "model": model_desc,
        "impact": {"metric": args.metric, "subword": args.subword, "tokenize": args.tokenize} if needs_model else None,
        "corpus": {"path": str(corpus), "sha256": sha256_file(corpus) if Path(corpus).is_file() else None, "format": args.format,
                   "limit": args.limit, "max_words": args.max_words},
        "sentences": summary.sentences, "parsed": summary.parsed, "skipped": summary.skipped,
        "seconds": round(time.perf_counter() - t0, 3),
    }
    _write_json(induce.meta_path(args.output), meta)
    skipped = f", {len(summary.skipped)} skipped (too long): {', '.join(summary.skipped[:5])}" if summary.skipped else ""
    print(f"{args.output}: {summary.parsed} {task} trees{skipped}")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from pmask.eval.compare import evaluate_files

    result = evaluate_files(args.pred, args.gold, punct=args.punct, baselines=args.baselines, root=args.root,
                            seed=args.seed, max_words=args.max_words)
    print(result.table.to_markdown())
    if args.details and result.task == "dependency":
        _print_details(result.score)
    if args.json:
        _write_json(args.json, result.to_dict())
    if args.csv:
        result.table.write_csv(args.csv)
    return 0


def _print_details(score: Any) -> None:
    from pmask.bench_scoring import by_sentence_length

    for title, rows in (("by gold relation", score.by_relation()), ("by gold arc length", score.by_length()),
                        ("by sentence length (scored words)", by_sentence_length(score.per_sentence))):
        print(f"\n{title}:")
        for key, row in rows.items():
            print(f"  {key:>12}  {row['correct']:>6}/{row['total']:<6} {row['accuracy']:6.2f}")


def _select(sentences: Sequence[Any], specs: Sequence[str]) -> list[int]:
    """0-based indices for --sentence values: ids, indices, ranges A-B, or 'all'."""
    ids = {s.id: k for k, s in enumerate(sentences)}
    out: list[int] = []
    for spec in specs:
        for part in spec.split(","):
            part = part.strip()
            if part == "all":
                out.extend(range(len(sentences)))
            elif part in ids:
                out.append(ids[part])
            elif part.isdigit() and int(part) < len(sentences):
                out.append(int(part))
            elif "-" in part and all(x.isdigit() for x in part.split("-", 1)):
                a, b = (int(x) for x in part.split("-", 1))
                if b >= len(sentences) or a > b:
                    raise PmaskError(f"--sentence {part}: out of range (0-{len(sentences) - 1})")
                out.extend(range(a, b + 1))
            else:
                raise PmaskError(f"--sentence {part}: no sentence with that id or index")
    return list(dict.fromkeys(out))


def cmd_heatmap(args: argparse.Namespace) -> int:
    from pmask import induce
    from pmask.eval.heatmap import render_heatmap, render_heatmaps

    if _is_store(args.source):
        sentences, store, _ = _source(args, layers=[args.layer], include_cls=False)
        chosen = _select(sentences, args.sentence)
        sub = [sentences[k] for k in chosen]
        mats = []
        for k in chosen:
            item = store.get(k)
            mats.append(None if item is None else item.matrix[item.layer_index(args.layer)])
    else:
        sentences = _read(args.source, args.format, limit=args.limit, max_words=args.max_words)
        chosen = _select(sentences, args.sentence)
        sub = [sentences[k] for k in chosen]
        model = _load_model(args)
        mats = [None if imp is None else imp.F for imp in
                induce.impacts_from_model(model, sub, layer=args.layer, metric=args.metric, subword=args.subword,
                                          batch_tokens=args.batch_tokens, progress=_progress(args))]
    gold_by_id: dict[str, Any] = {}
    if args.gold is not None:
        gold_by_id = {g.id: g for g in _read(args.gold)}
    items = []
    for sent, F in zip(sub, mats):
        if F is None:
            logger.warning("sentence %s: no impacts (too long for the model); skipped", sent.id)
            continue
        gold = gold_by_id.get(sent.id) if args.gold is not None else None
        heads = gold.heads if gold is not None else None
        items.append((sent.id, F, list(sent.words), heads))
    if not items:
        raise PmaskError("no sentence to draw")
    out = args.output
    if len(items) == 1 and out.suffix.lower() in (".png", ".svg", ".pdf", ".html"):
        sid, F, words, heads = items[0]
        paths = [render_heatmap(F, words, out, gold_heads=heads, title=f"sentence {sid}, layer {args.layer}")]
    else:
        paths = render_heatmaps(items, out, fmt=args.fmt)
    print(f"wrote {len(paths)} heatmap(s): {paths[0]}" + (" …" if len(paths) > 1 else ""))
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from pmask import induce
    from pmask.eval import compare
    from pmask.eval.report import LayerSweep, plot_layer_sweep

    if _is_store(args.source) or args.store is not None:
        sentences, store, corpus = _source(args, layers=args.layers, include_cls=args.faithful)
        layers = list(store.manifest["layers"]["resolved"]) if args.layers == "all" else list(args.layers)
        model_name = (store.manifest.get("model") or {}).get("name")
        per_layer = {layer: list(induce.impacts_from_store(store, sentences, layer=layer, include_cls=args.faithful))
                     for layer in layers}
    else:
        sentences = _read(args.source, args.format, limit=args.limit, max_words=args.max_words)
        model = _load_model(args)
        layers = list(range(model.num_layers + 1)) if args.layers == "all" else list(args.layers)
        model_name = model.name
        per_layer = {layer: [] for layer in layers}
        for item in induce.impacts_by_layer(model, sentences, layers=layers, metric=args.metric,
                                            subword=args.subword, include_cls=args.faithful,
                                            batch_tokens=args.batch_tokens, progress=_progress(args)):
            for k, layer in enumerate(layers):
                per_layer[layer].append(None if item is None else item[k])
    dependency = sentences[0].heads is not None if sentences else True
    decoder = args.decoder or ("eisner" if dependency else "mart")
    task = induce.decoder_task(decoder)
    rows = []
    golds = sentences
    for layer in layers:
        settings = induce.ParseSettings(decoder=decoder, layer=layer, root=args.root, faithful=args.faithful,
                                        seed=args.seed)
        score, golds = induce.score_against_gold(sentences, per_layer[layer], settings, punct=args.punct)
        rows.append((layer, score.to_dict()))
    baselines = {}
    if args.baselines:
        if task == "dependency":
            bl = compare.dependency_baseline_scores(golds, punct=args.punct, root=args.root, seed=args.seed)
        else:
            bl = compare.constituency_baseline_scores(golds, seed=args.seed)
        key = "uas" if task == "dependency" else "f1_sentence"
        baselines = {name: s.to_dict()[key] for name, s in bl.items()}
    keys = ["uas", "uuas"] if task == "dependency" else ["f1_sentence", "f1_corpus"]
    sweep = LayerSweep(rows=rows, metric_keys=keys,
                       meta={"model": model_name, "decoder": decoder, "corpus": str(args.source),
                             **({"root": args.root} if task == "dependency" else {})})
    print(sweep.to_markdown())
    if args.plot:
        title = f"{Path(str(model_name)).name or model_name} · {decoder}" + (
            f" · root {args.root}" if task == "dependency" else "")
        plot_layer_sweep(sweep, args.plot, baselines=baselines or None, title=title)
        print(f"wrote {args.plot}")
    if args.json:
        _write_json(args.json, json.loads(sweep.to_json()))
    if args.csv:
        sweep.write_csv(args.csv)
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from pmask.bench import BenchSettings, run_bench

    settings = BenchSettings(
        model=args.model, layers=args.layers, root=args.root, limit=args.limit, metric=args.metric,
        decoders=[d.strip() for d in args.decoders.split(",") if d.strip()] if args.decoders else None,
        subword=args.subword, tokenize=args.tokenize, punct=args.punct, seed=args.seed, device=args.device,
        dtype=None if args.dtype == "auto" else args.dtype, batch_tokens=args.batch_tokens,
        random_init=args.random_init)
    result = run_bench(args.inputs, args.output, settings, model_loader=lambda: _load_model(args),
                       progress=_progress(args))
    t = result.timing
    print(f"{args.output}: {len(result.treebanks)} treebanks, {len(result.rows)} rows; impacts {t['computed']} "
          f"computed, {t['reused']} reused; {t['total_seconds']:.1f} s")
    return 0


# ---------------------------------------------------------------------------- entry point

def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 ok, 1 failure, 2 usage error)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help/--version exit 0, usage errors 2
        return int(exc.code or 0)
    _setup_logging(args)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        return int(args.func(args) or 0)
    except PmaskError as exc:
        print(f"pmask: error: {exc}", file=sys.stderr)
    except KeyboardInterrupt:
        print("pmask: interrupted (stores keep every finished shard: rerun with --resume)", file=sys.stderr)
        return 130
    except (OSError, ValueError) as exc:
        if args.verbose >= 2:
            raise
        print(f"pmask: error: {exc}", file=sys.stderr)
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, not a traceback
        if args.verbose >= 2:
            raise
        print(f"pmask: error: unexpected {type(exc).__name__}: {exc} (run with -vv for the traceback)",
              file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
