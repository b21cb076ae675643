"""Issue 33, item 13 (f2e45ad had no test): ``eval --details`` widens its key column for long relation
subtypes (``nmod:unmarked``, ``compound:redup``) instead of pushing their rows out of line."""
from __future__ import annotations

import re

from pmask.cli import main

# (word, head, relation): relations of 13 and 14 characters next to short ones
ROWS = [("She", 2, "nsubj"), ("left", 0, "root"), ("home", 2, "nmod:unmarked"), ("very", 5, "advmod"),
        ("very", 2, "compound:redup"), (".", 2, "punct")]


def test_details_rows_stay_aligned_with_long_subtypes(tmp_path, capsys):
    lines = [f"{i}\t{w}\t{w.lower()}\tX\t_\t_\t{h}\t{rel}\t_\t_" for i, (w, h, rel) in enumerate(ROWS, start=1)]
    gold = tmp_path / "gold.conllu"
    gold.write_text("# sent_id = 1\n# text = She left home very very .\n" + "\n".join(lines) + "\n\n",
                    encoding="utf-8")
    assert main(["eval", str(gold), "--gold", str(gold), "--details", "--subtypes", "-q"]) == 0
    out = capsys.readouterr().out
    section = out.split("by gold relation", 1)[1].split("\n\n", 1)[0]
    rows = [line for line in section.splitlines() if re.search(r"\d+/\d+", line)]
    keys = {line.split()[0] for line in rows}
    assert {"nmod:unmarked", "compound:redup", "nsubj", "punct"} <= keys, section
    assert len({line.index("/") for line in rows}) == 1, section        # one column of counts
    assert len({len(line) for line in rows}) == 1, section              # and of accuracies
