"""Which pmask files a reader crosses from ``pmask parse`` to the model: run ``pmask parse`` under
``sys.setprofile`` and list, in first-call order, the distinct pmask source files whose functions
run from ``main()`` until the first model forward (the first ``forward`` of a torch module), and
the string look-ups (``importlib.import_module`` calls made by pmask code) on the way.

    python tools/call_path.py                       # builds a tiny random model in a temporary folder
    python tools/call_path.py --model DIR --corpus tests/data/mini.conllu

Module bodies (code run at import) and class bodies are not counted: only functions that run.
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import sys
import tempfile
from pathlib import Path
from types import FrameType
from typing import Any

HERE = Path(__file__).resolve().parents[1]


class FirstForward(BaseException):   # not an error pmask would report: it ends main()
    """Raised from the profiler at the first model forward: the walk ends there."""


def walk(argv: list[str]) -> tuple[list[str], list[str]]:
    """``(files, look-ups)``: the pmask files whose functions ran, in first-call order, and the
    ``importlib.import_module`` arguments pmask code passed, until the first model forward."""
    import pmask
    from pmask.cli import main

    package = Path(pmask.__file__).resolve().parent
    files: list[str] = []
    lookups: list[str] = []
    done: list[bool] = []   # set at the first forward: what runs while unwinding is not on the way

    def pmask_file(frame: FrameType | None) -> str | None:
        if frame is None:
            return None
        path = Path(frame.f_code.co_filename)
        if not path.is_absolute():   # "<frozen importlib._bootstrap>" and the like: not a file
            return None
        try:
            return str(path.resolve().relative_to(package))
        except (ValueError, OSError):
            return None

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or done:
            return
        code = frame.f_code
        if code.co_name == "forward" and ("torch" in code.co_filename or "transformers" in code.co_filename):
            done.append(True)
            raise FirstForward   # a torch module's forward: the model runs
        if code is importlib.import_module.__code__ and pmask_file(frame.f_back):
            lookups.append(str(frame.f_locals.get("name")))
        if not code.co_flags & inspect.CO_OPTIMIZED:   # a module or class body, not a function
            return
        name = pmask_file(frame)
        if name is not None and name not in files:
            files.append(name)

    sys.setprofile(profile)
    try:
        main(argv)
    except FirstForward:
        pass
    finally:
        sys.setprofile(None)
    return files, lookups


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="model directory (default: a tiny random BERT, built now)")
    parser.add_argument("--corpus", default=str(HERE / "tests" / "data" / "mini.conllu"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model
        if model is None:
            from pmask.perturb.testing import make_tiny_bert

            model = str(make_tiny_bert(Path(tmp) / "tiny"))
        files, lookups = walk(["parse", args.corpus, "--model", model, "-q", "-o", str(Path(tmp) / "out.conllu")])
    print(f"{len(files)} pmask files crossed from main() to the first model forward:")
    for k, name in enumerate(files, start=1):
        print(f"  {k:2d}. {name}")
    print(f"{len(lookups)} string look-ups (importlib.import_module from pmask code): {', '.join(lookups) or '-'}")


if __name__ == "__main__":
    run()
