"""Capturing a library's chatter: log records, warnings and prints, relayed as pmask's own lines."""
from __future__ import annotations

import logging
import sys
import warnings

from pmask.common.library_output import capture_library_output, relay, strip_escapes


def test_everything_a_library_says_is_captured_and_its_logger_restored(capfd):
    lib = logging.getLogger("fake_library")
    own = logging.StreamHandler(sys.stderr)
    lib.addHandler(own)
    lib.propagate = False
    try:
        with capture_library_output(["fake_library"]) as captured:
            logging.getLogger("fake_library.loading").warning("\x1b[1mLOAD REPORT\x1b[0m\nkey | MISSING")
            warnings.warn("odd tokenizer", UserWarning, stacklevel=1)
            warnings.warn("old argument", FutureWarning, stacklevel=1)
            print("printed report")
            print("progress 50%\rprogress 100%", file=sys.stderr)
        assert lib.handlers == [own] and lib.propagate is False
    finally:
        lib.removeHandler(own)
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    texts = {m.source: m.text for m in captured.messages}
    assert texts["fake_library.loading"] == "LOAD REPORT\nkey | MISSING"
    assert texts["stdout"] == "printed report" and texts["stderr"] == "progress 100%"
    assert [m.for_developers for m in captured.messages if m.source == "warnings"] == [False, True]


def test_relay_logs_all_at_debug_and_one_info_line_for_the_unexplained(caplog):
    with capture_library_output(["fake_library"]) as captured:
        logging.getLogger("fake_library").warning("weights cls.bias MISSING")
        logging.getLogger("fake_library").warning("something else\nsecond line")
        logging.getLogger("fake_library").warning("and more")
        warnings.warn("old argument", DeprecationWarning, stacklevel=1)
    logger = logging.getLogger("pmask.test")
    with caplog.at_level(logging.DEBUG, logger="pmask.test"):
        news = relay(captured, logger, "loading x", explained=lambda m: "cls.bias" in m.text)
    assert [m.text for m in news] == ["something else\nsecond line", "and more"]
    infos = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert infos == ["loading x: fake_library said: something else (and 1 more); -vv shows it in full"]
    assert sum(r.levelno == logging.DEBUG for r in caplog.records) == 4


def test_strip_escapes():
    assert strip_escapes("\x1b[31mred\x1b[0m\nbar 1%\rbar 100%\n") == "red\nbar 100%"
