"""The command line's one validation step, run before anything is read or loaded.

:func:`check_command` checks every output a command will write (:func:`outputs_of` says which, and
whether each is a file or a folder the command creates) with :func:`pmask.common.files.check_outputs`,
and the settings that can be checked without a model (layer 0 is refused where trees would be
decoded from it). The library functions behind the commands run the same checks on their own
outputs, so a script that calls them directly gets the same refusals.

Example:
    >>> import argparse
    >>> [o.folder for o in outputs_of(argparse.Namespace(command="impact", output="store/"))]
    [True]
"""
from __future__ import annotations

import argparse
import contextlib
from pathlib import Path
from typing import Any

from pmask.cli.args import INPUT_ARGS, OUTPUT_ARGS, reads_impacts
from pmask.common.errors import OutputError, PmaskError
from pmask.common.files import Output, check_output, check_outputs, is_stdout
from pmask.corpora.provenance import meta_path
from pmask.eval.heatmap import HEATMAP_FORMATS
from pmask.eval.output import FIGURE_FORMATS
from pmask.perturb.source import is_store
from pmask.perturb.store import read_manifest
from pmask.trees.induce import check_trees_file, refuse_layer_zero

#: Commands whose ``--store`` is a cache they fill (a folder output too), not only an input.
CACHE_STORE_COMMANDS = ("parse", "sweep")


def _suffixes(formats: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(f".{f}" for f in formats)


def heatmap_output(path: Any) -> Output:
    """``heatmap -o``: a folder when it is one or has no suffix, else one file of a heatmap type."""
    path = Path(path)
    if path.is_dir() or not path.suffix:
        return Output(path, folder=True)
    return Output(path, suffixes=_suffixes(HEATMAP_FORMATS))


def outputs_of(args: argparse.Namespace) -> list[Output]:
    """Every output ``args.command`` will write, as :class:`~pmask.common.files.Output` checks."""
    command = args.command
    get = lambda name: getattr(args, name, None)   # noqa: E731 - a short local reader
    if command in ("impact", "bench"):
        return [Output(args.output, folder=True)]
    if command == "parse":
        side = [] if is_stdout(args.output) else [Output(meta_path(args.output))]
        return [Output(args.output), *side]
    if command == "heatmap":
        return [heatmap_output(args.output)]
    if command == "info":   # reads only
        return []
    if command == "export":
        return [Output(args.output, folder=args.format != "json")]
    files = [Output(path) for path in map(get, ("output", "json", "csv")) if path is not None]
    if get("plot") is not None:
        files.append(Output(args.plot, suffixes=_suffixes(FIGURE_FORMATS)))
    return files


def check_command(args: argparse.Namespace) -> None:
    """Refuse, in one line, any output that cannot be written or would overwrite an input, and any
    setting that is wrong whatever the model; nothing is read, loaded or written before this.

    Raises:
        OutputError: an output that cannot be written (missing folder, a folder in the way, a file
            type the command cannot write, no permission) or that is one of the inputs.
        SettingError: a setting refused before any model work (layer 0 for decoding).
    """
    inputs: list[Any] = []
    for name in INPUT_ARGS:
        value = getattr(args, name, None)
        inputs.extend(value if isinstance(value, list) else [value])
    check_outputs(outputs_of(args), inputs)
    _refuse_two_on_stdout(args)
    store = getattr(args, "store", None)
    if args.command in CACHE_STORE_COMMANDS and store is not None and not _complete_store(store):
        check_output(Output(store, folder=True))   # a finished one is only read (one with work left: fill_stores)
    probes = _probes(args)
    if args.command == "parse" and args.decoder is not None:   # else the input's task decides (after reading it)
        check_trees_file(args.output, args.decoder)
    if args.command == "parse" and reads_impacts(args):
        refuse_layer_zero([args.layer], probe=probes[0])
    elif args.command in ("sweep", "bench"):
        for name in probes:
            refuse_layer_zero(args.layers, "layers", name)


def _complete_store(path: Any) -> bool:
    """A finished impact store: read as a cache it needs nothing written (a read-only one serves too)."""
    if not is_store(path):
        return False
    with contextlib.suppress(PmaskError):   # an unreadable store is reported when it is opened
        return bool(read_manifest(path).get("complete"))
    return False


def _refuse_two_on_stdout(args: argparse.Namespace) -> None:
    """Standard output holds one output at most (``eval --json - --csv -`` would interleave two files)."""
    named = {name: getattr(args, name, None) for name in OUTPUT_ARGS}   # info's --json is a switch, not a path
    flags = [{"output": "-o"}.get(name, f"--{name}") for name, value in named.items()
             if isinstance(value, (str, Path)) and is_stdout(value)]
    if len(flags) > 1:
        raise OutputError(f"-: {' and '.join(flags)} both name standard output; one output at most can go there")


def _probes(args: argparse.Namespace) -> list[str]:
    """The probes a command decodes: as given, a store SOURCE's own (its manifest), else pair."""
    probe = getattr(args, "probe", None)
    if isinstance(probe, list):
        return probe
    source = getattr(args, "source", None)
    if probe is None and source is not None and is_store(source):
        with contextlib.suppress(PmaskError):   # an unreadable store is reported when it is opened
            return [read_manifest(source).get("probe") or "pair"]
    return [probe or "pair"]
