"""native/'s layers hold: no file includes a layer above its own, generated/ is included by the
ring codec alone, and no object calls a function defined in a layer above it (so there is no
call cycle between layers), and exec/ and persist/ name no command (events, effects and
blocking are said by rows and handlers). native/check_layers.py does the work and prints the rules."""

import subprocess
import sys
from pathlib import Path

CHECKER = Path(__file__).resolve().parent.parent / "native" / "check_layers.py"


def test_no_file_includes_or_calls_a_layer_above_its_own():
    result = subprocess.run([sys.executable, str(CHECKER)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 layer violations" in result.stdout
