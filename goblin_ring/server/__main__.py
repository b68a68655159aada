"""`python -m goblin_ring.server` and the `goblin-ring-server` console script."""

from __future__ import annotations

import sys

from .config import ConfigError, config_from_args
from .loop import run


def main(argv: list[str] | None = None) -> int:
    """Exit 2 with one line on stderr for anything the user can fix (flags, runtime dir, a
    port in use); the server's own exit is 0."""
    try:
        return run(config_from_args(argv))
    except ConfigError as error:
        print(f"goblin-ring-server: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
