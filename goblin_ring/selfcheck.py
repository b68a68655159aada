"""selfcheck.py — `goblin-ring-selfcheck`: prove the installed build works end to end.

Checks the build stamp (done by importing _native), then round-trips one message of every
request template through the C encoder and decoder and reports the encoded sizes.
"""

from __future__ import annotations

import sys

from . import __version__, _native
from ._native import lib


def main() -> int:
    templates = sorted((number, name) for name in dir(lib) if name.startswith("GR_T_")
                       for number in [getattr(lib, name)] if number == 4 or number >= 20)
    print(f"goblin-ring {__version__}, SBE schema {_native.SCHEMA_ID} v{_native.SCHEMA_VERSION}")
    failures = 0
    for number, name in templates:
        encoded = _native.encode_request(number, request_id=number, key=b"key", arg1=b"a",
                                         arg2=b"b", items=[b"v1", b"v2"])
        decoded = _native.decode_request(encoded)
        ok = decoded["template_id"] == number and decoded["request_id"] == number
        failures += not ok
        print(f"  {name[5:].lower():<14} template {number:>3}  {len(encoded):>3} bytes  {'ok' if ok else 'FAILED'}")
    print("selfcheck passed" if not failures else f"selfcheck FAILED ({failures})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
