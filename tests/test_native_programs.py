"""The standalone C test programs in native/tests/ pass (built -O2 here; CI also runs them
under AddressSanitizer and UndefinedBehaviorSanitizer via run_c_tests.py --sanitize)."""

import importlib.util
from pathlib import Path

import pytest

RUNNER_PATH = Path(__file__).resolve().parent.parent / "native" / "tests" / "run_c_tests.py"
spec = importlib.util.spec_from_file_location("run_c_tests", RUNNER_PATH)
run_c_tests = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run_c_tests)


@pytest.mark.parametrize("name", sorted(run_c_tests.PROGRAMS))
def test_c_program_passes(name):
    result = run_c_tests.run(name, sanitize=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " passed, 0 failed" in result.stdout
