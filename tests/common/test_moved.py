"""Old module paths keep working for one release, with a DeprecationWarning naming the new one."""
import importlib
import subprocess
import sys

import pytest

from pmask.common.moved import MOVED


@pytest.mark.parametrize("old", ["pmask.sweep", "pmask.source", "pmask.testing", "pmask.induce", "pmask.maps"])
def test_old_path_warns_and_gives_the_new_module(old):
    code = (f"import warnings, importlib; warnings.simplefilter('error', DeprecationWarning)\n"
            f"try:\n    importlib.import_module({old!r})\nexcept DeprecationWarning as w:\n    print(w)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout
    assert MOVED[old] in out and "0.3" in out
    with pytest.warns(DeprecationWarning):
        sys.modules.pop(old, None)
        module = importlib.import_module(old)
    assert module is importlib.import_module(MOVED[old])


def test_every_new_path_exists():
    for new in MOVED.values():
        importlib.import_module(new)
