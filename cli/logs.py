"""How the ``pmask`` command logs: one ``pmask: …`` line per message on stderr, its level set by -q/-v/-vv.

* ``-q``: warnings and errors only (no notes, no progress bars);
* default (and ``-v``): also pmask's notes (INFO), e.g. that a checkpoint is encoder-only, or
  one line for anything a library said while loading a model that pmask has not explained;
* ``-vv``: DEBUG, which includes everything a library said while loading, in full (captured by
  :mod:`pmask.common.library_output`, never printed by the library itself).

Example:
    >>> [logging.getLevelName(level_for(quiet, verbose)) for quiet, verbose in ((True, 0), (False, 0), (False, 2))]
    ['WARNING', 'INFO', 'DEBUG']
"""
from __future__ import annotations

import logging
import sys

# libraries whose own logging is kept at WARNING or above whatever pmask's level
LIBRARIES = ("transformers", "huggingface_hub", "urllib3", "matplotlib", "filelock")


class StderrHandler(logging.StreamHandler):
    """Writes to the stderr of the moment (like logging's last-resort handler), not the one at set-up."""

    def __init__(self, level: int = logging.NOTSET):
        super().__init__()
        self.setLevel(level)

    @property
    def stream(self):  # the current sys.stderr, looked up at every message
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


def level_for(quiet: bool, verbose: int) -> int:
    """The logging level of ``-q`` (WARNING), the default and ``-v`` (INFO), ``-vv`` (DEBUG)."""
    return logging.WARNING if quiet else (logging.DEBUG if verbose >= 2 else logging.INFO)


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
