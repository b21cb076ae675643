"""Capturing what a library says while pmask calls it, so that pmask owns its output.

Libraries such as transformers print load reports, log warnings through their own handlers
(bypassing pmask's verbosity flags) and raise Python warnings. :func:`capture_library_output`
collects all of that during one call; :func:`relay` then logs every captured message in full at
DEBUG level (``-vv``) and, at INFO level (the default verbosity, silent under ``-q``), one line
for what the caller has not already explained in its own words.

Example:
    >>> import logging
    >>> with capture_library_output(["some.library"]) as captured:
    ...     logging.getLogger("some.library").warning("a \\x1b[1mbold\\x1b[0m report")
    >>> [m.text for m in captured.messages]
    ['a bold report']
"""
from __future__ import annotations

import contextlib
import io
import logging
import re
import warnings
from dataclasses import dataclass, field
from typing import Callable, Iterator, Sequence

__all__ = ["CapturedMessage", "CapturedOutput", "capture_library_output", "relay", "strip_escapes"]

_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# warnings meant for developers of the calling code, not for pmask's users
_DEVELOPER_WARNINGS = (DeprecationWarning, PendingDeprecationWarning, FutureWarning)


def strip_escapes(text: str) -> str:
    """``text`` without terminal escape codes (colours, bold) and carriage-return redraws.

    Example:
        >>> strip_escapes("\\x1b[1mLOAD REPORT\\x1b[0m")
        'LOAD REPORT'
    """
    lines = [line.rsplit("\r", 1)[-1] for line in _ESCAPES.sub("", text).split("\n")]
    return "\n".join(lines).strip()


@dataclass(frozen=True)
class CapturedMessage:
    """One thing a library said: ``source`` is a logger name, ``"warnings"``, ``"stdout"`` or ``"stderr"``."""

    source: str
    level: int
    text: str
    for_developers: bool = False   # a deprecation-style Python warning

    def first_line(self, width: int = 160) -> str:
        line = next((s.strip() for s in self.text.splitlines() if s.strip()), "")
        return line if len(line) <= width else line[:width - 1] + "…"


@dataclass
class CapturedOutput:
    """Everything captured by one :func:`capture_library_output` block, in order per channel."""

    messages: list[CapturedMessage] = field(default_factory=list)


class _Collector(logging.Handler):
    def __init__(self, out: CapturedOutput):
        super().__init__(logging.NOTSET)
        self.out = out

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = strip_escapes(record.getMessage())
        except Exception:  # noqa: BLE001 - a malformed library record must not break the call
            text = str(record.msg)
        if text:
            self.out.messages.append(CapturedMessage(record.name, record.levelno, text))


@contextlib.contextmanager
def _loggers_into(names: Sequence[str], handler: logging.Handler) -> Iterator[None]:
    """Route the named loggers (and their children) to ``handler`` only, restoring them afterwards."""
    saved = []
    for name in names:
        lib = logging.getLogger(name)
        saved.append((lib, list(lib.handlers), lib.propagate))
        lib.handlers = [handler]
        lib.propagate = False
    try:
        yield
    finally:
        for lib, handlers, propagate in saved:
            lib.handlers = handlers   # also drops any handler the library added meanwhile
            lib.propagate = propagate


@contextlib.contextmanager
def capture_library_output(loggers: Sequence[str] = ("transformers", "huggingface_hub")
                           ) -> Iterator[CapturedOutput]:
    """Collect the named libraries' log records, Python warnings and printed text during the block.

    Nothing reaches the terminal; levels and warning filters are left as they are (so a library
    still decides how much it says, and warnings turned into errors still raise). Import the
    libraries before entering: a library that sets up its logging inside the block would keep a
    handler bound to the captured streams.

    Args:
        loggers: names of the library loggers to capture (children included).

    Returns:
        A :class:`CapturedOutput`, filled when the block ends (also when it raises).
    """
    out = CapturedOutput()
    stdout, stderr = io.StringIO(), io.StringIO()
    with warnings.catch_warnings(record=True) as caught:
        try:
            with _loggers_into(loggers, _Collector(out)), contextlib.redirect_stdout(stdout), \
                    contextlib.redirect_stderr(stderr):
                yield out
        finally:
            for w in caught:
                out.messages.append(CapturedMessage(
                    "warnings", logging.WARNING, f"{w.category.__name__}: {strip_escapes(str(w.message))}",
                    for_developers=issubclass(w.category, _DEVELOPER_WARNINGS)))
            for source, stream in (("stdout", stdout), ("stderr", stderr)):
                text = strip_escapes(stream.getvalue())
                if text:
                    out.messages.append(CapturedMessage(source, logging.INFO, text))


def relay(captured: CapturedOutput, logger: logging.Logger, what: str,
          explained: Callable[[CapturedMessage], bool] = lambda message: False) -> list[CapturedMessage]:
    """Log captured messages as pmask's own: all in full at DEBUG, the rest summarised in one INFO line.

    Args:
        captured: from :func:`capture_library_output`.
        logger: pmask's logger to write to.
        what: what the library was doing, for the messages (e.g. ``"loading model 'x'"``).
        explained: True for a message the caller has already turned into its own note.

    Returns:
        The messages summarised at INFO level (neither explained nor meant for developers).
    """
    for message in captured.messages:
        logger.debug("%s: %s said:\n%s", what, message.source, message.text)
    news = [m for m in captured.messages if not m.for_developers and not explained(m)]
    if news:
        more = f" (and {len(news) - 1} more)" if len(news) > 1 else ""
        logger.info("%s: %s said: %s%s; -vv shows it in full", what, news[0].source.split(".")[0],
                    news[0].first_line(), more)
    return news
