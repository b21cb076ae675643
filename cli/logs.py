"""How the ``pmask`` command speaks: its data on stdout, every message on stderr.

Standard output carries only a command's data product: the file an output ``-`` names
(``-o -``, ``--json -``, ``--csv -``), else the table a command prints (``eval``, ``sweep``,
``info``). Every message goes to stderr as one ``pmask: …`` line: the summary of what was
written (``pud.conllu: 1000 dependency trees``), notes, warnings, errors; progress bars too
(:mod:`pmask.common.progress`). A table whose place an output ``-`` took (``eval --json -``) is
shown on stderr as it is. A command returns an :class:`~pmask.cli.outcome.Outcome` and :func:`deliver` routes it, so
no command prints for itself. What stderr shows is set by -q/-v/-vv:

* ``-q``: errors only (no summary, notes, warnings or progress bars);
* default (and ``-v``): also pmask's summaries and notes (INFO), e.g. that a checkpoint is
  encoder-only, or one line for anything a library said while loading a model that pmask has
  not explained;
* ``-vv``: DEBUG, which includes everything a library said while loading, in full (captured by
  :mod:`pmask.common.library_output`, never printed by the library itself).

Example:
    >>> [logging.getLevelName(level_for(quiet, verbose)) for quiet, verbose in ((True, 0), (False, 0), (False, 2))]
    ['ERROR', 'INFO', 'DEBUG']
"""
from __future__ import annotations

import contextlib
import logging
import sys
from typing import Iterator

from pmask.cli.outcome import Outcome

logger = logging.getLogger("pmask.cli")

# libraries whose own logging is kept at WARNING or above whatever pmask's level (fontTools: matplotlib's
# PDF backend subsets fonts with it, a hundred INFO lines per file; PIL: image plugins at DEBUG)
LIBRARIES = ("transformers", "huggingface_hub", "urllib3", "matplotlib", "filelock", "fontTools", "PIL", "httpx",
             "httpcore", "fsspec", "asyncio")


class StderrHandler(logging.StreamHandler):
    """Writes to the stderr of the moment (like logging's last-resort handler), not the one at set-up; while a
    command checks its settings (:func:`notes_held`) it holds its notes (below WARNING), so that a refused run
    says one line: the refusal."""

    def __init__(self, level: int = logging.NOTSET):
        super().__init__()
        self.setLevel(level)
        self.held: list[logging.LogRecord] | None = None   # None: not holding

    def emit(self, record: logging.LogRecord) -> None:
        if self.held is not None:
            if record.levelno < logging.WARNING:
                self.held.append(record)
                return
            self.flush_held()   # a warning comes after what was said before it
        super().emit(record)

    def flush_held(self) -> None:
        """Say the notes held so far, in order (still holding)."""
        held, self.held = self.held, []
        for record in held or ():
            super().emit(record)

    @property
    def stream(self):  # the current sys.stderr, looked up at every message
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


def level_for(quiet: bool, verbose: int) -> int:
    """The logging level of ``-q`` (ERROR), the default and ``-v`` (INFO), ``-vv`` (DEBUG)."""
    return logging.ERROR if quiet else (logging.DEBUG if verbose >= 2 else logging.INFO)


def setup_logging(quiet: bool = False, verbose: int = 0) -> None:
    """Route every log record at the chosen level to stderr as ``pmask: <message>``.

    Args:
        quiet: ``-q``.
        verbose: how many ``-v``.
    """
    level = level_for(quiet, verbose)
    handler = StderrHandler(level)
    handler.setFormatter(logging.Formatter("pmask: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler], force=True)
    for name in LIBRARIES:
        logging.getLogger(name).setLevel(max(level, logging.WARNING))


@contextlib.contextmanager
def command_logging(quiet: bool = False, verbose: int = 0) -> Iterator[None]:
    """:func:`setup_logging` for one command, then the logging set-up as it was before.

    ``pmask.cli.main`` called in-process (a notebook, a test) thus leaves no ``-q`` level behind
    that would silence the caller's own warnings afterwards.
    """
    root = logging.getLogger()
    saved = root.level, root.handlers[:], {name: logging.getLogger(name).level for name in LIBRARIES}
    root.handlers = []   # set aside, so that setup_logging's force=True does not close them
    setup_logging(quiet, verbose)
    try:
        yield
    finally:
        level, handlers, libraries = saved
        root.setLevel(level)
        root.handlers = handlers
        for name, library_level in libraries.items():
            logging.getLogger(name).setLevel(library_level)


def _handlers() -> list[StderrHandler]:
    return [h for h in logging.getLogger().handlers if isinstance(h, StderrHandler)]


@contextlib.contextmanager
def notes_held() -> Iterator[None]:
    """Hold a command's notes (``read 3 sentences from …``) until its checks have passed
    (:func:`release_notes`, said with the cost line) or it ends: a run refused before then says only its
    refusal (a :class:`~pmask.common.errors.PmaskError`), one line; any other ending says what was held."""
    from pmask.common.errors import PmaskError

    for handler in _handlers():
        handler.held = []
    try:
        yield
    except PmaskError:
        for handler in _handlers():
            handler.held = None   # dropped: the refusal is the one line
        raise
    finally:
        release_notes()


def release_notes() -> None:
    """Say the notes held by :func:`notes_held`, and the next ones as they come (the checks have passed)."""
    for handler in _handlers():
        handler.flush_held()
        handler.held = None


# ---------------------------------------------------------------------------- what a command says

def deliver(outcome: Outcome, stdout_taken: bool) -> None:
    """Print ``outcome``: the table on stdout unless an output ``-`` holds stdout, messages on stderr.

    Args:
        outcome: what the command returned.
        stdout_taken: whether one of the command's outputs is ``-`` (its data is already on stdout,
            and nothing else may go there).
    """
    if outcome.table is not None:
        if not stdout_taken:
            print(outcome.table)
        elif logger.isEnabledFor(logging.INFO):   # shown to the reader, out of the data's way
            print(outcome.table, file=sys.stderr)
    sys.stdout.flush()   # the data before the summary, where both reach one terminal
    if outcome.summary:
        logger.info(outcome.summary)
