"""The ``pmask`` command (placeholder until the CLI lands)."""
from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    print("pmask: command line not implemented yet")
    return 1
