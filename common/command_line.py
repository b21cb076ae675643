"""How a ``pmask`` command line is spelled from settings given as data, for the messages that tell
a user what to run (an unfinished store's ``pmask impact … --resume``).

The library says *which* settings (setting name -> value, e.g. ``{"max_words": 30}``); this module
alone turns them into flags, by the command line's own rule: ``--`` and the name with dashes
(``--max-words``), ``-o`` for ``output``, a switch for True, a list joined by commas, and
``--flag=value`` where the value starts with a dash (``--layers=-2``: not read as a flag).
``tests/cli`` parses what it spells with the real parser and gets the settings back.

Example:
    >>> spell_command("impact", {"input": "c.txt", "layers": [-2], "output": "my store", "resume": True})
    "pmask impact c.txt --layers=-2 -o 'my store' --resume"
"""
from __future__ import annotations

import shlex
from typing import Any, Mapping

#: Positional arguments of a command, in order (their names in the settings).
POSITIONAL = ("input", "source", "store")
#: Settings whose flag is short.
SHORT_FLAGS = {"output": "-o"}


def flag_of(name: str) -> str:
    """The flag of setting ``name``: ``max_words`` -> ``--max-words``, ``output`` -> ``-o``."""
    return SHORT_FLAGS.get(name, "--" + name.replace("_", "-"))


def spell_command(command: str, settings: Mapping[str, Any]) -> str:
    """``pmask COMMAND …`` with ``settings`` in their order, quoted for a POSIX shell.

    Args:
        command: the ``pmask`` command (``impact``).
        settings: setting name -> value; a name of :data:`POSITIONAL` is written bare, True as a switch,
            a list or tuple joined by commas; None and False are left out.

    Returns:
        One line that runs the command.
    """
    words = ["pmask", command]
    for name, value in settings.items():
        if value is None or value is False:
            continue
        if value is True:
            words.append(flag_of(name))
            continue
        text = ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
        if name in POSITIONAL:
            words.append(text)
        else:
            words += [f"{flag_of(name)}={text}"] if text.startswith("-") else [flag_of(name), text]
    return shlex.join(words)
