"""Progress bars are drawn only where someone watches: a terminal (or a notebook), never a log file."""
from __future__ import annotations

import io
import sys

from pmask.common.progress import progress_bar, watched


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_bars_only_on_a_terminal(monkeypatch):
    assert not watched(io.StringIO()) and watched(_Terminal())
    log = io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    with progress_bar(total=3, desc="work", file=log) as bar:
        bar.update(3)
    assert bar.disable and log.getvalue() == ""
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    with progress_bar(total=3, desc="work", file=term) as bar:
        bar.update(3)
    assert "work" in term.getvalue()
    with progress_bar(total=3, desc="quiet", enabled=False, file=term) as bar:
        bar.update(3)
    assert "quiet" not in term.getvalue()
    assert list(progress_bar(["a", "b"], enabled=False)) == ["a", "b"]
