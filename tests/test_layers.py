"""native/'s layers hold: no file includes a layer above its own, generated/ is included by the
ring codec alone, and no object calls a function defined in a layer above it (so there is no
call cycle between layers), and exec/ and persist/ name no command (events, effects and
blocking are said by rows and handlers). native/check_layers.py does the work and prints the rules.
In the Python package, only the modules goblin_ring/_native.py lists reach the extension's `lib`."""

import re
import subprocess
import sys
from pathlib import Path

CHECKER = Path(__file__).resolve().parent.parent / "native" / "check_layers.py"


def test_no_file_includes_or_calls_a_layer_above_its_own():
    result = subprocess.run([sys.executable, str(CHECKER)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 layer violations" in result.stdout


PACKAGE = CHECKER.parent.parent / "goblin_ring"
LIB_USE = re.compile(r"_native\.(?:lib|ffi)\b|from \.+_native import [^\n]*\b(?:lib|ffi)\b|_goblin_native")


def test_only_the_modules_native_py_lists_reach_the_extension_past_its_wrappers():
    """goblin_ring/_native.py wraps the extension; its docstring lists every other module that
    calls `lib` or `ffi` directly, and why. A new one must be added there (or go through a
    wrapper), so the list stays the truth."""
    listed = set(re.findall(r"^  ((?:[a-z_]+/)?[a-z_]+\.py) ", (PACKAGE / "_native.py").read_text(), re.M))
    reaching = {path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py")
                if path.name != "_native.py" and LIB_USE.search(path.read_text())}
    assert listed, "_native.py's docstring lists no module"
    assert reaching == listed
