"""Progress bars, only where someone watches them: every bar pmask draws is made here.

A bar is drawn when it is asked for and stderr is a terminal (or the code runs in a Jupyter
kernel, where tqdm draws a widget). Redirected to a file, a bar would leave a line per update
(carriage returns are no line ends there), so it is not drawn at all; the summary lines that
commands write to stderr say what was done.

Example:
    >>> with progress_bar(total=3, desc="demo", enabled=False) as bar:
    ...     bar.update(3)
    >>> bar.disable
    True
"""
from __future__ import annotations

import sys
from typing import Any, Iterable, TextIO

__all__ = ["progress_bar", "watched"]


def watched(stream: TextIO | None = None) -> bool:
    """Whether ``stream`` (default: the current stderr) is seen live: a terminal or a Jupyter kernel."""
    stream = sys.stderr if stream is None else stream
    try:
        if stream is not None and stream.isatty():
            return True
    except (AttributeError, ValueError):   # no isatty, or a closed stream
        return False
    return _in_kernel()


def _in_kernel() -> bool:
    """Whether this process is a running Jupyter kernel (importing ipykernel is not enough)."""
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    return shell is not None and getattr(shell, "kernel", None) is not None


def progress_bar(iterable: Iterable[Any] | None = None, *, total: float | None = None, desc: str | None = None,
                 unit: str = "it", enabled: bool = True, **options: Any) -> Any:
    """A tqdm bar on stderr, disabled unless ``enabled`` and :func:`watched`.

    Args:
        iterable: steps to wrap (iterating the bar yields them), or None to call ``update``.
        total: expected number of steps (None: unknown).
        desc: the bar's label.
        unit: what one step is.
        enabled: the caller's wish (e.g. False under ``-q``).
        options: any other ``tqdm`` argument (``position``, ``leave``, ...).

    Returns:
        A ``tqdm.auto.tqdm``; a disabled one accepts every call and draws nothing.
    """
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, unit=unit, disable=not (enabled and watched()), **options)
